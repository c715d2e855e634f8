package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// The tests of this file run the checks whose rules come from the chart
// being installed against the real chart lines of the fixtures (0.30.0 and
// 0.27.6, read in place): the same cluster gets opposite verdicts from two
// charts.

// fixtureChartLine is the real chart of one release line in the shared
// fixtures, every file of it: "chart" (0.30.0), "chart-0.27" or
// "chart-0.26". chartLine is the copy Helm is given.
func fixtureChartLine(t *testing.T, dir string) string {
	t.Helper()
	return conflictsFixture(t, "gitops-runtime/"+dir+"/gitops-runtime")
}

// createArgoCDServer creates an Argo CD server Service (the labels the
// chart's hook looks for) and its Deployment running image in ns.
func createArgoCDServer(t *testing.T, c *tc.Cluster, ns, image string) {
	t.Helper()
	ctx := context.Background()
	pod := map[string]string{"app.kubernetes.io/name": "argocd-server"}
	labels := map[string]string{"app.kubernetes.io/component": "server", "app.kubernetes.io/part-of": "argocd", "app.kubernetes.io/name": "argocd-server"}
	if _, err := c.Kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-server", Labels: labels},
		Spec:       corev1.ServiceSpec{Selector: pod, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Kube.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-server", Labels: labels},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: pod},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: pod},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "argocd-server", Image: image}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestArgoCDVersionFollowsTheChart: Argo CD 3.1 and 3.4 judged against
// charts 0.30.0 (hook range ">=3.2 <=3.4") and 0.27.6 (">=3 <=3.2"): the
// verdicts flip with the chart, each message naming the chart version the
// range came from; --argocd-version-range replaces the range and says so.
func TestArgoCDVersionFollowsTheChart(t *testing.T) {
	tc.Parallel(t)
	c := tc.Start(t)
	c.CreateNamespace(t, "argocd")
	createArgoCDServer(t, c, "argocd", "quay.io/argoproj/argocd:v3.1.8")
	values := chartValues(t, renderingValues)
	c030, c027 := fixtureChartLine(t, "chart"), fixtureChartLine(t, "chart-0.27")
	run := func(chartDir string, extra ...string) (tc.Result, reporters.Document) {
		t.Helper()
		return c.RunJSONReplayed(t, nil, append([]string{"--only", "argocd-server,argocd-version", "--existing-argocd",
			"--chart", chartDir, "-f", values, "-n", "argocd", "--release-name", "cf-gitops-runtime"}, extra...)...)
	}

	res, doc := run(c030)
	wantCode(t, res, 1)
	ch := wantStatus(t, doc, "argocd-version", "fail", `Argo CD v3.1.8 does not satisfy ">=3.2 <=3.4"`, "validate-values hook of chart gitops-runtime 0.30.0")
	if ch.Impact != "install-fails" {
		t.Errorf("impact %q: the chart's hook fails the install", ch.Impact)
	}
	wantStatus(t, doc, "argocd-server", "pass", "Service argocd/argocd-server", "ARGOCD_LABELS of the validate-values hook of chart gitops-runtime 0.30.0")
	res, doc = run(c027)
	wantCode(t, res, 0)
	wantStatus(t, doc, "argocd-version", "pass", `Argo CD v3.1.8 satisfies ">=3 <=3.2"`, "chart gitops-runtime 0.27.6")

	dep, err := c.Kube.AppsV1().Deployments("argocd").Get(context.Background(), "argocd-server", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dep.Spec.Template.Spec.Containers[0].Image = "quay.io/argoproj/argocd:v3.4.2"
	if _, err := c.Kube.AppsV1().Deployments("argocd").Update(context.Background(), dep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	res, doc = run(c030)
	wantCode(t, res, 0)
	wantStatus(t, doc, "argocd-version", "pass", `Argo CD v3.4.2 satisfies ">=3.2 <=3.4"`, "chart gitops-runtime 0.30.0")
	res, doc = run(c027)
	wantCode(t, res, 1)
	wantStatus(t, doc, "argocd-version", "fail", `Argo CD v3.4.2 does not satisfy ">=3 <=3.2"`, "chart gitops-runtime 0.27.6")

	res, doc = run(c027, "--argocd-version-range", ">=3 <=3.4")
	wantCode(t, res, 0)
	wantStatus(t, doc, "argocd-version", "pass", `satisfies ">=3 <=3.4"`, `--argocd-version-range, in place of ">=3 <=3.2"`, "chart gitops-runtime 0.27.6")
}

// TestSubchartKubeVersionAgreesWithHelm: on a cluster reporting v1.24.17
// the Argo CD subchart's kubeVersion (">=1.25.0-0") is not met. The plugin
// warns naming it (exit 0), and real Helm, through the same fake /version,
// installs (server-side dry run): Helm does not enforce a subchart's
// kubeVersion. With Argo CD disabled the rule is not the install's.
func TestSubchartKubeVersionAgreesWithHelm(t *testing.T) {
	tc.Parallel(t)
	c := tc.Start(t)
	kc := c.Proxy(t, tc.FakeVersion("v1.24.17", "1", "24"))
	values := chartValues(t, renderingValues)
	run := func(extra ...string) (tc.Result, reporters.Document) {
		t.Helper()
		res := tc.Run(t, nil, append([]string{"--kubeconfig", kc, "-o", "json", "--only", "kubernetes-version,chart-renders",
			"--chart", fixtureChart(t), "-f", values, "-n", "ns1", "--release-name", "rel1"}, extra...)...)
		return res, res.JSON(t)
	}
	res, doc := run()
	wantCode(t, res, 0)
	ch := wantStatus(t, doc, "kubernetes-version", "warn", "v1.24.17", `gitops-runtime/argo-cd`, `">=1.25.0-0"`, "chart gitops-runtime 0.30.0")
	if ch.Impact != "runtime-breaks" {
		t.Errorf("impact %q, want runtime-breaks", ch.Impact)
	}
	wantStatus(t, doc, "chart-renders", "pass")
	out, code := helmCmdKubeconfig(t, kc, tc.HelmBinary(t), "install", "rel1", fixtureChart(t), "-n", "ns1", "--no-hooks", "-f", values, "--dry-run=server")
	if code != 0 {
		t.Errorf("plugin: install goes through (warn); helm install --dry-run=server on v1.24.17 fails:\n%s", out)
	}

	res, doc = run("--existing-argocd")
	wantCode(t, res, 0)
	wantStatus(t, doc, "kubernetes-version", "pass", "v1.24.17", "chart gitops-runtime 0.30.0")
}

// TestValidationHooksAndPlainToken: the real chart 0.30.0 rendered with
// installer.skipValidation=true and a plain user token: both advisories warn
// naming the chart (exit 0; 1 with --fail-on warn), the token never printed;
// with a secretKeyRef and the hooks on, both pass.
func TestValidationHooksAndPlainToken(t *testing.T) {
	tc.Parallel(t)
	c := tc.Start(t)
	const token = "plain-e2e-token-7c1d"
	plain := chartValues(t, `global:
  codefresh:
    accountId: acc-e2e
    userToken:
      token: `+token+`
  runtime:
    name: rt-e2e
`)
	only := []string{"--only", "validation-hooks,user-token-secret", "--chart", fixtureChart(t)}
	for _, format := range []string{"json", "table"} {
		res := tc.Run(t, nil, append([]string{"--kubeconfig", c.AdminKubeconfig(), "-o", format, "-f", plain, "--set", "installer.skipValidation=true"}, only...)...)
		wantCode(t, res, 0)
		if strings.Contains(res.Stdout+res.Stderr, token) {
			t.Errorf("%s output shows the token", format)
		}
		if format == "json" {
			doc := res.JSON(t)
			wantStatus(t, doc, "validation-hooks", "warn", "installer.skipValidation=true: no validate-values hook", "chart gitops-runtime 0.30.0")
			ch := wantStatus(t, doc, "user-token-secret", "warn", "ConfigMap helm-values-config", "chart gitops-runtime 0.30.0", "secretKeyRef")
			if ch.Impact != "advisory" {
				t.Errorf("impact %q", ch.Impact)
			}
		}
	}
	res, _ := c.RunJSONReplayed(t, nil, append([]string{"-f", plain, "--set", "installer.skipValidation=true", "--fail-on", "warn"}, only...)...)
	wantCode(t, res, 1)

	ref := chartValues(t, `global:
  codefresh:
    accountId: acc-e2e
    userToken:
      secretKeyRef: {name: cf-user-token, key: token}
  runtime:
    name: rt-e2e
`)
	res, doc := c.RunJSONReplayed(t, nil, append([]string{"-f", ref}, only...)...)
	wantCode(t, res, 0)
	wantStatus(t, doc, "validation-hooks", "pass", "chart gitops-runtime 0.30.0")
	wantStatus(t, doc, "user-token-secret", "pass")
}

// TestSecondRuntimeAgreesWithHelm installs a first runtime of chart 0.30.0
// for real with Helm in namespaced mode, installing the cluster-wide parts
// (the chart's values-multi-runtimes.yaml and values-multi-runtimes-first.yaml),
// then asks the plugin and Helm about a second one: namespaced without the
// CRDs (values-multi-runtimes.yaml), the plugin passes existing-runtime and
// Helm installs; cluster-wide (the chart's defaults), the plugin fails naming
// the rule and Helm fails.
func TestSecondRuntimeAgreesWithHelm(t *testing.T) {
	tc.Parallel(t, tc.Long)
	c := tc.Start(t)
	helm := tc.HelmBinary(t)
	dir := fixtureChartLine(t, "chart") // the chart's own example values files
	multi, first := filepath.Join(dir, "values-multi-runtimes.yaml"), filepath.Join(dir, "values-multi-runtimes-first.yaml")
	// The multi-runtime values turn the tunnel off: the runtime URL is given.
	base := chartValues(t, renderingValues+"    ingressUrl: https://rt.example.test\n")
	if out, ok := helmInstall(t, c, helm, "rel1", "ns1", base, "-f", multi, "-f", first, "--set", "global.runtime.name=rt1"); !ok {
		t.Fatalf("helm install of the first runtime failed:\n%s", out)
	}
	only := "existing-runtime,helm-ownership,chart-renders"
	run := func(rel, ns string, extra ...string) (tc.Result, reporters.Document) {
		t.Helper()
		return c.RunJSONReplayed(t, nil, append([]string{"--only", only, "--chart", dir, "-f", base, "--release-name", rel, "-n", ns}, extra...)...)
	}

	// A cluster-wide runtime beside it: the plugin fails, Helm fails.
	res, doc := run("rel3", "ns3", "--set", "global.runtime.name=rt3")
	wantCode(t, res, 1)
	wantStatus(t, doc, "existing-runtime", "fail", "runtime release rel1 in namespace ns1 (chart gitops-runtime-0.30.0)", "the planned runtime is cluster-wide",
		"would install the cluster-wide parts", "Multi Runtime Installation")
	out, ok := helmInstall(t, c, helm, "rel3", "ns3", base, "--set", "global.runtime.name=rt3")
	agree(t, "cluster-wide second runtime", res, out, ok)

	// A namespaced second runtime without the CRDs: the plugin passes, Helm
	// installs. Not replayed: the run above recorded and replayed the same
	// reads, and chart-renders decides which of these values the chart
	// ignores by rendering it without each group of them (12.8 CPU-s
	// measured in a loaded suite), which a replay does again.
	res, doc = c.RunJSON(t, nil, "--only", only, "--chart", dir, "-f", base, "--release-name", "rel2", "-n", "ns2", "-f", multi, "--set", "global.runtime.name=rt2")
	wantStatus(t, doc, "existing-runtime", "pass", "runtime release rel1 in namespace ns1 (chart gitops-runtime-0.30.0): namespaced, installs the cluster-wide parts",
		"the planned runtime (release rel2 in namespace ns2, chart gitops-runtime 0.30.0 rendered with these values): namespaced, installs no CRDs")
	out, ok = helmInstall(t, c, helm, "rel2", "ns2", base, "-f", multi, "--set", "global.runtime.name=rt2")
	agree(t, "namespaced second runtime", res, out, ok)
	wantCode(t, res, 0)
}

// TestLeftoverRuntimeToken: a codefresh-token Secret left in the runtime
// namespace with no release there is judged as the chart 0.30.0 hook will
// judge it, by asking the platform (a local stub through --connect-to)
// for the runtime with that token: gone, it fails; still known (a
// reinstall after helm uninstall --no-hooks), it passes; with no platform
// answering it warns, naming both outcomes. The token is sent to the stub
// and never printed; deleted, the check passes.
func TestLeftoverRuntimeToken(t *testing.T) {
	tc.Parallel(t)
	c := tc.Start(t)
	c.CreateNamespace(t, "cf")
	const token = "leftover-e2e-token-3b2a"
	if _, err := c.Kube.CoreV1().Secrets("cf").Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "codefresh-token"}, StringData: map[string]string{"token": token},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	values := chartValues(t, renderingValues)
	args := []string{"--only", "leftover-runtime-token", "--chart", fixtureChart(t), "-f", values, "-n", "cf"}
	res, doc := c.RunJSONReplayed(t, nil, args...)
	wantCode(t, res, 0)
	wantStatus(t, doc, "leftover-runtime-token", "warn", "Secret cf/codefresh-token holds a runtime token", "runtime-token mode",
		"the platform did not answer", "which of the two outcomes is unknown", "failed getting runtime from platform", "kubectl delete secret codefresh-token -n cf")

	// The platform, as a local stub.
	platformValues := chartValues(t, strings.Replace(renderingValues, "  codefresh:\n", "  codefresh:\n    url: https://platform.example.test\n", 1))
	ca := newCA(t)
	now := time.Now()
	cert, _ := ca.Leaf(t, "platform.example.test", now.Add(-time.Hour), now.Add(24*time.Hour))
	api := &platformAPI{admin: true, account: "acc-e2e"}
	port := servePlatform(t, api, cert)
	withPlatform := []string{"--only", "leftover-runtime-token", "--chart", fixtureChart(t), "-f", platformValues, "-n", "cf",
		"--connect-to", "platform.example.test:443:127.0.0.1:" + port, "--ca-file", ca.PEM}
	res, doc = c.RunJSON(t, nil, withPlatform...)
	wantCode(t, res, 1)
	ch := wantStatus(t, doc, "leftover-runtime-token", "fail", "which the platform does not know", `runtime "rt-e2e" does not exist`,
		"the hook fails with \"failed getting runtime from platform\"", "kubectl delete secret codefresh-token -n cf")
	if ch.Impact != "install-fails" {
		t.Errorf("impact %q", ch.Impact)
	}
	if got, _ := api.authorization.Load().(string); got != token {
		t.Errorf("the platform was asked with Authorization %q, want the leftover runtime token", got)
	}
	api.taken = "rt-e2e"
	res, doc = c.RunJSON(t, nil, withPlatform...)
	wantCode(t, res, 0)
	wantStatus(t, doc, "leftover-runtime-token", "pass", "the platform knows that runtime", "the hook passes")
	if strings.Contains(res.Stdout+res.Stderr, token) {
		t.Error("the token appears in the output")
	}
	if err := c.Kube.CoreV1().Secrets("cf").Delete(context.Background(), "codefresh-token", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	res, doc = c.RunJSONReplayed(t, nil, args...)
	wantCode(t, res, 0)
	wantStatus(t, doc, "leftover-runtime-token", "pass", "no Secret codefresh-token in namespace cf")
}

// platformAPI answers the validation hooks' GraphQL queries as the
// Codefresh platform does, per case.
type platformAPI struct {
	admin         bool
	account       string
	taken         string // a runtime name that exists
	usage, limit  int
	status        int           // answer every request with this HTTP status (0: 200)
	delay         time.Duration // before answering
	authorization atomic.Value  // the last Authorization header
}

func (p *platformAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.authorization.Store(r.Header.Get("Authorization"))
	time.Sleep(p.delay)
	if p.status != 0 {
		http.Error(w, `{"message":"Unauthorized"}`, p.status)
		return
	}
	var req struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	if r.URL.Path != "/2.0/api/graphql" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.NotFound(w, r)
		return
	}
	var data any
	switch {
	case strings.Contains(req.Query, "query Me"):
		data = map[string]any{"me": map[string]any{"id": "u1", "name": "dev", "isAdmin": p.admin, "activeAccount": map[string]any{"id": p.account, "name": "acme"}}}
	case strings.Contains(req.Query, "query GetRuntime"):
		if req.Variables["name"] == p.taken {
			data = map[string]any{"runtime": map[string]any{"metadata": map[string]any{"name": p.taken, "namespace": "cf"}}}
		} else {
			data = map[string]any{"runtime": map[string]any{"metadata": map[string]any{"name": ""}}}
		}
	case strings.Contains(req.Query, "query LimitsStatus"):
		data = map[string]any{"limitsStatus": map[string]any{"usage": map[string]any{"clusters": p.usage}, "limits": map[string]any{"clusters": p.limit}}}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
}

// TestPlatformUserTokenAgainstAStub: a local HTTPS stub of the platform API
// on 127.0.0.1, reached through --connect-to as platform.example.test
// (global.codefresh.url), trusted through --ca-file, answers as the platform
// does for each case; the verdict quotes the hook's error, a timeout is a
// skip, and the token reaches the stub but never the output.
func TestPlatformUserTokenAgainstAStub(t *testing.T) {
	tc.Parallel(t)
	c := tc.Start(t)
	const token = "platform-e2e-token-8d7e"
	values := chartValues(t, `global:
  codefresh:
    url: https://platform.example.test
    accountId: acc1
    userToken:
      token: `+token+`
  runtime:
    name: rt-e2e
`)
	ca := newCA(t)
	now := time.Now()
	cert, _ := ca.Leaf(t, "platform.example.test", now.Add(-time.Hour), now.Add(24*time.Hour))
	for _, tt := range []struct {
		name   string
		edit   func(*platformAPI)
		status string
		code   int
		msgs   []string
	}{
		{"all good", nil, "pass", 0, []string{"user dev is Admin in account acme (acc1)", `runtime name "rt-e2e" is free`, "clusters usage 1 of 5"}},
		{"name taken", func(p *platformAPI) { p.taken = "rt-e2e" }, "fail", 1, []string{`runtime "rt-e2e" already exists`}},
		{"not admin", func(p *platformAPI) { p.admin = false }, "fail", 1, []string{`user "dev" does not have Admin role in account "acme"`}},
		{"other account", func(p *platformAPI) { p.account = "acc2" }, "fail", 1, []string{`account mismatch - userToken is for accountId acc2`}},
		{"limit reached", func(p *platformAPI) { p.usage = 5 }, "fail", 1, []string{"clusters limit reached: usage=5, limit=5"}},
		{"401", func(p *platformAPI) { p.status = http.StatusUnauthorized }, "fail", 1, []string{"[401] - failed to make a GraphQL API request"}},
		{"timeout", func(p *platformAPI) { p.delay = 3 * time.Second }, "skip", 0, []string{"the platform did not answer", "https://platform.example.test"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := &platformAPI{admin: true, account: "acc1", usage: 1, limit: 5}
			if tt.edit != nil {
				tt.edit(api)
			}
			port := servePlatform(t, api, cert)
			res, doc := c.RunJSON(t, nil, "--only", "platform-user-token", "--chart", fixtureChart(t), "-f", values, "-n", "cf",
				"--connect-to", "platform.example.test:443:127.0.0.1:"+port, "--ca-file", ca.PEM, "--request-timeout", "1s")
			wantCode(t, res, tt.code)
			ch := wantStatus(t, doc, "platform-user-token", tt.status, tt.msgs...)
			if tt.status == "fail" && ch.Impact != "install-fails" {
				t.Errorf("impact %q", ch.Impact)
			}
			if strings.Contains(res.Stdout+res.Stderr, token) {
				t.Error("the token appears in the output")
			}
			if got, _ := api.authorization.Load().(string); got != token {
				t.Errorf("the stub got Authorization %q, want the user token", got)
			}
		})
	}
}

// TestChartKubeVersionAgreesWithHelm: a chart whose own kubeVersion the
// cluster does not meet: the plugin fails kubernetes-version (install-fails)
// and real Helm refuses the install; met, both go ahead.
func TestChartKubeVersionAgreesWithHelm(t *testing.T) {
	tc.Parallel(t)
	c := tc.Start(t)
	helm := tc.HelmBinary(t)
	dir := filepath.Join(t.TempDir(), "gitops-runtime")
	writeFile := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeFile("templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kv-probe\n")
	values := chartValues(t, "{}\n")
	for _, tt := range []struct {
		constraint string
		status     string
		code       int
	}{
		{">=1.99.0-0", "fail", 1},
		{">=1.20.0-0", "pass", 0},
	} {
		writeFile("Chart.yaml", "apiVersion: v2\nname: gitops-runtime\nversion: 9.9.9\nkubeVersion: \""+tt.constraint+"\"\n")
		res, doc := c.RunJSONReplayed(t, nil, "--only", "kubernetes-version", "--chart", dir, "-f", values, "-n", "kv", "--release-name", "kv")
		wantCode(t, res, tt.code)
		ch := wantStatus(t, doc, "kubernetes-version", tt.status, `gitops-runtime 9.9.9 (kubeVersion "`+tt.constraint+`")`)
		if tt.status == "fail" && ch.Impact != "install-fails" {
			t.Errorf("impact %q, want install-fails", ch.Impact)
		}
		out, code := helmCmd(t, c, helm, "install", "kv", dir, "-n", "kv", "--create-namespace", "-f", values, "--dry-run=server")
		if (code == 0) != (res.Code == 0) {
			t.Errorf("kubeVersion %s: plugin exit %d, helm install exit %d:\n%s", tt.constraint, res.Code, code, out)
		}
		if tt.status == "fail" && !strings.Contains(out, "chart requires kubeVersion") {
			t.Errorf("helm refused for another reason:\n%s", out)
		}
	}
}

// servePlatform serves api over TLS with cert on 127.0.0.1 until the test
// ends and returns its port (reached through --connect-to).
func servePlatform(t *testing.T, api *platformAPI, cert tls.Certificate) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}
