package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// TestArgoCDManagedRuntime: a runtime installed with Helm at 0.26.8 (Argo
// Rollouts on, a live Rollout), then handed to Argo CD ("Configure as Argo
// Application") and synced by it (testcluster.ArgoSync: what Argo CD's
// controller does, see its doc) to 0.27.6 and 0.30.0 from the umbrella
// chart of resources/<runtime>/chart. The plugin finds the Application in
// every mode; --upgrade judges each commit from what Argo CD deployed (the
// live 0.27.6, not the release record's 0.26.8) with Argo CD's apply and
// prune rules, and agrees with what the sync then does: client-side apply
// refused on the ApplicationSet CRD (too large for kubectl's last-applied
// annotation), accepted server-side; without prune the dropped Argo
// Rollouts controller stays; with prune its kept CRD goes too, and the
// Rollout with it. --post reads the Application: Synced and Healthy,
// OutOfSync with objects that require pruning, a stale release record,
// Degraded, a failed apply and a failed PreSync hook.
func TestArgoCDManagedRuntime(t *testing.T) {
	tc.Parallel(t, tc.Long)
	c, _, dyn, rollouts := runtimeWithRollout(t)
	argo := newArgoSim(t, c, "e2e-runtime", false)
	const app = runtimeNS + "/e2e-runtime"
	upgrade := func(t *testing.T, chart string) (tc.Result, reporters.Document) {
		t.Helper()
		res, doc := upgradePlugin(t, c, chart)
		if doc.Upgrade == nil || doc.Upgrade.Application != app {
			t.Fatalf("upgrade = %+v, want Application %s\n%s", doc.Upgrade, app, res.Stdout)
		}
		return res, doc
	}

	// Configure as Argo Application: Argo CD takes the runtime over at the
	// version it runs.
	u026 := umbrella(t, "chart-0.26", "0.26.8", runtimeGlobals+"gitops-runtime:\n  argo-rollouts:\n    enabled: true\n")
	// The 0.26 ApplicationSet CRD fits kubectl's last-applied annotation
	// (Argo CD tracks no CRD: TestArgoCDApplyAndPruneAgreeWithArgoCD); a
	// CRD annotation of 200 bytes takes it past.
	annotated := umbrella(t, "chart-0.26", "0.26.8", runtimeGlobals+"gitops-runtime:\n  argo-rollouts:\n    enabled: true\n"+crdNote)
	t.Run("client-side apply: the annotated ApplicationSet CRD is too large for kubectl apply", func(t *testing.T) {
		argo.writeStatus() // the Application, before its first sync
		res, doc := upgrade(t, annotated)
		wantCode(t, res, cli.ExitFailed)
		wantStatus(t, doc, "upgrade-apply", "fail", "the sync fails", "client-side apply (kubectl apply, last-applied)", "applicationsets.argoproj.io", "Too long")
		if argo.sync(annotated) {
			t.Fatal("a client-side sync of the annotated ApplicationSet CRD went through")
		}
		res, doc = post(t, c, "--only=runtime-application")
		wantCode(t, res, cli.ExitFailed)
		wantStatus(t, doc, "runtime-application", "fail", "last sync Failed: one or more objects failed to apply", "Too long")
	})
	// As Argo CD's docs advise for large CRDs: ServerSideApply=true.
	argo.ServerSideApply = true
	argo.writeStatus()
	res, doc := upgrade(t, u026)
	wantStatus(t, doc, "upgrade-apply", "pass", "Argo CD (Application "+app+", ServerSideApply=true), server-side apply (argocd-controller, conflicts forced)")
	if !argo.sync(u026) {
		t.Fatal("the server-side sync failed")
	}
	argo.waitHealthy()
	res, doc = post(t, c, "--only=runtime-application")
	wantCode(t, res, cli.ExitOK)
	wantStatus(t, doc, "runtime-application", "pass", "Application "+app, "its inventory (status.resources) holds", "sync policy automated (selfHeal)", "is Synced and Healthy")

	u027 := umbrella(t, "chart-0.27", "0.27.6", runtimeGlobals)
	t.Run("prune off: the controller 0.27 drops stays in place", func(t *testing.T) {
		res, doc := upgrade(t, u027)
		if doc.Upgrade.From != "0.26.8" || doc.Upgrade.To != "0.27.6" {
			t.Errorf("upgrade %+v, want 0.26.8 → 0.27.6", doc.Upgrade)
		}
		wantCode(t, res, cli.ExitOK)
		wantStatus(t, doc, "release-upgradable", "pass", "the runtime is upgraded by Argo CD: Application "+app, "live chart 0.26.8")
		wantStatus(t, doc, "upgrade-deletes", "warn", "leaves", "in place", "prune is off", "Deployment argo-rollouts")
		wantStatus(t, doc, "upgrade-apply", "pass", "server-side apply (argocd-controller")
		wantStatus(t, doc, "helm-ownership", "skip", "without Helm's ownership check")
		if !argo.sync(u027) {
			t.Fatal("sync to 0.27 failed")
		}
		if _, err := c.Kube.AppsV1().Deployments(runtimeNS).Get(context.Background(), "argo-rollouts", metav1.GetOptions{}); err != nil {
			t.Errorf("without prune the sync deleted the Argo Rollouts controller (%v)", err)
		}
	})

	t.Run("--post: OutOfSync, an object requires pruning, the release record is stale", func(t *testing.T) {
		argo.waitHealthy()
		res, doc := post(t, c, "--only=runtime-application")
		wantCode(t, res, cli.ExitFailed)
		ch := wantStatus(t, doc, "runtime-application", "fail", "sync status OutOfSync", "Deployment codefresh/argo-rollouts (requires pruning)",
			"the Helm release record is stale: release cf-gitops-runtime revision 1 says chart 0.26.8, the live objects run chart 0.27.6", "argocd app diff "+app)
		if ch.Impact != "runtime-breaks" {
			t.Errorf("impact %s", ch.Impact)
		}
	})

	u030 := umbrella(t, "chart", "0.30.0", runtimeGlobals)
	t.Run("prune on: --upgrade to 0.30 from the live 0.27: the prune takes the Rollouts controller, not its untracked CRD", func(t *testing.T) {
		argo.Prune = true
		argo.writeStatus()
		res, doc := upgrade(t, u030)
		if doc.Upgrade.From != "0.27.6" || doc.Upgrade.To != "0.30.0" || doc.Upgrade.Revision != 0 {
			t.Errorf("upgrade %+v, want from the live 0.27.6 (not the record's 0.26.8) to 0.30.0", doc.Upgrade)
		}
		wantCode(t, res, cli.ExitFailed)
		ru := wantStatus(t, doc, "release-upgradable", "warn", "the Helm release record is stale", "says chart 0.26.8", "live chart 0.27.6",
			"resources/<runtime-name>/chart/Chart.yaml")
		if strings.Contains(ru.Hint, "helm upgrade "+runtimeRelease) || strings.Contains(ru.Hint, "helm rollback") {
			t.Errorf("the hint of an Argo CD-managed runtime says helm upgrade: %s", ru.Hint)
		}
		wantStatus(t, doc, "upgrade-path", "pass", "chart 0.27.6 → 0.30.0")
		// Argo CD prunes the controller it tracks; the Rollouts CRD carries
		// no tracking mark (Argo CD marks no CRD), so the prune leaves it,
		// and the Rollout stays with no controller.
		del := wantStatus(t, doc, "upgrade-deletes", "fail", "Argo CD's sync (Application "+app+", prune: true) removes the Argo Rollouts controller (Deployment codefresh/argo-rollouts) while 1 rollouts.argoproj.io live: "+runtimeNS+"/checkout")
		if del.Impact != "runtime-breaks" || strings.Contains(del.Message, "deletes CRD") {
			t.Errorf("upgrade-deletes impact %s, want runtime-breaks and no CRD deleted: %s", del.Impact, del.Message)
		}
		if !argo.sync(u030) {
			t.Fatal("sync to 0.30 failed")
		}
		// Read back: the sync pruned the controller; the CRD and the
		// Rollout remain, as the plugin said.
		waitFor(t, 60*time.Second, "argo-rollouts pruned", func() bool {
			_, err := c.Kube.AppsV1().Deployments(runtimeNS).Get(context.Background(), "argo-rollouts", metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
		if _, err := dyn.Resource(rollouts).Namespace(runtimeNS).Get(context.Background(), "checkout", metav1.GetOptions{}); err != nil {
			t.Errorf("the Rollout is gone after the sync (the plugin said its CRD stays): %v", err)
		}
	})

	t.Run("--post after the sync: Synced and Healthy, the record still stale", func(t *testing.T) {
		argo.waitHealthy()
		res, doc := post(t, c, "--only=runtime-application")
		wantCode(t, res, cli.ExitOK)
		wantStatus(t, doc, "runtime-application", "warn", "is Synced and Healthy", "says chart 0.26.8, the live objects run chart 0.30.0", "upgraded by a commit, not helm upgrade")
	})

	t.Run("--post: Degraded", func(t *testing.T) {
		c.Kubectl(t, "patch", "deployment", "cap-app-proxy", "-n", runtimeNS, "--type=merge", "-p",
			`{"spec":{"progressDeadlineSeconds":5,"strategy":{"type":"Recreate","rollingUpdate":null},"template":{"metadata":{"labels":{"`+tc.FaultLabel+`":"`+tc.FaultCrashLoop+`"}}}}}`)
		waitFor(t, 90*time.Second, "cap-app-proxy past its progress deadline", func() bool {
			return argo.health(tc.ArgoItem{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: runtimeNS, Name: "cap-app-proxy"}) == "Degraded"
		})
		argo.writeStatus()
		res, doc := post(t, c, "--only=runtime-application")
		wantCode(t, res, cli.ExitFailed)
		wantStatus(t, doc, "runtime-application", "fail", "health Degraded", `Deployment codefresh/cap-app-proxy Degraded (Deployment "cap-app-proxy" exceeded its progress deadline)`, "--only runtime-workloads")
	})

	t.Run("--post: a failed PreSync hook", func(t *testing.T) {
		// The validate-values hook's pod fails (kwok fails a pod whose image
		// tag is e2e-fail): Argo CD stops the sync in PreSync.
		bad := umbrella(t, "chart", "0.30.0", runtimeGlobals+"gitops-runtime:\n  installer:\n    image:\n      tag: e2e-fail\n")
		if argo.sync(bad) {
			t.Fatal("the sync went through a failing validate-values hook")
		}
		res, doc := post(t, c, "--only=runtime-application")
		wantCode(t, res, cli.ExitFailed)
		wantStatus(t, doc, "runtime-application", "fail", "last sync Failed: one or more synchronization tasks completed unsuccessfully",
			"PreSync hook Job codefresh/validate-values Failed", "condition SyncError", "runs as PreSync on every sync")
	})

	t.Run("a multi-source Application an ApplicationSet generates", func(t *testing.T) {
		multiSourceSteps(t, c, dyn, u030)
	})
}

// multiSourceSteps makes the runtime's Application what the Codefresh
// platform may create: generated by an ApplicationSet (its controlling
// owner), its chart's values in a file of another repository
// ("$values/values/codefresh.yaml" from the source whose ref is values).
// --upgrade renders the commit without that file and says so (warn,
// naming it and its repository), never "not in chart"; given a checkout
// (--argocd-source values=DIR) it reads it: a value the file sets reaches
// the render. --post and --upgrade name the ApplicationSet, and say that
// its template, not the Application, is where a change is made.
func multiSourceSteps(t *testing.T, c *tc.Cluster, dyn dynamic.Interface, chartDir string) {
	ctx := context.Background()
	appsets := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applicationsets"}
	set := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
		"metadata": map[string]any{"name": "runtimes", "namespace": runtimeNS},
		"spec": map[string]any{
			"generators": []any{map[string]any{"list": map[string]any{"elements": []any{map[string]any{"runtime": "e2e-runtime"}}}}},
			"template": map[string]any{"metadata": map[string]any{"name": "{{runtime}}"}, "spec": map[string]any{"project": "default",
				"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": runtimeNS},
				"source":      map[string]any{"repoURL": "https://git.example.com/acme/shared-config.git", "path": "resources/{{runtime}}/chart"}}},
		},
	}}
	created, err := dyn.Resource(appsets).Namespace(runtimeNS).Create(ctx, set, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	apps := dyn.Resource(tc.ApplicationGVR).Namespace(runtimeNS)
	app, err := apps.Get(ctx, "e2e-runtime", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src, _, _ := unstructured.NestedMap(app.Object, "spec", "source")
	src["helm"].(map[string]any)["valueFiles"] = []any{"$values/values/codefresh.yaml"}
	unstructured.RemoveNestedField(app.Object, "spec", "source")
	if err := unstructured.SetNestedSlice(app.Object, []any{
		map[string]any{"repoURL": "https://git.example.com/acme/runtime-values.git", "targetRevision": "main", "ref": "values"}, src}, "spec", "sources"); err != nil {
		t.Fatal(err)
	}
	yes := true
	app.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "ApplicationSet", Name: "runtimes", UID: created.GetUID(), Controller: &yes}})
	if _, err := apps.Update(ctx, app, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	res, doc := upgradePlugin(t, c, chartDir)
	if strings.Contains(res.Stdout, "is not in chart") {
		t.Errorf("the value file of another source taken for one of the chart's:\n%s", res.Stdout)
	}
	cr := wantStatus(t, doc, "chart-renders", "warn", "without 1 value file of "+runtimeNS+"/e2e-runtime that Argo CD reads, from another repository",
		"$values/values/codefresh.yaml (ref values: https://git.example.com/acme/runtime-values.git at main)")
	if !strings.Contains(cr.Hint, "--argocd-source values=DIR") {
		t.Errorf("hint %q", cr.Hint)
	}
	ru := tc.Check(t, doc, "release-upgradable")
	if !strings.Contains(ru.Message, "Application "+runtimeNS+"/e2e-runtime (generated by ApplicationSet "+runtimeNS+"/runtimes)") ||
		!strings.Contains(ru.Hint, "in that ApplicationSet's template") {
		t.Errorf("release-upgradable: %s\nhint %q: the ApplicationSet and where the change is made", ru.Message, ru.Hint)
	}

	// The checkout: its file clears the account the tunnel client needs,
	// and the render fails on the chart's own required message: the file
	// was read, in its place.
	checkout := t.TempDir()
	if err := os.MkdirAll(filepath.Join(checkout, "values"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(checkout, "values", "codefresh.yaml"), []byte("global:\n  codefresh:\n    accountId: \"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, doc = c.RunJSON(t, nil, "--upgrade", "--only", "chart-renders", "--chart", chartDir, "-n", runtimeNS, "--release-name", runtimeRelease, "--argocd-source", "values="+checkout)
	wantCode(t, res, cli.ExitFailed)
	wantStatus(t, doc, "chart-renders", "fail", "accountId is required")

	res, doc = post(t, c, "--only=runtime-application")
	ra := tc.Check(t, doc, "runtime-application")
	if !strings.Contains(ra.Message, "Application "+runtimeNS+"/e2e-runtime (generated by ApplicationSet "+runtimeNS+"/runtimes)") ||
		!strings.Contains(ra.Hint, "is generated by ApplicationSet "+runtimeNS+"/runtimes") {
		t.Errorf("runtime-application: %s\nhint %q\n%s", ra.Message, ra.Hint, res.Stdout)
	}
}

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
