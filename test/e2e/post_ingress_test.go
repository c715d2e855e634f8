package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcert"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestPostIngress covers runtime-ingress-status (with --wait), nginx-tls-secret
// on the real NGINX by F5 IngressClass, and alb-dns-alias.
func TestPostIngress(t *testing.T) {
	testcluster.Parallel(t)
	// Bare: an Ingress's status.loadBalancer is written by an ingress
	// controller, which does not run here; the test writes it.
	c := testcluster.StartBare(t)
	const ns, host = "codefresh", "runtime.example.com"
	c.CreateNamespace(t, ns)
	c.Kubectl(t, "apply", "--server-side", "-f", upstream(t, "nginx-plus-ingress/install.yaml"))
	ing := runtimeIngress(t, c, ns, "codefresh-gitops-runtime", "nginx", host)

	// No status yet: the controller does not report it.
	res, doc := postReplayed(t, c, "--only=runtime-ingress-status,nginx-tls-secret,alb-dns-alias,istio-virtualservice")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1", res.Code)
	}
	wantStatus(t, doc, "runtime-ingress-status", "fail", "Ingress codefresh/codefresh-gitops-runtime (class nginx) has no address in status.loadBalancer.ingress",
		"kubectl gitops-preflight --only ingress-report-status --ingress-class nginx", "-report-ingress-status")
	wantStatus(t, doc, "nginx-tls-secret", "fail", "spec.tls of Ingress codefresh/codefresh-gitops-runtime names no Secret for host runtime.example.com", "--fix --tls-secret")
	wantStatus(t, doc, "alb-dns-alias", "skip", "not an AWS ALB class")
	wantStatus(t, doc, "istio-virtualservice", "skip", "not Istio")

	// --wait: the controller reports the status three seconds into the wait.
	done := make(chan error, 1)
	go func() {
		time.Sleep(3 * time.Second)
		ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.10"}}
		_, err := c.Kube.NetworkingV1().Ingresses(ns).UpdateStatus(bg, ing, metav1.UpdateOptions{})
		done <- err
	}()
	res, doc = post(t, c, "--only=runtime-ingress-status", "--wait=40s")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res.Code != 0 || res.Elapsed < 3*time.Second || res.Elapsed > 30*time.Second {
		t.Fatalf("--wait: exit %d after %s, want 0 after the status was set (3s)", res.Code, res.Elapsed)
	}
	wantStatus(t, doc, "runtime-ingress-status", "pass", "has address 203.0.113.10")
	// --wait gives up at its deadline with the last state.
	res, doc = post(t, c, "--only=nginx-tls-secret", "--wait=4s")
	if res.Code != 1 || res.Elapsed < 4*time.Second {
		t.Fatalf("--wait on a lasting failure: exit %d after %s, want 1 after 4s", res.Code, res.Elapsed)
	}
	wantStatus(t, doc, "nginx-tls-secret", "fail", "names no Secret")
	// --wait is a post-install option.
	if res := testcluster.Run(t, nil, "--kubeconfig", c.AdminKubeconfig(), "--wait=5s"); res.Code != 2 || !strings.Contains(res.Stderr, "--post") {
		t.Fatalf("--wait without --post: exit %d, stderr %q", res.Code, res.Stderr)
	}

	// TLS Secrets: of the wrong type, for another host, and right.
	dir := t.TempDir()
	crt, key := writeCert(t, dir, "good", "*.example.com")
	c.Kubectl(t, "create", "secret", "tls", "runtime-tls", "-n", ns, "--cert="+crt, "--key="+key)
	wcrt, wkey := writeCert(t, dir, "wrong", "other.example.org")
	c.Kubectl(t, "create", "secret", "tls", "wrong-host", "-n", ns, "--cert="+wcrt, "--key="+wkey)
	c.Kubectl(t, "create", "secret", "generic", "opaque-tls", "-n", ns, "--from-file=tls.crt="+crt, "--from-file=tls.key="+key)
	keyPEM, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ secret, status, want string }{
		{"missing", "fail", "Secret missing does not exist in namespace codefresh"},
		{"opaque-tls", "fail", "Secret opaque-tls is of type Opaque, not kubernetes.io/tls"},
		{"wrong-host", "fail", "the certificate of Secret wrong-host does not cover runtime.example.com"},
		{"runtime-tls", "pass", "serves host runtime.example.com with Secret runtime-tls"},
	} {
		ing = setTLS(t, c, ns, "codefresh-gitops-runtime", host, tc.secret)
		res, doc = postReplayed(t, c, "--only=nginx-tls-secret")
		wantStatus(t, doc, "nginx-tls-secret", tc.status, tc.want)
		out := res.Stdout + res.Stderr
		if strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, base64.StdEncoding.EncodeToString(keyPEM)) || strings.Contains(out, string(keyPEM)) {
			t.Fatalf("secret %s: the private key was printed", tc.secret)
		}
	}

	// ALB: the host must resolve to the ALB's addresses. "localhost" stands
	// for both (no DNS server needed); ".invalid" never resolves (RFC 2606).
	const albNS = "alb-rt"
	c.CreateNamespace(t, albNS)
	if _, err := c.Kube.NetworkingV1().IngressClasses().Create(bg, &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: "alb"}, Spec: networkingv1.IngressClassSpec{Controller: "ingress.k8s.aws/alb"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	alb := runtimeIngress(t, c, albNS, "codefresh-gitops-runtime", "alb", "localhost")
	alb.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{Hostname: "localhost"}}
	if alb, err = c.Kube.NetworkingV1().Ingresses(albNS).UpdateStatus(bg, alb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, doc = postReplayed(t, c, "-n", albNS, "--only=alb-dns-alias,runtime-ingress-status,nginx-tls-secret")
	wantStatus(t, doc, "alb-dns-alias", "pass", "localhost resolves to the ALB localhost")
	wantStatus(t, doc, "runtime-ingress-status", "pass", "has address localhost")
	wantStatus(t, doc, "nginx-tls-secret", "skip", "not NGINX by F5")
	alb.Spec.Rules[0].Host = "runtime.invalid"
	if _, err := c.Kube.NetworkingV1().Ingresses(albNS).Update(bg, alb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	res, doc = postReplayed(t, c, "-n", albNS, "--only=alb-dns-alias")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1", res.Code)
	}
	wantStatus(t, doc, "alb-dns-alias", "fail", "runtime.invalid does not resolve", "the Route 53 alias to the ALB localhost is missing", "Alias ON")

	// --fix --tls-secret on the NGINX Ingress, starting again from no spec.tls.
	in, err := c.Kube.NetworkingV1().Ingresses(ns).Get(bg, "codefresh-gitops-runtime", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in.Spec.TLS = nil
	if _, err := c.Kube.NetworkingV1().Ingresses(ns).Update(bg, in, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	tlsOf := func() ([]networkingv1.IngressTLS, string) {
		in, err := c.Kube.NetworkingV1().Ingresses(ns).Get(bg, "codefresh-gitops-runtime", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return in.Spec.TLS, in.ResourceVersion
	}
	noKey := func(res testcluster.Result) {
		t.Helper()
		out := res.Stdout + res.Stderr
		if strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, base64.StdEncoding.EncodeToString(keyPEM)) {
			t.Fatal("the private key was printed")
		}
	}
	fixArgs := []string{"--only=nginx-tls-secret", "--fix"}
	// Refused: the certificate does not cover the host; nothing is patched.
	res, doc = post(t, c, append(fixArgs, "--tls-secret=wrong-host", "--yes")...)
	noKey(res)
	if res.Code != 1 || !strings.Contains(res.Stderr, "cannot fix") || !strings.Contains(res.Stderr, "does not cover runtime.example.com") {
		t.Fatalf("refused fix: exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	if tls, _ := tlsOf(); len(tls) != 0 {
		t.Fatalf("refused fix patched spec.tls: %v", tls)
	}
	// Dry run: the plan, sent server-side as a dry run, changes nothing.
	_, rv0 := tlsOf()
	res, _ = post(t, c, append(fixArgs, "--tls-secret=runtime-tls", "--dry-run")...)
	noKey(res)
	if !strings.Contains(res.Stderr, "Ingress/codefresh/codefresh-gitops-runtime") ||
		!strings.Contains(res.Stderr, "spec.tls: <none> → [{hosts: [runtime.example.com], secretName: runtime-tls}]") {
		t.Fatalf("dry-run plan:\n%s", res.Stderr)
	}
	if tls, rv := tlsOf(); len(tls) != 0 || rv != rv0 {
		t.Fatalf("dry run changed the Ingress: %v (resourceVersion %s → %s)", tls, rv0, rv)
	}
	// Applied: the check runs again and passes.
	res, doc = post(t, c, append(fixArgs, "--tls-secret=runtime-tls", "--yes")...)
	noKey(res)
	if res.Code != 0 {
		t.Fatalf("fix: exit %d\nstderr:\n%s", res.Code, res.Stderr)
	}
	wantStatus(t, doc, "nginx-tls-secret", "pass", "serves host runtime.example.com with Secret runtime-tls")
	tls, rv1 := tlsOf()
	if len(tls) != 1 || tls[0].SecretName != "runtime-tls" || len(tls[0].Hosts) != 1 || tls[0].Hosts[0] != host {
		t.Fatalf("spec.tls after the fix = %+v", tls)
	}
	// Idempotent: a second run has nothing to fix and changes nothing.
	res, doc = post(t, c, append(fixArgs, "--tls-secret=runtime-tls", "--yes")...)
	if res.Code != 0 || !strings.Contains(res.Stderr, "nothing to fix") {
		t.Fatalf("second fix: exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	wantStatus(t, doc, "nginx-tls-secret", "pass")
	if _, rv := tlsOf(); rv != rv1 {
		t.Fatalf("second fix changed the Ingress (resourceVersion %s → %s)", rv1, rv)
	}
}

// setTLS makes the Ingress serve host with secret.
func setTLS(t *testing.T, c *testcluster.Cluster, ns, name, host, secret string) *networkingv1.Ingress {
	t.Helper()
	in, err := c.Kube.NetworkingV1().Ingresses(ns).Get(bg, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: secret}}
	if in, err = c.Kube.NetworkingV1().Ingresses(ns).Update(bg, in, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return in
}

// writeCert writes a self-signed certificate for dnsNames and its key as PEM
// files and returns their paths.
func writeCert(t *testing.T, dir, name string, dnsNames ...string) (crtPath, keyPath string) {
	t.Helper()
	cert, key := testcert.SelfSigned(t, dnsNames...)
	crtPath, keyPath = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(crtPath, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, key, 0o600); err != nil {
		t.Fatal(err)
	}
	return crtPath, keyPath
}
