package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestSlowOrFailingAPIServer: a hung LIST, latency, 500s and 429s injected by
// a proxy in front of the real apiserver. The run is bounded by --timeout and
// reports `error` statuses with a reason (exit 1), never hangs; a 429 with
// Retry-After is retried by client-go and the check passes. One control
// plane; each subtest has its own proxy.
//
// Quiet (tc.Quiet): it bounds each run by --timeout plus a few seconds,
// measured beside the other quiet tests only.
func TestSlowOrFailingAPIServer(t *testing.T) {
	tc.Parallel(t, tc.Quiet)
	c := tc.Start(t)
	c.AddNode(t, tc.NodeSpec{Name: "node-a", CPU: "4", Memory: "16Gi"})

	t.Run("hung list is bounded by --timeout", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		kc := c.Proxy(t, func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if isList(r, "nodes") {
					// Never answer (until the client gives up or the test ends).
					select {
					case <-r.Context().Done():
					case <-release:
					}
					return
				}
				next.ServeHTTP(w, r)
			})
		})
		// The whole pre-install run, no --only: every other check still ends.
		res := tc.Run(t, nil, "--kubeconfig", kc, "-o", "json", "--timeout", "4s")
		t.Logf("run took %s", res.Elapsed)
		wantCode(t, res, 1)
		if res.Elapsed > 12*time.Second {
			t.Errorf("run took %s with --timeout 4s", res.Elapsed)
		}
		doc := res.JSON(t)
		nr := wantStatus(t, doc, "node-resources", "error", "list nodes")
		if !strings.Contains(nr.Message, "timed out") && !strings.Contains(nr.Message, "deadline") {
			t.Errorf("node-resources message %q does not say it timed out", nr.Message)
		}
		wantStatus(t, doc, "cluster-reachable", "pass")
		wantStatus(t, doc, "kubernetes-version", "pass")
	})

	t.Run("500s and latency end as error with the reason", func(t *testing.T) {
		var deployLists atomic.Int64
		kc := c.Proxy(t, func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(150 * time.Millisecond)
				if isList(r, "deployments") {
					deployLists.Add(1)
					http.Error(w, "injected failure", http.StatusInternalServerError)
					return
				}
				next.ServeHTTP(w, r)
			})
		})
		res := tc.Run(t, nil, "--kubeconfig", kc, "-o", "json", "--timeout", "20s",
			"--only", "kubernetes-version,node-resources,argo-components,sealed-secrets")
		wantCode(t, res, 1)
		if res.Elapsed > 20*time.Second {
			t.Errorf("run took %s with --timeout 20s", res.Elapsed)
		}
		doc := res.JSON(t)
		wantStatus(t, doc, "argo-components", "error", "list deployments", "injected failure")
		wantStatus(t, doc, "sealed-secrets", "error", "list deployments")
		wantStatus(t, doc, "node-resources", "pass")
		wantStatus(t, doc, "kubernetes-version", "pass")
		// One list shared by both checks, and a plain 500 is not retried.
		if n := deployLists.Load(); n != 1 {
			t.Errorf("deployments listed %d times, want 1", n)
		}
	})

	t.Run("429 with Retry-After is retried", func(t *testing.T) {
		var nodeLists, all atomic.Int64
		kc := c.Proxy(t, func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				all.Add(1)
				if isList(r, "nodes") && nodeLists.Add(1) == 1 {
					w.Header().Set("Retry-After", "1")
					http.Error(w, "too many requests", http.StatusTooManyRequests)
					return
				}
				next.ServeHTTP(w, r)
			})
		})
		res := tc.Run(t, nil, "--kubeconfig", kc, "-o", "json", "--only", "node-resources", "--debug-request-count")
		wantCode(t, res, 0)
		// The hidden counter (make bench reads it) counts what reached the
		// server, the retry included.
		if want := fmt.Sprintf("api-requests: total=%d pages=0", all.Load()); !strings.Contains(res.Stderr, want) {
			t.Errorf("stderr %q does not contain %q", res.Stderr, want)
		}
		wantStatus(t, res.JSON(t), "node-resources", "pass", "1 of 1 nodes qualify")
		if n := nodeLists.Load(); n != 2 {
			t.Errorf("nodes listed %d times, want 2 (the 429, then the retry)", n)
		}
		if res.Elapsed < time.Second {
			t.Errorf("run took %s: the retry did not wait for Retry-After: 1", res.Elapsed)
		}
	})
}
