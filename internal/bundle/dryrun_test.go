package bundle

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// TestDryRunReplayedByItsKey: a dry run is recorded under its replay key
// (never sent to the API server), with its Warning headers, and a replay
// whose body differs only where redaction changed it finds the answer.
func TestDryRunReplayedByItsKey(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(cluster.ReplayKeyHeader) != "" {
			http.Error(w, "the replay key reached the API server", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Add("Warning", `299 - "would violate PodSecurity \"restricted:latest\": runAsNonRoot != true"`)
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm"}}`)
	}))
	defer srv.Close()
	post := func(rt http.RoundTripper, base, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+"/api/v1/namespaces/x/configmaps?dryRun=All", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(cluster.ReplayKeyHeader, "k1")
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	rec := NewRecorder()
	resp := post(rec.Wrap(http.DefaultTransport), srv.URL, `{"data":{"token":"real"}}`)
	live, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("live: %d %s", resp.StatusCode, live)
	}
	path := filepath.Join(t.TempDir(), "b.tgz")
	if err := rec.Write(path, Manifest{Server: srv.URL}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := b.RESTConfig()
	resp = post(cfg.Transport, srv.URL, `{"data":{"token":"***"}}`)
	replayed, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || !bytes.Equal(replayed, live) {
		t.Errorf("replay: %d %s, want the live answer %s", resp.StatusCode, replayed, live)
	}
	if w := resp.Header.Values("Warning"); len(w) != 1 || !strings.Contains(w[0], "would violate PodSecurity") {
		t.Errorf("replayed warnings %q", w)
	}
}
