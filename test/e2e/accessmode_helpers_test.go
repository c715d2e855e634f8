package e2e

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcert"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// upstream returns the path of an upstream fixture (see conflictsFixture),
// failing (never skipping) when it is missing.
func upstream(t *testing.T, rel string) string {
	t.Helper()
	return conflictsFixture(t, rel)
}

var webhookDoc = regexp.MustCompile(`(?m)^kind: (Validating|Mutating)WebhookConfiguration`)

// applyUpstream applies an upstream manifest without its admission webhook
// configurations (their Services have no pods on a bare apiserver, so they
// would block later creates), CRDs first: a failed first pass (custom
// resources before their CRD is Established) is retried once the CRDs are.
func applyUpstream(t *testing.T, c *testcluster.Cluster, rel string, extra ...string) {
	t.Helper()
	data, err := os.ReadFile(upstream(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, doc := range strings.Split(string(data), "\n---") {
		if !webhookDoc.MatchString(doc) {
			keep = append(keep, doc)
		}
	}
	f := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(f, []byte(strings.Join(keep, "\n---")), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--kubeconfig", c.AdminKubeconfig(), "apply", "--server-side", "--force-conflicts", "-f", f}, extra...)
	if out, err := exec.Command("kubectl", args...).CombinedOutput(); err != nil {
		c.Kubectl(t, "wait", "--for", "condition=established", "--timeout=60s", "crd", "--all")
		if out2, err2 := exec.Command("kubectl", args...).CombinedOutput(); err2 != nil {
			t.Fatalf("applying %s: %v\n%s\n%s", rel, err2, out, out2)
		}
	}
}

// setLoadBalancer sets (or, with no addresses, clears) a Service's
// status.loadBalancer.ingress as a cloud controller would.
func setLoadBalancer(t *testing.T, c *testcluster.Cluster, ns, name string, ips ...string) {
	t.Helper()
	ctx := context.Background()
	s, err := c.Kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Status.LoadBalancer.Ingress = nil
	for _, ip := range ips {
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	if _, err := c.Kube.CoreV1().Services(ns).UpdateStatus(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// testCA is a CA made for one test, its certificate written to a file
// (PEM) for --ca-file.
type testCA struct {
	*testcert.CA
	PEM string
}

func newCA(t *testing.T) *testCA {
	t.Helper()
	ca := testcert.NewCA(t, "e2e test CA")
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return &testCA{CA: ca, PEM: p}
}

// serveTLS starts an HTTPS server on 127.0.0.1 with cert and returns its port.
func serveTLS(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// serveHTTP starts a plain HTTP server on 127.0.0.1 and returns its port.
func serveHTTP(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// expectReplayed asserts the statuses of checks in a report (any exit
// code), on a run recorded with --bundle whose replay must agree with it
// (testcluster.RunJSONReplayed).
func expectReplayed(t *testing.T, c *testcluster.Cluster, want map[string]string, args ...string) {
	t.Helper()
	expectCodeReplayed(t, c, anyCode, want, args...)
}
