package checks

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// TestIngressHostReachable probes a local HTTP server through --connect-to;
// nothing leaves the machine.
func TestIngressHostReachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, closedPort, _ := net.SplitHostPort(closed.Addr().String())
	_ = closed.Close()

	httpValues := map[string]any{"global": map[string]any{"runtime": map[string]any{"ingress": map[string]any{"protocol": "http"}}}}
	in := func(host string) Inputs {
		return Inputs{AccessMode: AccessIngress, IngressClass: "nginx", IngressHost: host, Values: httpValues, IngressProtocol: "http"}
	}
	tests := []struct {
		name string
		in   Inputs
		to   string
		want outcome
	}{
		{"answers (any status)", in("rt.example.com"), port, outcome{StatusPass, []string{"HEAD http://rt.example.com answered 503"}}},
		{"does not answer", in("rt.example.com"), closedPort, outcome{StatusFail, []string{"HEAD http://rt.example.com", "skipValidation=true"}}},
		{"validation disabled", func() Inputs { i := in("rt.example.com"); i.SkipIngressValidation = true; return i }(), port,
			outcome{StatusSkip, []string{"ingress validation disabled"}}},
		{"no host", in(""), port, outcome{StatusSkip, []string{NotApplicable + "no ingress host"}}},
		{"service-mesh mode", Inputs{AccessMode: AccessServiceMesh}, port, outcome{StatusSkip, []string{NotApplicable + "access mode is service-mesh"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := probe.New(3*time.Second, []probe.ConnectTo{{Host: "rt.example.com", Port: "80", Addr: "127.0.0.1", AddrPort: tt.to}}, "")
			if err != nil {
				t.Fatal(err)
			}
			env := newKit(t).with(tt.in).env()
			env.Probe = p
			tt.want.expect(t, runThrough(t, IngressHostReachableCheck(), env))
		})
	}
}
