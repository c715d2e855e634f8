package dryrun

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// TestEngineCreate: every request is a dry run carrying its replay key, at
// most Limit are in flight however many are asked, the answers come back in
// the requests' order with each request's own warnings.
func TestEngineCreate(t *testing.T) {
	var inFlight, peak atomic.Int64
	var mu sync.Mutex
	var dry []string
	keys := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		var obj map[string]any
		_ = json.NewDecoder(r.Body).Decode(&obj)
		mu.Lock()
		dry = append(dry, r.URL.Query().Get("dryRun"))
		keys[r.Header.Get(cluster.ReplayKeyHeader)] = true
		mu.Unlock()
		name := obj["metadata"].(map[string]any)["name"].(string)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Add("Warning", `299 - "about `+name+`"`)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(obj)
	}))
	defer srv.Close()
	e, err := New(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var reqs []Request
	for i := range 30 {
		reqs = append(reqs, Request{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "x",
			Object: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm-" + strconv.Itoa(i)}}}})
	}
	answers := e.Create(context.Background(), reqs)
	for i, a := range answers {
		if a.Err != nil || a.Object.GetName() != "cm-"+strconv.Itoa(i) {
			t.Fatalf("answer %d: %v %v", i, a.Err, a.Object)
		}
		if len(a.Warnings) != 1 || a.Warnings[0] != "about cm-"+strconv.Itoa(i) {
			t.Errorf("answer %d warnings %q", i, a.Warnings)
		}
	}
	if p := peak.Load(); p > Limit || p < 2 {
		t.Errorf("peak in flight %d, want 2..%d", p, Limit)
	}
	for _, d := range dry {
		if d != "All" {
			t.Fatalf("a request without dryRun=All: %q", d)
		}
	}
	if len(keys) != 30 || keys[""] {
		t.Errorf("%d distinct replay keys, want one per object", len(keys))
	}
}

// TestReplayKey: a Secret's or ConfigMap's data and checksum annotations
// (what a bundle's redacted values change) do not change the key; its name
// and any other field do.
func TestReplayKey(t *testing.T) {
	secret := func(name, data, checksum string) []byte {
		b, _ := json.Marshal(map[string]any{"kind": "Secret", "metadata": map[string]any{"name": name, "annotations": map[string]any{"checksum/secret": checksum, "team": "a"}},
			"data": map[string]any{"token": data}})
		return b
	}
	const path = "/api/v1/namespaces/x/secrets"
	a := ReplayKey(path, secret("s", "dG9rZW4=", "1"))
	if b := ReplayKey(path, secret("s", "KioqKg==", "2")); a != b {
		t.Errorf("the data and the checksum change the key")
	}
	if c := ReplayKey(path, secret("t", "dG9rZW4=", "1")); a == c {
		t.Errorf("the name does not change the key")
	}
	if d := ReplayKey("/api/v1/namespaces/x/services", secret("s", "dG9rZW4=", "1")); d == ReplayKey("/api/v1/namespaces/x/services", secret("s", "KioqKg==", "1")) {
		t.Errorf("the data of a kind other than Secret and ConfigMap does not change the key")
	}
}

// TestSendOrder: the cluster-scoped requests go first, each group from the
// largest object, equal sizes in the requests' order; Size is within a
// quarter of the object's JSON encoding.
func TestSendOrder(t *testing.T) {
	obj := func(name string, pad int) *unstructured.Unstructured {
		data := map[string]any{}
		for i := range pad {
			data["k"+strconv.Itoa(i)] = []any{"some value", int64(i), true, nil, map[string]any{"x": 1.5}}
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name}, "data": data}}
	}
	reqs := []Request{
		{Namespace: "ns", Object: obj("small-namespaced", 1)},
		{Object: obj("small-cluster", 1)},
		{Namespace: "ns", Object: obj("large-namespaced", 50)},
		{Object: obj("large-cluster", 40)},
		{Object: obj("small-cluster", 1)},
		{Namespace: "ns", Object: obj("medium-namespaced", 10)},
	}
	got, want := SendOrder(reqs), []int{3, 1, 4, 2, 5, 0}
	if !slices.Equal(got, want) {
		t.Errorf("send order %v, want %v", got, want)
	}
	for _, r := range reqs {
		b, err := json.Marshal(r.Object.Object)
		if err != nil {
			t.Fatal(err)
		}
		if s := Size(r.Object.Object); s < len(b)*3/4 || s > len(b)*5/4 {
			t.Errorf("%s: Size %d, JSON %d bytes", r.Object.GetName(), s, len(b))
		}
	}
}
