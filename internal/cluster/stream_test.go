package cluster

import (
	"context"
	"fmt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
)

// streamServer serves /version (version), a streaming list of nodes
// (watch=true&sendInitialEvents=true) as stream says, and a two-page LIST.
func streamServer(t *testing.T, version string, stream func(w http.ResponseWriter, r *http.Request)) (*Clients, *atomic.Int64) {
	t.Helper()
	var watches atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		q := r.URL.Query()
		switch {
		case r.URL.Path == "/version":
			fmt.Fprintf(w, `{"major":"1","minor":"36","gitVersion":%q}`, version)
		case q.Get("watch") == "true":
			watches.Add(1)
			if q.Get("sendInitialEvents") != "true" || q.Get("resourceVersionMatch") != "NotOlderThan" || q.Get("allowWatchBookmarks") != "true" {
				t.Errorf("streaming list without its parameters: %s", r.URL.RawQuery)
			}
			stream(w, r)
		default:
			next := ""
			if q.Get("continue") == "" {
				next = "page2"
			}
			fmt.Fprintf(w, `{"kind":"NodeList","apiVersion":"v1","metadata":{"continue":%q},"items":[{"metadata":{"name":"p-%s"}}]}`, next, q.Get("continue"))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := NewClients(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, &watches
}

func nodeNames(t *testing.T, c *Clients) []string {
	t.Helper()
	nodes, err := NewSnapshot(context.Background(), c).Nodes()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	slices.Sort(names)
	return names
}

func addedNode(t *testing.T, name string) []byte {
	return watchFrame(t, "ADDED", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "5"}})
}

func bookmark(t *testing.T, end bool) []byte {
	m := metav1.ObjectMeta{ResourceVersion: "9"}
	if end {
		m.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	return watchFrame(t, "BOOKMARK", &corev1.Node{ObjectMeta: m})
}

// TestStreamingList: a server that streams lists (protobuf frames, as the
// API server sends them) is read in one request, ending at the
// initial-events-end bookmark.
func TestStreamingList(t *testing.T) {
	c, watches := streamServer(t, "v1.36.3", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch")
		_, _ = w.Write(addedNode(t, "s-1"))
		_, _ = w.Write(bookmark(t, false))
		_, _ = w.Write(addedNode(t, "s-2"))
		_, _ = w.Write(bookmark(t, true))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // a watch stays open; the client stops it
	})
	if got := nodeNames(t, c); !slices.Equal(got, []string{"s-1", "s-2"}) {
		t.Errorf("nodes %v, want s-1 s-2 from the stream", got)
	}
	if watches.Load() != 1 || c.Requests.Load() != 2 || c.Pages.Load() != 0 {
		t.Errorf("watches %d, requests %d, pages %d; want 1, 2 (/version and the stream), 0", watches.Load(), c.Requests.Load(), c.Pages.Load())
	}
}

// TestStreamingListFallsBack: a refused stream (a server with the feature
// off), a stream that breaks before its end, and a server older than 1.32
// all end in the paginated LIST, with nothing from a broken stream kept.
func TestStreamingListFallsBack(t *testing.T) {
	pages := []string{"p-", "p-page2"}
	t.Run("refused", func(t *testing.T) {
		c, watches := streamServer(t, "v1.33.1", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","code":422,"message":"sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"}`)
		})
		if got := nodeNames(t, c); !slices.Equal(got, pages) || watches.Load() != 1 {
			t.Errorf("nodes %v after %d watches, want the pages %v", got, watches.Load(), pages)
		}
	})
	t.Run("broken", func(t *testing.T) {
		c, watches := streamServer(t, "v1.36.3", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(addedNode(t, "s-1")) // then the connection ends, no bookmark
		})
		if got := nodeNames(t, c); !slices.Equal(got, pages) || watches.Load() != 1 {
			t.Errorf("nodes %v after %d watches, want only the pages %v", got, watches.Load(), pages)
		}
	})
	t.Run("forbidden", func(t *testing.T) {
		c, _ := streamServer(t, "v1.36.3", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"nodes is forbidden: cannot watch"}`)
		})
		if got := nodeNames(t, c); !slices.Equal(got, pages) {
			t.Errorf("nodes %v, want the pages %v", got, pages)
		}
	})
	t.Run("old server", func(t *testing.T) {
		c, watches := streamServer(t, "v1.30.2", func(http.ResponseWriter, *http.Request) { t.Error("a 1.30 server was asked for a streaming list") })
		if got := nodeNames(t, c); !slices.Equal(got, pages) || watches.Load() != 0 {
			t.Errorf("nodes %v after %d watches, want the pages %v", got, watches.Load(), pages)
		}
	})
}

// TestStreamingListServerError: a 500 on the stream is the list's error,
// reported once, not retried as pages.
func TestStreamingListServerError(t *testing.T) {
	c, watches := streamServer(t, "v1.36.3", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "injected failure", http.StatusInternalServerError)
	})
	_, err := NewSnapshot(context.Background(), c).Nodes()
	if err == nil || !strings.Contains(err.Error(), "list nodes") || !strings.Contains(err.Error(), "injected failure") {
		t.Errorf("error %v, want list nodes: injected failure", err)
	}
	if watches.Load() != 1 || c.Pages.Load() != 0 {
		t.Errorf("%d watches, %d pages; want 1 and no LIST", watches.Load(), c.Pages.Load())
	}
}
