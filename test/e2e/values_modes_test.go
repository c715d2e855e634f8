package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

const plantedToken = "cfTOKEN-5f1e2d3c4b5a-DO-NOT-PRINT"

// Values files and --set as input: each rule passing and failing, broken
// input exits 2, and no secret value in any output format.
func TestValuesInput(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.Start(t)
	c.CreateNamespace(t, "codefresh")
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	only := []string{"--only", "values"}
	v := func(want string, args ...string) {
		t.Helper()
		expectReplayed(t, c, map[string]string{"values": want}, append(only, args...)...)
	}
	tok := "global.codefresh.userToken.token=" + plantedToken
	acc := "global.codefresh.accountId=acc123"

	v("skip")
	// tunnel (default mode): token + accountId.
	base := file("base.yaml", "global:\n  codefresh:\n    accountId: acc123\n    userToken:\n      token: "+plantedToken+"\n")
	v("pass", "-f", base)
	v("fail", "--set", tok)                                                                                                 // no accountId
	v("fail", "-f", base, "--set", "global.codefresh.userToken.token=")                                                     // no token
	v("fail", "-f", base, "--set", "global.codefresh.accountId=", "--set", acc+"x", "--set", "global.codefresh.accountId=") // later --set wins
	// secretKeyRef to a Secret in the runtime namespace.
	ref := []string{"--set", acc, "--set", "global.codefresh.userToken.secretKeyRef.name=cf-user", "--set", "global.codefresh.userToken.secretKeyRef.key=token"}
	v("fail", ref...)
	_, err := c.Kube.CoreV1().Secrets("codefresh").Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cf-user"},
		Data:       map[string][]byte{"token": []byte(plantedToken), "empty": {}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v("pass", ref...)
	v("fail", append(ref, "--set", "global.codefresh.userToken.secretKeyRef.key=empty")...)
	v("fail", append(ref, "--set", "global.codefresh.userToken.secretKeyRef.key=other")...)
	v("fail", append(ref, "--set", "global.codefresh.userToken.secretKeyRef.name=codefresh-token")...)
	// ingress mode: hosts[0].
	v("fail", "-f", base, "--set", "global.runtime.ingress.enabled=true")
	v("pass", "-f", base, "--set", "global.runtime.ingress.enabled=true", "--set", "global.runtime.ingress.hosts[0]=h.example.test")
	v("pass", "-f", base, "--ingress-host", "h.example.test")
	v("fail", "-f", base, "--ingress-host", "h.example.test", "--set", "global.runtime.ingress.protocol=ftp")
	// service-mesh: ingressUrl starting with http.
	v("fail", "-f", base, "--set", "tunnel-client.enabled=false")
	v("fail", "-f", base, "--ingress-url", "ftp://m.example.test")
	v("pass", "-f", base, "--ingress-url", "https://m.example.test")
	// gitCredentials secretKeyRef needs name and key.
	v("fail", "-f", base, "--set", "global.runtime.gitCredentials.password.secretKeyRef.name=cf-user")
	v("pass", "-f", base, "--set", "global.runtime.gitCredentials.password.secretKeyRef.name=cf-user", "--set", "global.runtime.gitCredentials.password.secretKeyRef.key=token")
	// Stale key.
	v("warn", "-f", base, "-f", file("stale.yaml", "global:\n  external-argo-cd:\n    server:\n      svc: argocd-server\n"))

	// Broken input: exit 2, one line, nothing checked.
	for _, args := range [][]string{
		{"-f", file("broken.yaml", "global:\n  codefresh: [\n  x\n")},
		{"-f", filepath.Join(dir, "missing.yaml")},
		{"--set", "a.b[=1"},
		{"--connect-to", "nonsense"},
		{"--ca-file", file("notpem.txt", "hello")},
	} {
		res := testcluster.Run(t, nil, append([]string{"--kubeconfig", c.AdminKubeconfig()}, args...)...)
		if res.Code != 2 || res.Stdout != "" || strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line", args, res.Code, res.Stdout, res.Stderr)
		}
	}

	// No secret in any output: the planted token, in a values file, in --set
	// and in the referenced Secret, through every check and both formats.
	for _, format := range []string{"json", "table"} {
		for _, args := range [][]string{
			{"-f", base},
			{"--set", tok, "--ingress-host", "h.example.test"},
			append([]string{}, ref...),
		} {
			res := testcluster.Run(t, nil, append([]string{"--kubeconfig", c.AdminKubeconfig(), "-o", format, "--request-timeout", "2s",
				"--set", "global.codefresh.url=https://127.0.0.1:1", "--set", "tunnel-client.tunnelServer.host=127.0.0.1:1"}, args...)...)
			if strings.Contains(res.Stdout+res.Stderr, plantedToken) || strings.Contains(res.Stdout+res.Stderr, "5f1e2d3c4b5a") {
				t.Errorf("%s %v: the token appears in the output", format, args)
			}
			if res.Stdout == "" {
				t.Errorf("%s %v: no report (exit %d): %s", format, args, res.Code, res.Stderr)
			}
		}
	}
}

