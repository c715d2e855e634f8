package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"
)

// TestClientsCountPages: every request is counted, and those that carry a
// continue token (further pages of a LIST) are counted apart.
func TestClientsCountPages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/version" { // before streaming lists: pages
			fmt.Fprint(w, `{"major":"1","minor":"31","gitVersion":"v1.31.4"}`)
			return
		}
		next := ""
		if r.URL.Query().Get("continue") == "" {
			next = "page2"
		}
		fmt.Fprintf(w, `{"kind":"NodeList","apiVersion":"v1","metadata":{"continue":%q},"items":[{"metadata":{"name":"n-%s"}}]}`, next, r.URL.Query().Get("continue"))
	}))
	defer srv.Close()
	c, err := NewClients(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := NewSnapshot(context.Background(), c).Nodes()
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 {
		t.Fatalf("listed %d nodes, want 2 (two pages)", len(nodes))
	}
	if got := c.Requests.Load(); got != 3 {
		t.Errorf("Requests = %d, want 3 (/version and two pages)", got)
	}
	if got := c.Pages.Load(); got != 1 {
		t.Errorf("Pages = %d, want 1", got)
	}
}
