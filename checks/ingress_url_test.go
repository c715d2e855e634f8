package checks

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

func TestIngressURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }))
	t.Cleanup(srv.Close)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String() + "/"
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	mesh := func(u string) Inputs { return Inputs{AccessMode: AccessServiceMesh, IngressURL: u} }
	tests := []struct {
		name string
		in   Inputs
		want outcome
	}{
		{"answers (any status)", mesh(srv.URL), outcome{StatusPass, []string{"HEAD " + srv.URL + " answered 404"}}},
		{"does not answer", mesh(closedURL), outcome{StatusFail, []string{"HEAD " + closedURL, "internal-router"}}},
		{"not a URL", mesh("rt.example.com"), outcome{StatusFail, []string{`global.runtime.ingressUrl "rt.example.com" is not an http(s) URL`, "--ingress-url"}}},
		{"empty", mesh(""), outcome{StatusFail, []string{`global.runtime.ingressUrl "" is not an http(s) URL`}}},
		{"tunnel mode", Inputs{AccessMode: AccessTunnel}, outcome{StatusSkip, []string{NotApplicable + "access mode is tunnel; this check is for service-mesh"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.expect(t, newKit(t).with(tt.in).run(IngressURLCheck()))
		})
	}
}

// notRecordedTape answers every probe as a replay with no recording of it.
type notRecordedTape struct{}

func (notRecordedTape) Probe(key string, _ func() (probe.Result, error)) (probe.Result, error) {
	return probe.Result{}, &cluster.NotRecordedError{Request: "probe " + key}
}

// TestProbeNotRecordedIsAnError: a replay with no answer for a probe makes
// the checks that send one an error naming it, never a fail.
func TestProbeNotRecordedIsAnError(t *testing.T) {
	in := Inputs{AccessMode: AccessServiceMesh, IngressURL: "https://rt.example.com/"}
	k := newKit(t).with(in)
	env := k.env()
	env.Probe = &probe.Prober{Tape: notRecordedTape{}}
	r := runThrough(t, IngressURLCheck(), env)
	outcome{StatusError, []string{"probe http https://rt.example.com/ via : not recorded in the bundle"}}.expect(t, r)
}
