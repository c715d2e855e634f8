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

// TestPlatformReachable maps the platform and the tunnel server to a local
// TLS server (its certificate covers example.com) with --connect-to. The
// check is advisory: its failures are reported warn.
func TestPlatformReachable(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	vals := func(url string) map[string]any {
		return map[string]any{
			"global":        map[string]any{"codefresh": map[string]any{"url": url}},
			"tunnel-client": map[string]any{"tunnelServer": map[string]any{"host": "example.com"}},
		}
	}
	tunnel := func(url string) Inputs {
		p := plan.Derive(vals(url))
		return Inputs{AccessMode: AccessTunnel, Values: vals(url), PlatformURL: p.PlatformURL, TunnelServer: p.TunnelServer}
	}
	tests := []struct {
		name string
		in   Inputs
		ca   string
		want outcome
	}{
		{"both answer", tunnel("https://example.com"), ca, outcome{StatusPass, []string{"platform example.com:443 and tunnel server example.com:443 answer over TLS", "not from the cluster"}}},
		{"untrusted chain", tunnel("https://example.com"), "", outcome{StatusWarn, []string{"untrusted certificate chain (a TLS-inspecting proxy? pass --ca-file)"}}},
		{"not a URL", tunnel("::"), ca, outcome{StatusWarn, []string{`global.codefresh.url "::" is not a URL`}}},
		{"ingress mode", Inputs{AccessMode: AccessIngress}, ca, outcome{StatusSkip, []string{NotApplicable + "access mode is ingress; this check is for tunnel"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := probe.New(3*time.Second, []probe.ConnectTo{{Host: "example.com", Port: "443", Addr: "127.0.0.1", AddrPort: port}}, tt.ca)
			if err != nil {
				t.Fatal(err)
			}
			env := newKit(t).with(tt.in).env()
			env.Probe = p
			tt.want.expect(t, runThrough(t, PlatformReachableCheck(), env))
		})
	}
}
