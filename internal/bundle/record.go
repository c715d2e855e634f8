package bundle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// Exchange is one recorded API request and its answer.
type Exchange struct {
	// Method, URI (path and query, without the timeout parameter), Accept
	// and BodySHA (sha256 hex of the request body, "" for none) identify
	// the request.
	Method string `json:"method"`
	URI    string `json:"uri"`
	Accept string `json:"accept,omitempty"`
	// A dry run is identified by its replay key (cluster.ReplayKeyHeader)
	// in place of its body's digest.
	BodySHA string `json:"bodySHA256,omitempty"`
	// Status, ContentType, Warnings (the Warning headers: an admission
	// plugin's warnings) and Body are the answer; Err is the transport
	// error when there was no answer.
	Status      int      `json:"status,omitempty"`
	ContentType string   `json:"contentType,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
	Body        []byte   `json:"body,omitempty"`
	Err         string   `json:"error,omitempty"`
}

func (e *Exchange) key() string {
	return e.Method + " " + e.URI + " " + e.Accept + " " + e.BodySHA
}

// outcome is a recorded call's answer: its output or its error.
type outcome struct {
	Out string `json:"out,omitempty"`
	Err string `json:"error,omitempty"`
}

// tlsRecord is a probe.TLSResult with its errors as text.
type tlsRecord struct {
	Leaf     *probe.Cert `json:"leaf,omitempty"`
	Via      string      `json:"via,omitempty"`
	Expired  bool        `json:"expired,omitempty"`
	HostErr  string      `json:"hostError,omitempty"`
	ChainErr string      `json:"chainError,omitempty"`
}

type probeRecord struct {
	TLS      *tlsRecord            `json:"tls,omitempty"`
	HTTP     *probe.HTTPResult     `json:"http,omitempty"`
	Resolves bool                  `json:"resolves,omitempty"`
	Registry *probe.RegistryAnswer `json:"registry,omitempty"`
	Err      string                `json:"error,omitempty"`
}

// host is host.json: what the checks read of the machine and the network.
type host struct {
	Env      map[string]string      `json:"env"`
	LookPath map[string]outcome     `json:"lookPath"`
	Commands map[string]outcome     `json:"commands"`
	Probes   map[string]probeRecord `json:"probes"`
}

func newHost() host {
	return host{Env: map[string]string{}, LookPath: map[string]outcome{}, Commands: map[string]outcome{}, Probes: map[string]probeRecord{}}
}

// Recorder records one run: wrap the run's REST transport with Wrap, its
// host hooks with Getenv, LookPath and Command, and set it as the prober's
// Tape; then Write the bundle. It is safe for concurrent use.
type Recorder struct {
	mu        sync.Mutex
	exchanges map[string]*Exchange
	host      host
	hooks     map[string]*HookJob
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{exchanges: map[string]*Exchange{}, host: newHost(), hooks: map[string]*HookJob{}}
}

// requestKey identifies r; it consumes and restores r's body.
func requestKey(r *http.Request) (*Exchange, error) {
	e := &Exchange{Method: r.Method, URI: uriOf(r.URL), Accept: r.Header.Get("Accept")}
	if k := r.Header.Get(cluster.ReplayKeyHeader); k != "" {
		e.BodySHA = "replay-key:" + k
		return e, nil
	}
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		if len(b) > 0 {
			sum := sha256.Sum256(b)
			e.BodySHA = hex.EncodeToString(sum[:])
		}
	}
	return e, nil
}

// uriOf is the path and query of u without client-go's timeout parameter
// (the per-request bound, not part of what is asked), query keys sorted.
func uriOf(u *url.URL) string {
	q := u.Query()
	q.Del("timeout")
	s := u.EscapedPath()
	if len(q) > 0 {
		s += "?" + q.Encode()
	}
	return s
}

// Wrap returns rt recording every exchange (for rest.Config.Wrap).
func (r *Recorder) Wrap(rt http.RoundTripper) http.RoundTripper {
	return recordingTransport{next: rt, r: r}
}

type recordingTransport struct {
	next http.RoundTripper
	r    *Recorder
}

func (t recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	e, err := requestKey(req)
	if err != nil {
		return nil, err
	}
	if req.Header.Get(cluster.ReplayKeyHeader) != "" {
		// The key is the bundle's: the API server never sees it.
		req = req.Clone(req.Context())
		req.Header.Del(cluster.ReplayKeyHeader)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		e.Err = err.Error()
		t.r.add(e)
		return nil, err
	}
	e.Status, e.ContentType, e.Warnings = resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Values("Warning")
	// The answer is kept as the client reads it, and recorded when the
	// client is done with it: at its end, its error or its Close (a
	// streaming list is closed by the client once it has read what it
	// needs, never ended by the server).
	resp.Body = &teeBody{rc: resp.Body, e: e, r: t.r}
	return resp, nil
}

// teeBody keeps what the client reads of an answer and records the
// exchange when the client is done.
type teeBody struct {
	mu   sync.Mutex
	rc   io.ReadCloser
	buf  bytes.Buffer
	e    *Exchange
	r    *Recorder
	done bool
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.buf.Write(p[:n])
		if err != nil {
			if !errors.Is(err, io.EOF) {
				// A cut answer is replayed as the cut: the same error after
				// the bytes read.
				b.e.Err = err.Error()
			}
			b.finish()
		}
	}
	return n, err
}

func (b *teeBody) Close() error {
	b.mu.Lock()
	if !b.done {
		b.finish()
	}
	b.mu.Unlock()
	return b.rc.Close()
}

// finish records the exchange once; b.mu is held.
func (b *teeBody) finish() {
	b.done = true
	b.e.Body = b.buf.Bytes()
	b.r.add(b.e)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// WrappedRoundTripper lets client-go's utilities see through the wrapper.
func (t recordingTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

func (r *Recorder) add(e *Exchange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exchanges[e.key()] = e
}

// Getenv returns get, recording each variable read.
func (r *Recorder) Getenv(get func(string) string) func(string) string {
	return func(k string) string {
		v := get(k)
		r.mu.Lock()
		r.host.Env[k] = v
		r.mu.Unlock()
		return v
	}
}

// LookPath returns look, recording each answer.
func (r *Recorder) LookPath(look func(string) (string, error)) func(string) (string, error) {
	return func(name string) (string, error) {
		p, err := look(name)
		r.mu.Lock()
		r.host.LookPath[name] = outcomeOf(p, err)
		r.mu.Unlock()
		return p, err
	}
}

// Command returns run, recording each program's output.
func (r *Recorder) Command(run func(ctx context.Context, name string, args ...string) ([]byte, error)) func(ctx context.Context, name string, args ...string) ([]byte, error) {
	return func(ctx context.Context, name string, args ...string) ([]byte, error) {
		out, err := run(ctx, name, args...)
		r.mu.Lock()
		r.host.Commands[commandKey(name, args)] = outcomeOf(string(out), err)
		r.mu.Unlock()
		return out, err
	}
}

func commandKey(name string, args []string) string {
	return strings.Join(append([]string{name}, args...), " ")
}

func outcomeOf(out string, err error) outcome {
	o := outcome{Out: out}
	if err != nil {
		o.Err = err.Error()
	}
	return o
}

func (o outcome) err() error {
	if o.Err == "" {
		return nil
	}
	return errors.New(o.Err)
}

// Probe runs the probe and records its result (probe.Tape).
func (r *Recorder) Probe(key string, do func() (probe.Result, error)) (probe.Result, error) {
	res, err := do()
	rec := probeRecord{HTTP: res.HTTP, Resolves: res.Resolves, Registry: res.Registry}
	if t := res.TLS; t != nil {
		rec.TLS = &tlsRecord{Leaf: t.Leaf, Via: t.Via, Expired: t.Expired, HostErr: errText(t.HostErr), ChainErr: errText(t.ChainErr)}
	}
	if err != nil {
		rec.Err = err.Error()
	}
	r.mu.Lock()
	r.host.Probes[key] = rec
	r.mu.Unlock()
	return res, err
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// sortedExchanges returns the exchanges in a stable order.
func (r *Recorder) sortedExchanges() []*Exchange {
	out := make([]*Exchange, 0, len(r.exchanges))
	for _, e := range r.exchanges {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}
