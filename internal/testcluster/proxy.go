package testcluster

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Middleware wraps the proxy's handler: it may answer a request itself (say,
// a fake /version, a 500, a delay) or pass it to next, the API server.
type Middleware func(next http.Handler) http.Handler

// Proxy starts an HTTPS reverse proxy on 127.0.0.1 in front of the API
// server, authenticating upstream as admin, with mw around it. It returns the
// path of a kubeconfig that points at the proxy (TLS verification off, no
// credentials: the proxy holds them). Use it to fake what a real control plane
// cannot be made to say (an old /version) or to inject latency and errors.
func (c *Cluster) Proxy(t testing.TB, mw Middleware) string {
	t.Helper()
	target, err := url.Parse(c.Admin.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	var h http.Handler = rp
	if mw != nil {
		h = mw(rp)
	}
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	return WriteKubeconfig(t, filepath.Join(c.dir, fmt.Sprintf("proxy-%p.kubeconfig", srv)), srv.URL, "")
}

// WriteKubeconfig writes a kubeconfig for server (TLS verification off) with an
// optional bearer token, as context "e2e", and returns its path.
func WriteKubeconfig(t testing.TB, path, server, token string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["e2e"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "e2e"}
	cfg.CurrentContext = "e2e"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// FakeVersion answers /version with gitVersion and passes everything else on.
func FakeVersion(gitVersion, major, minor string) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/version" {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"major":%q,"minor":%q,"gitVersion":%q,"platform":"linux/amd64"}`, major, minor, gitVersion)
		})
	}
}
