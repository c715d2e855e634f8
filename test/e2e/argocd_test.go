package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// hookRangeFails says whether the chart's validate-values hook, rendered
// from chart with values, fails on Argo CD version: the hook compares the
// server's version with REQUIRED_VERSION_CONSTRAINT (`semver-cli
// satisfies`). kwok runs no script, so the test takes the range from the
// rendered hook, as the hook does, judges it with Masterminds/semver (the
// library semver-cli is built on), and makes the hook's pod fail (image tag
// e2e-fail, which kwok fails) exactly when the range excludes the version:
// the hook's range decides the real helm upgrade.
func hookRangeFails(t *testing.T, chart, values, version string) bool {
	t.Helper()
	cmd := exec.Command(tc.HelmBinary(t), "template", "r", chart, "-f", values, "--show-only", "templates/hooks/pre-install/validate-values.yaml")
	cmd.Env = helmClientEnv(t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`name: REQUIRED_VERSION_CONSTRAINT\s+value: "([^"]+)"`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no REQUIRED_VERSION_CONSTRAINT in the rendered hook:\n%s", out)
	}
	rng, err := semver.NewConstraint(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	return !rng.Check(semver.MustParse(strings.TrimPrefix(version, "v")))
}

// renamedRegistryChart is chart 0.30.0 as a later version that renames
// global.imageRegistry to global.image.registry would be (no shipped
// chart line renames a values key between 0.26.8, 0.27.6 and 0.30.0: their
// templates read the same .Values paths): a copy of the fixture with the
// helper that picks the registry edited.
func renamedRegistryChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "gitops-runtime")
	if err := os.CopyFS(dir, os.DirFS(chartLine(t, "chart"))); err != nil {
		t.Fatal(err)
	}
	helpers := filepath.Join(dir, "templates", "_helpers.tpl")
	b, err := os.ReadFile(helpers)
	if err != nil {
		t.Fatal(err)
	}
	const old = "$.Values.global.imageRegistry"
	if strings.Count(string(b), old) != 2 {
		t.Fatalf("%s: %q not found twice", helpers, old)
	}
	writeFile(t, helpers, strings.ReplaceAll(string(b), old, "(($.Values.global).image).registry"))
	return dir
}

