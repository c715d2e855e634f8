package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/fixtures"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
)

// upstream returns the path of an upstream fixture (see conflictsFixture),
// failing (never skipping) when it is missing.
func upstream(t *testing.T, rel string) string {
	t.Helper()
	return conflictsFixture(t, rel)
}

// fixtureChart is the real chart 0.30.0 with its dependencies, as the tests
// give it to Helm (chartLine).
func fixtureChart(t *testing.T) string {
	t.Helper()
	return chartLine(t, "chart")
}

// chartValues writes a values file (YAML) for the chart and returns its path.
func chartValues(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// renderingValues is the smallest values file the chart renders with
// (../shared/spec/sources.md).
const renderingValues = `global:
  codefresh:
    accountId: acc-e2e
    userToken:
      token: not-a-real-token
  runtime:
    name: rt-e2e
`

// helmCmd runs a real helm client against c as admin, with its own Helm
// home (no repositories, no cache of the developer's), and returns its
// combined output and exit code.
func helmCmd(t *testing.T, c *testcluster.Cluster, helm string, args ...string) (string, int) {
	t.Helper()
	return helmCmdKubeconfig(t, c.AdminKubeconfig(), helm, args...)
}

// helmCmdKubeconfig is helmCmd with another kubeconfig (a proxy's).
func helmCmdKubeconfig(t *testing.T, kubeconfig, helm string, args ...string) (string, int) {
	t.Helper()
	// Helm's own --timeout bounds what it waits for; this bounds a call
	// that hangs. A loaded runner took more than 4 minutes over an install
	// with --wait --timeout 2m (the objects created before the wait).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, helm, append(args, "--kubeconfig", kubeconfig)...)
	cmd.Env = helmClientEnv(home)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("helm %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), code
}

// helmClientEnv is the whole environment of a helm client the tests run: PATH, a
// HOME of its own with Helm's cache, config and data under it (no
// repositories, no cache of the developer's or of another test), and the
// GOGC of Helm clients (testcluster.HelmGOGC).
func helmClientEnv(home string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"), "HELM_CONFIG_HOME=" + filepath.Join(home, "config"), "HELM_DATA_HOME=" + filepath.Join(home, "data"),
		testcluster.HelmGOGC}
}

// helmInstall runs `helm install REL CHART -n NS --create-namespace
// --no-hooks -f VALUES` and returns its output and whether it succeeded.
func helmInstall(t *testing.T, c *testcluster.Cluster, helm, rel, ns, values string, extra ...string) (string, bool) {
	t.Helper()
	args := append([]string{"install", rel, fixtureChart(t), "-n", ns, "--create-namespace", "--no-hooks", "-f", values}, extra...)
	out, code := helmCmd(t, c, helm, args...)
	return out, code == 0
}

// agree fails the test when the plugin's verdict (exit 0 = Helm installs)
// and Helm's disagree.
func agree(t *testing.T, what string, res testcluster.Result, helmOut string, helmOK bool) {
	t.Helper()
	if (res.Code == 0) != helmOK {
		t.Errorf("%s: plugin exit %d but helm install ok=%v\nplugin:\n%s\nhelm:\n%s", what, res.Code, helmOK, res.Stdout, helmOut)
	}
}

// conflictsFixture returns the path of an upstream manifest or chart (read
// at test time, never copied; internal/fixtures says where it looks), failing
// the test, naming `make fixtures`, when no fixture folder has it.
func conflictsFixture(t *testing.T, rel string) string {
	t.Helper()
	dir, err := fixtures.DirFrom(testcluster.RepoRoot(t), os.Getenv, filepath.ToSlash(rel))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, rel)
}

// crdVersions returns every CRD's resourceVersion and metadata, by name.
func crdVersions(t *testing.T, c *testcluster.Cluster) map[string]metav1.PartialObjectMetadata {
	t.Helper()
	list, err := metadata.NewForConfigOrDie(c.Admin).Resource(cluster.CRDResource).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]metav1.PartialObjectMetadata{}
	for _, m := range list.Items {
		out[m.Name] = m
	}
	return out
}

// written is what a client's write of an object changes: its generation,
// labels, annotations and the managers of its fields with the time of their
// last write, the status subresource left out (the API server's own
// controller writes a new CRD's status when it comes to it, which on a
// loaded machine is after a test read the CRD; its resourceVersion moves
// with it).
func written(m metav1.ObjectMeta) string {
	var managers []string
	for _, f := range m.ManagedFields {
		if f.Subresource == "" {
			managers = append(managers, fmt.Sprintf("%s %s %s", f.Manager, f.Operation, f.Time))
		}
	}
	return fmt.Sprintf("generation %d, labels %v, annotations %v, field managers %v", m.Generation, m.Labels, m.Annotations, managers)
}

// sameVersions fails the test when a CRD of before that names selects was
// written (written) by the time of after, or is gone.
func sameVersions(t *testing.T, before, after map[string]metav1.PartialObjectMetadata, names func(string) bool, what string) {
	t.Helper()
	n := 0
	for name, b := range before {
		if !names(name) {
			continue
		}
		n++
		if a, ok := after[name]; !ok || written(a.ObjectMeta) != written(b.ObjectMeta) {
			t.Errorf("%s: CRD %s changed:\n before: %s\n after:  %s", what, name, written(b.ObjectMeta), written(a.ObjectMeta))
		}
	}
	if n == 0 {
		t.Fatalf("%s: no CRD matched", what)
	}
}

func isRollouts(name string) bool { return isArgo(name) && contains(checks.ArgoRolloutsCRDs, name) }

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, mode); err != nil {
		t.Fatal(err)
	}
}

