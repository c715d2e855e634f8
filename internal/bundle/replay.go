package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// ErrOffline is the error of every network connection a replay would open;
// what a replay has no recorded answer for is a *cluster.NotRecordedError
// naming the request, which unwraps to it.
var ErrOffline = cluster.ErrNotRecorded

// Bundle is an opened, verified bundle, ready to replay.
type Bundle struct {
	Manifest  Manifest
	entries   map[string][]byte
	exchanges map[string]*Exchange
	host      host
}

func newBundle(m Manifest, entries map[string][]byte) (*Bundle, error) {
	b := &Bundle{Manifest: m, entries: entries, exchanges: map[string]*Exchange{}, host: newHost()}
	var list []*Exchange
	if err := json.Unmarshal(entries[apiEntry], &list); err != nil {
		return nil, fmt.Errorf("bundle: %s is not valid: %w", apiEntry, err)
	}
	for _, e := range list {
		b.exchanges[e.key()] = e
	}
	if err := json.Unmarshal(entries[hostEntry], &b.host); err != nil {
		return nil, fmt.Errorf("bundle: %s is not valid: %w", hostEntry, err)
	}
	return b, nil
}

// File returns the named entry (ValuesEntry, ChartEntry, WaiversEntry) and
// whether the bundle has it.
func (b *Bundle) File(name string) ([]byte, bool) {
	v, ok := b.entries[name]
	return v, ok
}

// RESTConfig returns a REST config for the recorded server whose transport
// answers from the bundle: a request never recorded fails with an error
// naming it, and nothing is dialled.
func (b *Bundle) RESTConfig() *rest.Config {
	return &rest.Config{Host: b.Manifest.Server, Transport: replayTransport{b}}
}

type replayTransport struct{ b *Bundle }

func (t replayTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	k, err := requestKey(req)
	if err != nil {
		return nil, err
	}
	e, ok := t.b.exchanges[k.key()]
	if !ok {
		return nil, &cluster.NotRecordedError{Request: req.Method + " " + k.URI}
	}
	if e.Status == 0 {
		return nil, errors.New(e.Err)
	}
	var body io.Reader = bytes.NewReader(e.Body)
	if e.Err != "" {
		body = io.MultiReader(body, errReader{errors.New(e.Err)})
	}
	h := http.Header{}
	if e.ContentType != "" {
		h.Set("Content-Type", e.ContentType)
	}
	for _, w := range e.Warnings {
		h.Add("Warning", w)
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status)), StatusCode: e.Status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(body), ContentLength: -1, Request: req,
	}, nil
}

// Getenv answers as the recorded run's environment did ("" for a variable
// it never read).
func (b *Bundle) Getenv(k string) string { return b.host.Env[k] }

// LookPath answers as the recorded run's PATH lookups did.
func (b *Bundle) LookPath(name string) (string, error) {
	o, ok := b.host.LookPath[name]
	if !ok {
		return "", &cluster.NotRecordedError{Request: "looking up " + name + " on PATH"}
	}
	return o.Out, o.err()
}

// Command answers with the recorded output of the same program and
// arguments; it runs nothing.
func (b *Bundle) Command(_ context.Context, name string, args ...string) ([]byte, error) {
	o, ok := b.host.Commands[commandKey(name, args)]
	if !ok {
		return nil, &cluster.NotRecordedError{Request: "running " + commandKey(name, args)}
	}
	return []byte(o.Out), o.err()
}

// Probe answers with the recorded result of the probe (probe.Tape); do is
// never called.
func (b *Bundle) Probe(key string, _ func() (probe.Result, error)) (probe.Result, error) {
	rec, ok := b.host.Probes[key]
	if !ok {
		return probe.Result{}, &cluster.NotRecordedError{Request: "probe " + key}
	}
	res := probe.Result{HTTP: rec.HTTP, Resolves: rec.Resolves, Registry: rec.Registry}
	if t := rec.TLS; t != nil {
		res.TLS = &probe.TLSResult{Leaf: t.Leaf, Via: t.Via, Expired: t.Expired, HostErr: textErr(t.HostErr), ChainErr: textErr(t.ChainErr)}
	}
	var err error
	if rec.Err != "" {
		err = errors.New(rec.Err)
	}
	return res, err
}

func textErr(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

// Time is when the recorded run started: the replay's clock for the probes
// (certificate expiry).
func (b *Bundle) Time() time.Time { return b.Manifest.Time }
