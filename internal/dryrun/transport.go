package dryrun

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Config returns a copy of cfg whose every write is a server-side dry run
// and carries its replay key, and a function that returns the first request
// a replay had no recorded answer for (nil when there was none).
func Config(cfg *rest.Config) (*rest.Config, func() error) {
	cfg = rest.CopyConfig(cfg)
	u := &unanswered{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return dryRunTransport{rt} })
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return unansweredTransport{rt, u} })
	return cfg, u.err
}

// dryRunTransport makes every write a server-side dry run and sets its
// replay key.
type dryRunTransport struct{ next http.RoundTripper }

func (t dryRunTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return t.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	q := r.URL.Query()
	q.Set("dryRun", metav1.DryRunAll)
	r.URL.RawQuery = q.Encode()
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	if r.Method == http.MethodDelete && len(bytes.TrimSpace(body)) > 0 {
		// The API server reads a DELETE's options from its body when it has
		// one, and then ignores the query: the dry run goes in the body too.
		var opts map[string]any
		if err := json.Unmarshal(body, &opts); err != nil {
			return nil, fmt.Errorf("refusing a DELETE of %s whose options are not JSON: its dry run cannot be enforced", r.URL.Path)
		}
		opts["dryRun"] = []string{metav1.DryRunAll}
		var err error
		if body, err = json.Marshal(opts); err != nil {
			return nil, err
		}
	}
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	if len(body) > 0 {
		r.Header.Set(cluster.ReplayKeyHeader, ReplayKey(r.URL.Path, body))
	}
	return t.next.RoundTrip(r)
}

// WrappedRoundTripper lets client-go's utilities see through the wrapper.
func (t dryRunTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// ReplayKey is the digest (sha256, hex) of a write's body as a bundle can
// reproduce it: for Secrets and ConfigMaps (path) the values of data,
// stringData and binaryData blanked (their keys kept), and everywhere the
// annotations whose key names a checksum (a pod template's
// checksum/config of a Secret or ConfigMap) left out. A body that is not
// JSON is digested as it is.
func ReplayKey(path string, body []byte) string {
	var v any
	if err := json.Unmarshal(body, &v); err == nil {
		blankData := false
		for _, r := range []string{"/secrets", "/configmaps"} {
			blankData = blankData || strings.Contains(path, r)
		}
		normalize(v, blankData, true)
		if b, err := json.Marshal(v); err == nil {
			body = b
		}
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// normalize blanks what ReplayKey leaves out, in place.
func normalize(v any, blankData, top bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch {
			case k == "annotations":
				if m, ok := e.(map[string]any); ok {
					for a := range m {
						if strings.Contains(strings.ToLower(a), "checksum") {
							delete(m, a)
						}
					}
				}
			case top && blankData && (k == "data" || k == "stringData" || k == "binaryData"):
				if m, ok := e.(map[string]any); ok {
					for d := range m {
						m[d] = ""
					}
				}
				continue
			}
			normalize(e, blankData, false)
		}
	case []any:
		for _, e := range x {
			normalize(e, blankData, false)
		}
	}
}

// unanswered keeps the first request of a dry run that a replay had no
// recorded answer for (a *cluster.NotRecordedError): Helm's kube client
// turns a failed request into the text of a refusal ("could not get
// information about the resource: ..."), and a request with no answer is
// no refusal by the API server. The dry run then fails with that error,
// and the check reports it rather than a verdict.
type unanswered struct {
	mu    sync.Mutex
	first error
}

func (u *unanswered) err() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.first == nil {
		return nil
	}
	return fmt.Errorf("the dry run could not be sent: %w", u.first)
}

type unansweredTransport struct {
	next http.RoundTripper
	u    *unanswered
}

func (t unansweredTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if _, ok := cluster.AsNotRecorded(err); ok {
		t.u.mu.Lock()
		if t.u.first == nil {
			t.u.first = err
		}
		t.u.mu.Unlock()
	}
	return resp, err
}

// WrappedRoundTripper lets client-go's utilities see through the wrapper.
func (t unansweredTransport) WrappedRoundTripper() http.RoundTripper { return t.next }