// pluginCheckout lays out what `helm plugin install <checkout>` reads from a
// built checkout: plugin.yaml, plugin.complete and bin/kubectl-gitops_preflight
// (the built binary), in a temporary directory it returns.
func pluginCheckout(t *testing.T, root string) string {
	t.Helper()
	checkout := t.TempDir()
	copyFile(t, filepath.Join(root, "plugin.yaml"), filepath.Join(checkout, "plugin.yaml"), 0o644)
	copyFile(t, filepath.Join(root, "plugin.complete"), filepath.Join(checkout, "plugin.complete"), 0o755)
	copyFile(t, testcluster.Binary(t), filepath.Join(checkout, "bin", "kubectl-gitops_preflight"), 0o755)
	return checkout
}

// runtimeGlobals are the e2e runtime's global values (account, token,
// runtime name): a values file's, or an umbrella chart's beside
// gitops-runtime:.
const runtimeGlobals = `global:
  codefresh:
    accountId: e2e-account
    userToken:
      token: e2e-token
  runtime:
    name: e2e-runtime
`

// runtimeValues writes the values the chart needs to render (account, token,
// runtime name; everything else the chart's defaults) plus extra YAML.
func runtimeValues(t *testing.T, extra string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "values.yaml")
	writeFile(t, p, runtimeGlobals+extra)
	return p
}

// helm runs the real helm client against c with a private HOME (kubectl's
// discovery cache is under it), cache and config.
func helm(t *testing.T, c *testcluster.Cluster, args ...string) (string, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(testcluster.HelmBinary(t), append(args, "--kubeconfig", c.AdminKubeconfig())...)
	cmd.Env = append(os.Environ(), "HOME="+home, "HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"), testcluster.HelmGOGC)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// chartLine is the path of a fixture chart line: "chart" (0.30.0),
// "chart-0.27" (0.27.6) or "chart-0.26" (0.26.8), as the tests give it to
// Helm, Argo CD and the plugin: a copy without the files no template reads
// (testcluster.TrimmedChart).
func chartLine(t *testing.T, line string) string {
	t.Helper()
	return tc.TrimmedChart(t, fixtureChartLine(t, line))
}

// upgradePlugin runs the plugin's upgrade checks of the runtime release
// against chart with args (values flags).
func upgradePlugin(t *testing.T, c *testcluster.Cluster, chart string, args ...string) (testcluster.Result, reporters.Document) {
	t.Helper()
	all := append([]string{"--upgrade", "--only", upgradeChecksOnly, "--chart", chart, "-n", runtimeNS, "--release-name", runtimeRelease}, args...)
	before := survivors(t, c)
	res, doc := c.RunJSON(t, nil, all...)
	if after := survivors(t, c); after != before {
		t.Fatalf("the plugin's --upgrade run changed the cluster (its writes must all be dry runs):\nbefore: %s\nafter:  %s", before, after)
	}
	if doc.Mode != "upgrade" {
		t.Fatalf("mode %q, want upgrade\n%s", doc.Mode, res.Stdout)
	}
	return res, doc
}

// helmUpgrade runs `helm upgrade` of the runtime release to chart with args
// (no hooks: the scenarios are about what Helm applies and deletes).
func helmUpgrade(t *testing.T, c *testcluster.Cluster, helmBin, chart string, args ...string) (string, bool) {
	t.Helper()
	out, code := helmCmd(t, c, helmBin, append([]string{"upgrade", runtimeRelease, chart, "-n", runtimeNS, "--no-hooks"}, args...)...)
	return out, code == 0
}

// installLine installs the runtime release from chart with real Helm (no
// hooks) and the values file v plus extra.
func installLine(t *testing.T, c *testcluster.Cluster, helmBin, chart, v string, extra ...string) {
	t.Helper()
	args := append([]string{"install", runtimeRelease, chart, "-n", runtimeNS, "--create-namespace", "--no-hooks", "-f", v}, extra...)
	if out, code := helmCmd(t, c, helmBin, args...); code != 0 {
		t.Fatalf("helm install %s: %s", chart, out)
	}
}

// The gitops-runtime chart 0.30.0 (the shared fixture), installed by real Helm
// with its hooks on a full test cluster: the post-install checks read what
// the controllers, the scheduler and kwok made of it.
const runtimeNS, runtimeRelease = "codefresh", "cf-gitops-runtime"

func isArgo(name string) bool { return strings.HasSuffix(name, ".argoproj.io") }

var upgradeChecksOnly = "release-upgradable,release-apis,upgrade-path,upgrade-values,upgrade-deletes,upgrade-apply,chart-renders,helm-ownership,argo-crds-ownership"

// survivors names the Deployments, ConfigMaps and CRDs of the cluster: a
// real (not dry-run) create or delete of the plugin changes it (status
// writes of the controllers, and the ConfigMaps kube-root-ca.crt the
// controller-manager publishes into each namespace, do not).
func survivors(t *testing.T, c *tc.Cluster) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	deps, err := c.Kube.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deps.Items {
		fmt.Fprintf(&b, "deployment %s/%s ", d.Namespace, d.Name)
	}
	cms, err := c.Kube.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cms.Items {
		// kube-root-ca.crt is the controller-manager's (its root-CA
		// publisher writes one into each namespace, under load seconds
		// after the namespace), not a write of the plugin.
		if m.Name == "kube-root-ca.crt" {
			continue
		}
		fmt.Fprintf(&b, "configmap %s/%s ", m.Namespace, m.Name)
	}
	crds, err := dynamic.NewForConfigOrDie(c.Admin).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).
		List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range crds.Items {
		fmt.Fprintf(&b, "crd %s ", x.GetName())
	}
	return b.String()
}
