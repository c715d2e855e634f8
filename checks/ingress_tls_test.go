package checks

import (
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// TestIngressTLS probes a local TLS server (httptest's certificate covers
// example.com) through --connect-to, so nothing leaves the machine.
func TestIngressTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, closedPort, _ := net.SplitHostPort(closed.Addr().String())
	_ = closed.Close()

	// The values become the plan's typed fields as plan.New derives them.
	ingress := func(host string, v map[string]any) Inputs {
		p := plan.Derive(v)
		return Inputs{AccessMode: AccessIngress, IngressClass: "nginx", IngressHost: host, Values: v, IngressProtocol: p.Protocol, IngressTLS: p.IngressTLS}
	}
	tests := []struct {
		name  string
		in    Inputs
		to    string // --connect-to target port for the host
		caPEM string
		clock time.Time
		want  outcome
	}{
		{"trusted, covers the host", ingress("example.com", nil), port, ca, time.Time{}, outcome{StatusPass, []string{"SANs [example.com"}}},
		{"expires within 14 days", ingress("example.com", nil), port, ca, srv.Certificate().NotAfter.Add(-72 * time.Hour),
			outcome{StatusWarn, []string{"certificate expires in 72h0m0s"}}},
		{"untrusted", ingress("example.com", nil), port, "", time.Time{}, outcome{StatusFail, []string{"certificate chain is not trusted", "--ca-file"}}},
		{"does not cover the host", ingress("rt.example.net", nil), port, ca, time.Time{}, outcome{StatusFail, []string{"certificate does not cover rt.example.net"}}},
		{"named TLS Secret missing", ingress("example.com", map[string]any{"global": map[string]any{"runtime": map[string]any{"ingress": map[string]any{
			"tls": []any{map[string]any{"secretName": "rt-tls"}}}}}}), port, ca, time.Time{},
			outcome{StatusFail, []string{"TLS Secret codefresh/rt-tls does not exist"}}},
		{"no TLS answer", ingress("example.com", nil), closedPort, ca, time.Time{}, outcome{StatusFail, []string{"no TLS answer from example.com:443"}}},
		{"protocol http", ingress("example.com", map[string]any{"global": map[string]any{"runtime": map[string]any{"ingress": map[string]any{"protocol": "http"}}}}), port, ca, time.Time{},
			outcome{StatusSkip, []string{"global.runtime.ingress.protocol is http: no TLS"}}},
		{"no host", ingress("", nil), port, ca, time.Time{}, outcome{StatusSkip, []string{NotApplicable + "no ingress host"}}},
		{"tunnel mode", Inputs{AccessMode: AccessTunnel}, port, ca, time.Time{}, outcome{StatusSkip, []string{NotApplicable + "access mode is tunnel"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := tt.in.IngressHost
			if host == "" {
				host = "example.com"
			}
			to := []probe.ConnectTo{{Host: host, Port: "443", Addr: "127.0.0.1", AddrPort: tt.to}}
			p, err := probe.New(3*time.Second, to, tt.caPEM)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.clock.IsZero() {
				p.Now = func() time.Time { return tt.clock }
			}
			env := newKit(t).with(tt.in).env()
			env.Probe = p
			tt.want.expect(t, runThrough(t, IngressTLSCheck(), env))
		})
	}
}
