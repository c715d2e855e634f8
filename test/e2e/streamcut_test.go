package e2e

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// listFault is how breakingList breaks a response: the connection closed
// (cut), reset (a TCP RST), or left open with nothing more sent (stall).
type listFault string

const (
	faultCut   listFault = "cut"
	faultReset listFault = "reset"
	faultStall listFault = "stall"
)

var errBroken = errors.New("response broken by the test proxy")

// breakingList is a proxy middleware that breaks every GET of resource's
// collection (its streaming list and the pages of its LIST alike) half-way
// through the first body write: the headers and half of the first write go
// out, then the fault. hits counts those requests.
func breakingList(resource string, fault listFault, hits *atomic.Int64, release <-chan struct{}) tc.Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !isList(r, resource) {
				next.ServeHTTP(w, r)
				return
			}
			hits.Add(1)
			next.ServeHTTP(&breakingWriter{ResponseWriter: w, fault: fault, req: r, release: release}, r)
		})
	}
}

type breakingWriter struct {
	http.ResponseWriter
	fault   listFault
	req     *http.Request
	release <-chan struct{}
	broken  bool
}

func (b *breakingWriter) Write(p []byte) (int, error) {
	if b.broken {
		return 0, errBroken
	}
	b.broken = true
	_, _ = b.ResponseWriter.Write(p[:len(p)/2])
	_ = http.NewResponseController(b.ResponseWriter).Flush()
	switch b.fault {
	case faultStall:
		select {
		case <-b.req.Context().Done():
		case <-b.release:
		}
	case faultCut, faultReset:
		conn, _, err := http.NewResponseController(b.ResponseWriter).Hijack()
		if err != nil {
			return 0, err
		}
		if b.fault == faultReset {
			if tlsConn, ok := conn.(*tls.Conn); ok {
				if tcp, ok := tlsConn.NetConn().(*net.TCPConn); ok {
					_ = tcp.SetLinger(0) // close sends RST
				}
			}
		}
		_ = conn.Close()
	}
	return 0, errBroken
}

func (b *breakingWriter) Flush() {
	if !b.broken {
		_ = http.NewResponseController(b.ResponseWriter).Flush()
	}
}

func (b *breakingWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// TestStreamedListCut: the API server's answer to a streamed list (nodes,
// Deployments, pods) breaks half-way: the connection is closed, reset, or
// stalls. For each kind and each fault, the run ends within
// --request-timeout (plus the process's own start and the other checks),
// the checks that need that list end error naming the resource, and the
// others still report.
//
// Quiet (tc.Quiet): that bound is measured beside the other quiet tests
// only, before the heavy ones start.
func TestStreamedListCut(t *testing.T) {
	tc.Parallel(t, tc.Quiet)
	c := tc.Start(t)
	c.AddNode(t, tc.NodeSpec{Name: "node-a", CPU: "4", Memory: "16Gi"})
	values := chartValues(t, "global:\n  codefresh:\n    accountId: e2e\n    userToken:\n      token: e2e\n  runtime:\n    name: e2e\n")
	const requestTimeout = 4 * time.Second
	run, wait := concurrently(t)
	for _, kind := range []struct {
		resource string
		check    string // the check that needs the list
	}{
		{"nodes", "node-resources"},
		{"deployments", "argo-components"},
		{"pods", "runtime-schedulable"},
	} {
		// The kinds run at once (three plugin runs beside each other, each
		// bounded alike), their faults one after the other.
		run(kind.resource, func(t *testing.T) {
			for _, fault := range []listFault{faultCut, faultReset, faultStall} {
				t.Run(string(fault), func(t *testing.T) {
					release := make(chan struct{})
					defer close(release)
					var hits atomic.Int64
					kc := c.Proxy(t, breakingList(kind.resource, fault, &hits, release))
					res := tc.Run(t, nil, "--kubeconfig", kc, "-o", "json", "--request-timeout", requestTimeout.String(),
						"--chart", fixtureChart(t), "-f", values,
						"--only", "kubernetes-version,runtime-name,node-resources,argo-components,runtime-schedulable")
					t.Logf("run took %s, %d requests for %s broken", res.Elapsed, hits.Load(), kind.resource)
					wantCode(t, res, 1)
					if limit := requestTimeout + 3*time.Second; res.Elapsed > limit {
						t.Errorf("run took %s with --request-timeout %s (limit %s)", res.Elapsed, requestTimeout, limit)
					}
					if hits.Load() == 0 {
						t.Fatalf("no request for %s reached the proxy: the fault was never injected", kind.resource)
					}
					doc := res.JSON(t)
					got := wantStatus(t, doc, kind.check, "error", kind.resource)
					if !strings.Contains(got.Message, "list") {
						t.Errorf("%s message %q does not say which read failed", kind.check, got.Message)
					}
					wantStatus(t, doc, "kubernetes-version", "pass")
					wantStatus(t, doc, "runtime-name", "pass")
					for _, other := range []string{"node-resources", "argo-components"} {
						if other != kind.check {
							wantStatus(t, doc, other, "pass")
						}
					}
				})
			}
		})
	}
	wait()
}
