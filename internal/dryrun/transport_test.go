package dryrun

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestEveryWriteIsADryRun: whatever method the code above sends, a write
// reaches the API server with dryRun=All; reads go as they are.
func TestEveryWriteIsADryRun(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Method] = r.URL.Query().Get("dryRun")
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	c := &http.Client{Transport: dryRunTransport{http.DefaultTransport}}
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		req, err := http.NewRequest(m, srv.URL+"/apis/apps/v1/namespaces/x/deployments/y?fieldManager=helm", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for m, dry := range seen {
		want := "All"
		if m == http.MethodGet {
			want = ""
		}
		if dry != want {
			t.Errorf("%s: dryRun=%q, want %q", m, dry, want)
		}
	}
	if len(seen) != 5 {
		t.Errorf("requests seen: %v", seen)
	}
}

// TestDeleteBodyIsADryRun: the API server takes a DELETE's options from its
// body when it has one and ignores the query, so the body carries the dry
// run too; a body that is not JSON is never sent.
func TestDeleteBodyIsADryRun(t *testing.T) {
	var got map[string]any
	sent := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent++
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("body: %v", err)
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	c := &http.Client{Transport: dryRunTransport{http.DefaultTransport}}
	req, err := http.NewRequest(http.MethodDelete, srv.URL+"/apis/apps/v1/namespaces/x/deployments/y",
		strings.NewReader(`{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if dry, _ := got["dryRun"].([]any); len(dry) != 1 || dry[0] != "All" || got["propagationPolicy"] != "Background" {
		t.Errorf("DELETE body %v: want dryRun [All] beside the caller's options", got)
	}
	req, _ = http.NewRequest(http.MethodDelete, srv.URL+"/api/v1/namespaces/x/configmaps/y", strings.NewReader("\x0a\x02k8s"))
	if _, err := c.Do(req); err == nil || !strings.Contains(err.Error(), "cannot be enforced") {
		t.Errorf("a protobuf DELETE body: err %v, want a refusal", err)
	}
	if sent != 1 {
		t.Errorf("%d requests reached the server, want 1 (the non-JSON DELETE refused)", sent)
	}
}