// TestUpgradeHookRangeAndRenamedKey: a runtime on chart 0.27.6 beside an
// existing Argo CD (argo-cd.enabled=false, in Argo CD's namespace) with a
// private registry under global.imageRegistry, upgraded with helm upgrade
// to a chart that renames that key. With Argo CD 3.1.8 the target's hook
// range (">=3.2 <=3.4") fails helm upgrade in its pre-upgrade hook (Helm 3
// and Helm 4), and the plugin's argocd-version fails first (impact
// upgrade-fails); with Argo CD 3.4.2 both go through. upgrade-values warns
// that the target ignores global.imageRegistry and that the pods pull from
// quay.io instead: after helm upgrade the images read back say so.
func TestUpgradeHookRangeAndRenamedKey(t *testing.T) {
	tc.Parallel(t)
	c := tc.Start(t)
	c.AddNode(t, tc.NodeSpec{Name: "worker-1", CPU: "8", Memory: "16Gi"})
	const ns = "argocd"
	c.CreateNamespace(t, ns)
	createArgoCDServer(t, c, ns, "quay.io/argoproj/argocd:v3.1.8")
	v := runtimeValues(t, "  imageRegistry: registry.example.com\nargo-cd:\n  enabled: false\n")
	if out, code := helmCmd(t, c, tc.HelmBinary(t), "install", runtimeRelease, chartLine(t, "chart-0.27"), "-n", ns, "--no-hooks", "-f", v); code != 0 {
		t.Fatalf("helm install: %s", out)
	}
	target := renamedRegistryChart(t)
	plugin := func(t *testing.T) (tc.Result, reporters.Document) {
		t.Helper()
		return c.RunJSON(t, nil, "--upgrade", "--only", "argocd-server,argocd-version,validation-hooks,upgrade-values",
			"--chart", target, "-n", ns, "--release-name", runtimeRelease, "-f", v)
	}
	upgrade := func(t *testing.T, helmBin, version string) (string, bool) {
		t.Helper()
		args := []string{"upgrade", runtimeRelease, target, "-n", ns, "-f", v, "--timeout", "2m"}
		if hookRangeFails(t, target, v, version) {
			args = append(args, "--set", "installer.image.tag=e2e-fail")
		}
		out, code := helmCmd(t, c, helmBin, args...)
		return out, code == 0
	}

	t.Run("Argo CD 3.1.8 outside the target hook's range", func(t *testing.T) {
		res, doc := plugin(t)
		wantCode(t, res, cli.ExitFailed)
		ch := wantStatus(t, doc, "argocd-version", "fail", `Argo CD v3.1.8 does not satisfy ">=3.2 <=3.4"`, "validate-values hook of chart gitops-runtime 0.30.0")
		if ch.Impact != "upgrade-fails" {
			t.Errorf("argocd-version impact %s, want upgrade-fails", ch.Impact)
		}
		wantStatus(t, doc, "argocd-server", "pass", "Service argocd/argocd-server")
		wantStatus(t, doc, "validation-hooks", "pass", "the validate-values hook runs before helm upgrade (pre-upgrade")
		wantStatus(t, doc, "upgrade-values", "warn", "ignores 1 value you give: global.imageRegistry",
			"image registries: the pods pull from", "instead of", "registry.example.com")
		for _, h := range []struct{ name, bin string }{{"Helm 3", tc.HelmBinary(t)}, {"Helm 4", tc.Helm4Binary(t)}} {
			out, ok := upgrade(t, h.bin, "v3.1.8")
			if ok || !strings.Contains(out, "pre-upgrade hooks failed") {
				t.Errorf("%s: helm upgrade ok=%v, want it to fail in the pre-upgrade hook:\n%s", h.name, ok, out)
			}
			agreeUpgrade(t, h.name+" with Argo CD 3.1.8", res, out, ok)
		}
	})

	t.Run("Argo CD 3.4.2 inside it; the renamed key read back", func(t *testing.T) {
		c.Kubectl(t, "set", "image", "deployment/argocd-server", "-n", ns, "argocd-server=quay.io/argoproj/argocd:v3.4.2")
		res, doc := plugin(t)
		wantCode(t, res, cli.ExitOK)
		wantStatus(t, doc, "argocd-version", "pass", `Argo CD v3.4.2 satisfies ">=3.2 <=3.4"`)
		wantStatus(t, doc, "upgrade-values", "warn", "ignores 1 value you give: global.imageRegistry")
		out, ok := upgrade(t, tc.HelmBinary(t), "v3.4.2")
		agreeUpgrade(t, "Argo CD 3.4.2", res, out, ok)
		if !ok {
			t.Fatalf("helm upgrade: %s", out)
		}
		// Read back: the images the private registry served now come from
		// the chart's default registry, as upgrade-values said.
		deps, err := c.Kube.AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		seen := false
		for _, d := range deps.Items {
			for _, ct := range d.Spec.Template.Spec.Containers {
				if strings.Contains(ct.Image, "codefresh-gitops-operator") {
					seen = true
					if !strings.HasPrefix(ct.Image, "quay.io/") {
						t.Errorf("after helm upgrade %s runs %s, want quay.io (the renamed key dropped registry.example.com)", d.Name, ct.Image)
					}
				}
				if strings.HasPrefix(ct.Image, "registry.example.com/") {
					t.Errorf("after helm upgrade %s still pulls from the private registry: %s", d.Name, ct.Image)
				}
			}
		}
		if !seen {
			t.Error("no gitops-operator Deployment after the upgrade")
		}
	})
}

// runtimeWithRollout starts a cluster of two nodes, installs the runtime
// with Helm at 0.26.8 with Argo Rollouts on (and set, more --set values)
// and creates a live Rollout (checkoutRollout): the runtime a user hands
// to Argo CD. It returns the cluster, the values file, a dynamic client
// and the Rollouts' resource.
func runtimeWithRollout(t *testing.T, set ...string) (*tc.Cluster, string, dynamic.Interface, schema.GroupVersionResource) {
	t.Helper()
	c := tc.Start(t)
	for _, n := range []string{"worker-1", "worker-2"} {
		c.AddNode(t, tc.NodeSpec{Name: n, CPU: "8", Memory: "16Gi"})
	}
	v := runtimeValues(t, "")
	args := []string{"--set", "argo-rollouts.enabled=true"}
	for _, kv := range set {
		args = append(args, "--set", kv)
	}
	installLine(t, c, tc.HelmBinary(t), chartLine(t, "chart-0.26"), v, args...)
	dyn := dynamic.NewForConfigOrDie(c.Admin)
	rollouts := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	createCustom(t, c, dyn, rollouts, checkoutRollout())
	return c, v, dyn, rollouts
}

// checkoutRollout is a live Argo Rollout, checkout, in the runtime
// namespace.
func checkoutRollout() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": "checkout", "namespace": runtimeNS},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "checkout"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "checkout"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "example.invalid/checkout:1"}}}},
		},
	}}
}