// service-mesh (ingress-url), tunnel (platform-reachable) and existing Argo
// CD (argocd-server, argocd-version, argocd-admin-apikey) against local
// servers and the upstream Argo CD manifest.
func TestServiceMeshTunnelArgoCD(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.Start(t)
	c.CreateNamespace(t, "codefresh")

	// ingress-url
	port := serveHTTP(t)
	mesh := []string{"--only", "ingress-url,platform-reachable", "--request-timeout", "3s"}
	expectReplayed(t, c, map[string]string{"ingress-url": "pass", "platform-reachable": "skip"}, append(mesh, "--ingress-url", "http://127.0.0.1:"+port+"/")...)
	expectReplayed(t, c, map[string]string{"ingress-url": "fail"}, append(mesh, "--ingress-url", "http://127.0.0.1:1/")...)
	expectReplayed(t, c, map[string]string{"ingress-url": "fail"}, append(mesh, "--access-mode", "service-mesh")...)
	expectReplayed(t, c, map[string]string{"ingress-url": "skip"}, mesh...)

	// platform-reachable: both hosts mapped to local TLS servers.
	ca := newCA(t)
	now := time.Now()
	pc, _ := ca.Leaf(t, "platform.example.test", now.Add(-time.Hour), now.Add(24*time.Hour))
	tc, _ := ca.Leaf(t, "tunnel.example.test", now.Add(-time.Hour), now.Add(24*time.Hour))
	pp, tp := serveTLS(t, pc), serveTLS(t, tc)
	tun := append(slices.Clone(mesh), "--set", "global.codefresh.url=https://platform.example.test", "--set", "tunnel-client.tunnelServer.host=tunnel.example.test",
		"--connect-to", "platform.example.test:443:127.0.0.1:"+pp, "--connect-to", "tunnel.example.test:443:127.0.0.1:"+tp)
	expectReplayed(t, c, map[string]string{"platform-reachable": "pass", "ingress-url": "skip"}, append(tun, "--ca-file", ca.PEM)...)
	res, doc := c.RunJSONReplayed(t, nil, tun...) // unknown CA: warn only
	if got := testcluster.Check(t, doc, "platform-reachable"); got.Status != "warn" || !strings.Contains(got.Message, "workstation") || res.Code != 0 {
		t.Errorf("platform-reachable without the CA: %s %q exit %d", got.Status, got.Message, res.Code)
	}

	// Existing Argo CD.
	applyUpstream(t, c, "argo-cd/install.yaml", "-n", "codefresh")
	argo := []string{"--existing-argocd", "--only", "argocd-server,argocd-version,argocd-admin-apikey"}
	expectReplayed(t, c, map[string]string{"argocd-server": "skip", "argocd-version": "skip"}, "--only", "argocd-server,argocd-version")
	expectReplayed(t, c, map[string]string{"argocd-server": "pass", "argocd-version": "warn", "argocd-admin-apikey": "fail"}, argo...) // image :latest, no accounts.admin
	expectReplayed(t, c, map[string]string{"argocd-server": "fail", "argocd-version": "skip"}, append(argo, "-n", "elsewhere")...)
	c.Kubectl(t, "set", "image", "-n", "codefresh", "deploy/argocd-server", "argocd-server=quay.io/argoproj/argocd:v3.3.2")
	c.Kubectl(t, "patch", "configmap", "argocd-cm", "-n", "codefresh", "--type", "merge", "-p", `{"data":{"accounts.admin":"apiKey, login"}}`)
	expectReplayed(t, c, map[string]string{"argocd-version": "pass", "argocd-admin-apikey": "pass"}, argo...)
	c.Kubectl(t, "set", "image", "-n", "codefresh", "deploy/argocd-server", "argocd-server=quay.io/argoproj/argocd:v2.14.9")
	c.Kubectl(t, "patch", "configmap", "argocd-cm", "-n", "codefresh", "--type", "merge", "-p", `{"data":{"accounts.admin.enabled":"false"}}`)
	expectReplayed(t, c, map[string]string{"argocd-version": "fail", "argocd-admin-apikey": "fail"}, argo...)
	expectReplayed(t, c, map[string]string{"argocd-version": "pass"}, append(argo, "--argocd-version-range", ">=2.12 <=3.3")...)
}
