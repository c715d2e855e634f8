package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	rspb "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// The tests of this file install a real chart version from the fixtures with
// real Helm, shape the cluster, run the plugin with --upgrade, then run the
// same `helm upgrade` (Helm 3 and Helm 4) and assert that they agree; for
// "Helm succeeds but breaks or deletes this" they read the cluster back.

// agreeUpgrade fails the test when the plugin's verdict (exit 0 = Helm
// upgrades) and Helm's disagree.
func agreeUpgrade(t *testing.T, what string, res tc.Result, helmOut string, helmOK bool) {
	t.Helper()
	if (res.Code == cli.ExitOK) != helmOK {
		t.Errorf("%s: plugin exit %d but helm upgrade ok=%v\nplugin:\n%s\nhelm:\n%s", what, res.Code, helmOK, res.Stdout, helmOut)
	}
}

// editRelease rewrites the latest stored revision of the runtime release
// with edit (Helm's own Secrets driver: labels and payload alike).
func editRelease(t *testing.T, c *tc.Cluster, edit func(r *rspb.Release)) {
	t.Helper()
	d := driver.NewSecrets(c.Kube.CoreV1().Secrets(runtimeNS))
	rels, err := d.Query(map[string]string{"name": runtimeRelease, "owner": "helm"})
	if err != nil || len(rels) == 0 {
		t.Fatalf("release %s: %v", runtimeRelease, err)
	}
	latest := rels[0]
	for _, r := range rels {
		if r.Version > latest.Version {
			latest = r
		}
	}
	edit(latest)
	if err := d.Update("sh.helm.release.v1."+runtimeRelease+".v"+strconv.Itoa(latest.Version), latest); err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeAgreesWithHelm3 and ...4: an ordinary upgrade 0.26 → 0.27 with
// the install's -f passes and Helm upgrades; `--set` alone drops the
// install's values (the plugin fails naming them, Helm fails to render); a
// latest revision left pending-upgrade, and a deployed manifest with an API
// version the cluster does not serve, are refused by both; no values flag
// reuses the previous values.
func TestUpgradeAgreesWithHelm3(t *testing.T) {
	tc.Parallel(t, tc.Long)
	upgradeAgrees(t, tc.HelmBinary(t), "3")
}

func TestUpgradeAgreesWithHelm4(t *testing.T) {
	tc.Parallel(t, tc.Long)
	upgradeAgrees(t, tc.Helm4Binary(t), "4")
}

func upgradeAgrees(t *testing.T, helmBin, major string) {
	c := tc.Start(t)
	upgradePlugin := func(t *testing.T, c *tc.Cluster, chart string, args ...string) (tc.Result, reporters.Document) {
		t.Helper()
		return upgradePlugin(t, c, chart, append([]string{"--helm-major", major}, args...)...)
	}
	v := runtimeValues(t, "")
	from, to := chartLine(t, "chart-0.26"), chartLine(t, "chart-0.27")
	installLine(t, c, helmBin, from, v)

	t.Run("--set alone drops the install's values", func(t *testing.T) {
		res, doc := upgradePlugin(t, c, to, "--set", "app-proxy.replicaCount=1")
		if res.Code != cli.ExitFailed {
			t.Errorf("exit %d, want %d\n%s", res.Code, cli.ExitFailed, res.Stdout)
		}
		ch := tc.Check(t, doc, "upgrade-values")
		if ch.Status != "fail" || !strings.Contains(ch.Message, "does not reuse the previous values") || ch.Impact != "upgrade-fails" {
			t.Errorf("upgrade-values = %s (%s) impact %s", ch.Status, ch.Message, ch.Impact)
		}
		out, ok := helmUpgrade(t, c, helmBin, to, "--set", "app-proxy.replicaCount=1")
		agreeUpgrade(t, "--set only", res, out, ok)
	})

	t.Run("a revision left pending-upgrade", func(t *testing.T) {
		editRelease(t, c, func(r *rspb.Release) { r.Info.Status = rspb.StatusPendingUpgrade })
		defer editRelease(t, c, func(r *rspb.Release) { r.Info.Status = rspb.StatusDeployed })
		res, doc := upgradePlugin(t, c, to, "-f", v)
		ch := tc.Check(t, doc, "release-upgradable")
		if ch.Status != "fail" || !strings.Contains(ch.Message, "another operation (install/upgrade/rollback) is in progress") {
			t.Errorf("release-upgradable = %s (%s)", ch.Status, ch.Message)
		}
		if !strings.Contains(ch.Hint, "helm rollback") {
			t.Errorf("hint %q", ch.Hint)
		}
		out, ok := helmUpgrade(t, c, helmBin, to, "-f", v)
		if !strings.Contains(out, "another operation") {
			t.Errorf("helm upgrade said: %s", out)
		}
		agreeUpgrade(t, "pending-upgrade", res, out, ok)
	})

	t.Run("a deployed manifest with an API the cluster no longer serves", func(t *testing.T) {
		var manifest string
		editRelease(t, c, func(r *rspb.Release) {
			manifest = r.Manifest
			r.Manifest += "\n---\n# Source: gitops-runtime/templates/psp.yaml\napiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata:\n  name: cf-gitops-runtime-psp\nspec: {}\n"
		})
		defer editRelease(t, c, func(r *rspb.Release) { r.Manifest = manifest })
		res, doc := upgradePlugin(t, c, to, "-f", v)
		ch := tc.Check(t, doc, "release-apis")
		if ch.Status != "fail" || !strings.Contains(ch.Message, "policy/v1beta1 PodSecurityPolicy") {
			t.Errorf("release-apis = %s (%s)", ch.Status, ch.Message)
		}
		out, ok := helmUpgrade(t, c, helmBin, to, "-f", v)
		agreeUpgrade(t, "removed API", res, out, ok)
	})

	t.Run("no values flag reuses the previous values", func(t *testing.T) {
		res, doc := upgradePlugin(t, c, to)
		if res.Code != cli.ExitOK {
			t.Errorf("exit %d\n%s", res.Code, res.Stdout)
		}
		if doc.Upgrade == nil || doc.Upgrade.From != "0.26.8" || doc.Upgrade.To != "0.27.6" || doc.Upgrade.Release != runtimeRelease {
			t.Errorf("upgrade = %+v", doc.Upgrade)
		}
	})

	t.Run("an ordinary upgrade with the install's values", func(t *testing.T) {
		res, doc := upgradePlugin(t, c, to, "-f", v)
		for _, id := range []string{"release-upgradable", "release-apis", "upgrade-path", "upgrade-values", "upgrade-apply", "chart-renders"} {
			if ch := tc.Check(t, doc, id); ch.Status != "pass" {
				t.Errorf("%s = %s (%s)", id, ch.Status, ch.Message)
			}
		}
		out, ok := helmUpgrade(t, c, helmBin, to, "-f", v)
		agreeUpgrade(t, "ordinary upgrade", res, out, ok)
	})

	t.Run("--reuse-values keeps the deployed chart's defaults", func(t *testing.T) {
		if out, code := helmCmd(t, c, helmBin, "rollback", runtimeRelease, "1", "-n", runtimeNS, "--no-hooks"); code != 0 {
			t.Fatalf("helm rollback: %s", out)
		}
		res, doc := upgradePlugin(t, c, to, "--reuse-values")
		ch := tc.Check(t, doc, "upgrade-values")
		const tag = "app-proxy.image.tag (62b923f → f1a9078)"
		if ch.Status != "warn" || !strings.Contains(ch.Message, "--reuse-values keeps the deployed chart's defaults") || !strings.Contains(ch.Message, tag) {
			t.Errorf("upgrade-values = %s (%s), want a warning naming %s", ch.Status, ch.Message, tag)
		}
		if strings.Contains(ch.Message, "accountId") || strings.Contains(ch.Message, "global.runtime.name") {
			t.Errorf("upgrade-values lists the user's own values (pushed into subcharts as globals) as defaults: %s", ch.Message)
		}
		if !strings.Contains(ch.Hint, "--reset-then-reuse-values") {
			t.Errorf("hint %q", ch.Hint)
		}
		out, ok := helmUpgrade(t, c, helmBin, to, "--reuse-values")
		agreeUpgrade(t, "--reuse-values", res, out, ok)
		// Read back: app-proxy runs the deployed chart's image, not the
		// target's, as the plugin said.
		d, err := c.Kube.AppsV1().Deployments(runtimeNS).Get(context.Background(), "cap-app-proxy", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, ":62b923f") {
			t.Errorf("after helm upgrade --reuse-values cap-app-proxy runs %s, want the 0.26.8 default tag 62b923f", img)
		}
	})
}

// TestUpgradeRemovesControllersAndData: 0.26 with Argo Rollouts, a live
// Rollout and a Sensor holding a finalizer → 0.27: Helm upgrades, the
// plugin named both, afterwards both controllers are gone (a deleted Sensor
// stays terminating) and the kept CRD still names the release. Then
// 0.27 with gitops-operator.crds.install=false and a live Product: the
// plugin counts it (data-loss), Helm upgrades, the Product is gone.
func TestUpgradeRemovesControllersAndData(t *testing.T) {
	tc.Parallel(t, tc.Long)
	c := tc.Start(t)
	helmBin := tc.HelmBinary(t)
	v := runtimeValues(t, "")
	to := chartLine(t, "chart-0.27")
	installLine(t, c, helmBin, chartLine(t, "chart-0.26"), v, "--set", "argo-rollouts.enabled=true")
	dyn := dynamic.NewForConfigOrDie(c.Admin)
	rollouts := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	createCustom(t, c, dyn, rollouts, checkoutRollout())
	// A Sensor holding a finalizer: 0.26 installs the Argo Events CRDs (its
	// crds/ directory) and keeps the controller that processes finalizers;
	// 0.27 removes the controller.
	sensors := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "sensors"}
	sensor := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Sensor",
		"metadata": map[string]any{"name": "orders", "namespace": runtimeNS, "finalizers": []any{"example.com/held-by-the-controller"}},
		"spec":     map[string]any{"dependencies": []any{map[string]any{"name": "d", "eventSourceName": "webhook", "eventName": "orders"}}},
	}}
	createCustom(t, c, dyn, sensors, sensor)

	res, doc := upgradePlugin(t, c, to, "-f", v)
	ch := tc.Check(t, doc, "upgrade-deletes")
	if ch.Status != "fail" || ch.Impact != "runtime-breaks" || !strings.Contains(ch.Message, "Argo Rollouts") || !strings.Contains(ch.Message, runtimeNS+"/checkout") {
		t.Errorf("upgrade-deletes = %s, impact %s (%s)", ch.Status, ch.Impact, ch.Message)
	}
	if !strings.Contains(ch.Message, "Argo Events") || !strings.Contains(ch.Message, runtimeNS+"/orders") {
		t.Errorf("upgrade-deletes does not name the Sensor and the Argo Events controller: %s", ch.Message)
	}
	if res.Code != cli.ExitFailed {
		t.Errorf("exit %d", res.Code)
	}
	// Argo Rollouts installed on its own (its upstream Deployment's label)
	// takes the Rollout over: only the Sensor is left without a controller.
	own := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "argo-rollouts", Namespace: "argo-rollouts", Labels: map[string]string{"app.kubernetes.io/name": "argo-rollouts"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "argo-rollouts"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": "argo-rollouts"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "argo-rollouts", Image: "quay.io/argoproj/argo-rollouts:v1.8.3"}}},
			},
		},
	}
	if _, err := c.Kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "argo-rollouts"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Kube.AppsV1().Deployments("argo-rollouts").Create(context.Background(), own, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res, doc = upgradePlugin(t, c, to, "-f", v)
	ch = tc.Check(t, doc, "upgrade-deletes")
	if ch.Status != "fail" || strings.Contains(ch.Message, "checkout") || !strings.Contains(ch.Message, runtimeNS+"/orders") {
		t.Errorf("with Argo Rollouts on its own: upgrade-deletes = %s (%s), want only the Sensor named", ch.Status, ch.Message)
	}
	if out, ok := helmUpgrade(t, c, helmBin, to, "-f", v); !ok {
		t.Fatalf("helm upgrade: %s", out)
	}
	if _, err := c.Kube.AppsV1().Deployments(runtimeNS).Get(context.Background(), "argo-rollouts", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Argo Rollouts controller is still there after the upgrade (%v)", err)
	}
	if _, err := dyn.Resource(rollouts).Namespace(runtimeNS).Get(context.Background(), "checkout", metav1.GetOptions{}); err != nil {
		t.Errorf("the Rollout is gone: %v", err)
	}
	// The Argo Events controller is gone too: a deleted Sensor now stays,
	// its finalizer never processed.
	if _, err := c.Kube.AppsV1().Deployments(runtimeNS).Get(context.Background(), "argo-events-controller-manager", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Argo Events controller is still there after the upgrade (%v)", err)
	}
	if err := dyn.Resource(sensors).Namespace(runtimeNS).Delete(context.Background(), "orders", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if s, err := dyn.Resource(sensors).Namespace(runtimeNS).Get(context.Background(), "orders", metav1.GetOptions{}); err != nil || s.GetDeletionTimestamp() == nil {
		t.Errorf("the deleted Sensor is not left terminating (%v)", err)
	}

	// After the upgrade the kept Rollouts CRDs still name the release.
	res, doc = upgradePlugin(t, c, to, "-f", v)
	if ch := tc.Check(t, doc, "upgrade-deletes"); ch.Status != "pass" {
		t.Errorf("same chart again: upgrade-deletes = %s (%s)", ch.Status, ch.Message)
	}
	_ = res

	products := schema.GroupVersionResource{Group: "codefresh.io", Version: "v1beta1", Resource: "products"}
	p := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "codefresh.io/v1beta1", "kind": "Product",
		"metadata": map[string]any{"name": "shop", "namespace": runtimeNS}, "spec": map[string]any{},
	}}
	createCustom(t, c, dyn, products, p)
	res, doc = upgradePlugin(t, c, to, "-f", v, "--set", "gitops-operator.crds.install=false")
	ch = tc.Check(t, doc, "upgrade-deletes")
	if ch.Status != "fail" || ch.Impact != "data-loss" || !regexp.MustCompile(`products\.codefresh\.io and with it 1 custom resources \(`+runtimeNS+`: 1\)`).MatchString(ch.Message) {
		t.Errorf("upgrade-deletes = %s, impact %s (%s)", ch.Status, ch.Impact, ch.Message)
	}
	if out, ok := helmUpgrade(t, c, helmBin, to, "-f", v, "--set", "gitops-operator.crds.install=false"); !ok {
		t.Fatalf("helm upgrade: %s", out)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := dyn.Resource(products).Namespace(runtimeNS).Get(context.Background(), "shop", metav1.GetOptions{})
		if err != nil && (apierrors.IsNotFound(err) || strings.Contains(err.Error(), "could not find the requested resource")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Product outlived its CRD's deletion (%v)", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// createCustom creates a custom resource once its CRD, just installed by
// Helm, is served (the API server establishes a new CRD asynchronously).
func createCustom(t *testing.T, c *tc.Cluster, dyn dynamic.Interface, gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			t.Fatalf("creating %s %s: %v", gvr.Resource, u.GetName(), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The API server serves a new CRD's resources before its discovery
	// controller adds them to /apis, and under load seconds apart: the
	// plugin finds resources through discovery, as kubectl does.
	waitDiscovered(t, c, gvr)
}

// waitDiscovered waits (up to a minute) until the API server's discovery
// lists gvr.
func waitDiscovered(t *testing.T, c *tc.Cluster, gvr schema.GroupVersionResource) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		_, lists, _ := c.Kube.Discovery().ServerGroupsAndResources()
		for _, l := range lists {
			if l.GroupVersion != gvr.GroupVersion().String() {
				continue
			}
			for _, r := range l.APIResources {
				if r.Name == gvr.Resource {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("discovery does not list %s after a minute", gvr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestUpgradePathGoesThrough026: a release of a chart older than 0.26 (the
// 0.26 fixture with its version edited in a temporary copy) is told to go
// through 0.26 before 0.27 and before 0.30; 0.26 itself is a valid step.
func TestUpgradePathGoesThrough026(t *testing.T) {
	tc.Parallel(t)
	c := tc.Start(t)
	old := filepath.Join(t.TempDir(), "gitops-runtime")
	if err := os.CopyFS(old, os.DirFS(chartLine(t, "chart-0.26"))); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(old, "Chart.yaml")
	b, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(meta, regexp.MustCompile(`(?m)^version: .*$`).ReplaceAll(b, []byte("version: 0.25.9")), 0o600); err != nil {
		t.Fatal(err)
	}
	v := runtimeValues(t, "")
	installLine(t, c, tc.HelmBinary(t), old, v)
	for _, line := range []string{"chart-0.27", "chart"} {
		res, doc := upgradePlugin(t, c, chartLine(t, line), "-f", v)
		ch := tc.Check(t, doc, "upgrade-path")
		if ch.Status != "fail" || !strings.Contains(ch.Message, "upgrade to 0.26.x first") || !strings.Contains(ch.Hint, "--version '~0.26'") {
			t.Errorf("%s: upgrade-path = %s (%s; %s)", line, ch.Status, ch.Message, ch.Hint)
		}
		if res.Code != cli.ExitFailed {
			t.Errorf("%s: exit %d", line, res.Code)
		}
	}
	_, doc := upgradePlugin(t, c, chartLine(t, "chart-0.26"), "-f", v)
	if ch := tc.Check(t, doc, "upgrade-path"); ch.Status != "pass" {
		t.Errorf("0.25.9 → 0.26.8: upgrade-path = %s (%s)", ch.Status, ch.Message)
	}
}

// TestUpgradeApplyAgreesWithHelm3 and ...4: a chart whose new version
// changes a Deployment's selector (a copy of the 0.27 fixture, edited) is
// refused by the API server, predicted by upgrade-apply and met by Helm; with
// Helm 4 (server-side apply) a field another manager owns is a conflict for
// both, and Helm 3's merge patch goes through.
func TestUpgradeApplyAgreesWithHelm3(t *testing.T) {
	tc.Parallel(t, tc.Long)
	upgradeApplyAgrees(t, tc.HelmBinary(t), "3")
}

func TestUpgradeApplyAgreesWithHelm4(t *testing.T) {
	tc.Parallel(t, tc.Long)
	upgradeApplyAgrees(t, tc.Helm4Binary(t), "4")
}

func upgradeApplyAgrees(t *testing.T, helmBin, major string) {
	c := tc.Start(t)
	v := runtimeValues(t, "")
	base := chartLine(t, "chart-0.27")
	installLine(t, c, helmBin, base, v)

	edited := filepath.Join(t.TempDir(), "gitops-runtime")
	if err := os.CopyFS(edited, os.DirFS(base)); err != nil {
		t.Fatal(err)
	}
	helpers := filepath.Join(edited, "templates", "_components", "cap-app-proxy", "_helpers.tpl")
	b, err := os.ReadFile(helpers)
	if err != nil {
		t.Fatal(err)
	}
	const sel = "app: cap-app-proxy\n{{- end }}"
	if !strings.Contains(string(b), sel) {
		t.Fatalf("%s: selector labels not found", helpers)
	}
	if err := os.WriteFile(helpers, []byte(strings.Replace(string(b), sel, "app: cap-app-proxy\nselector-generation: \"2\"\n{{- end }}", 1)), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("a changed Deployment selector", func(t *testing.T) {
		res, doc := upgradePlugin(t, c, edited, "-f", v, "--helm-major", major)
		ch := tc.Check(t, doc, "upgrade-apply")
		if ch.Status != "fail" || !strings.Contains(ch.Message, "field is immutable") || !strings.Contains(ch.Message, "cap-app-proxy") {
			t.Errorf("upgrade-apply = %s (%s)", ch.Status, ch.Message)
		}
		out, ok := helmUpgrade(t, c, helmBin, edited, "-f", v)
		if !strings.Contains(out, "field is immutable") {
			t.Errorf("helm upgrade: %s", out)
		}
		agreeUpgrade(t, "changed selector", res, out, ok)
	})

	// The chart with one object more: the release runs it from the case
	// below on, and the case after it upgrades to it again.
	added := filepath.Join(t.TempDir(), "gitops-runtime")
	if err := os.CopyFS(added, os.DirFS(base)); err != nil {
		t.Fatal(err)
	}
	tmpl := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cf-gitops-runtime-added\ndata:\n  a: b\n"
	if err := os.WriteFile(filepath.Join(added, "templates", "added-configmap.yaml"), []byte(tmpl), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("an object the new version adds exists without Helm ownership", func(t *testing.T) {
		// No data: no field another manager holds, so Helm 4 meets no conflict.
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cf-gitops-runtime-added", Namespace: runtimeNS}}
		if _, err := c.Kube.CoreV1().ConfigMaps(runtimeNS).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		res, doc := upgradePlugin(t, c, added, "-f", v, "--helm-major", major)
		ch := tc.Check(t, doc, "helm-ownership")
		if ch.Status != "fail" || !strings.Contains(ch.Message, "cf-gitops-runtime-added") || !strings.Contains(ch.Message, "no Helm ownership metadata") {
			t.Errorf("helm-ownership = %s (%s)", ch.Status, ch.Message)
		}
		if !strings.HasPrefix(ch.Message, "1 of ") || len(ch.Objects) != 1 {
			t.Errorf("helm-ownership names more than the one object the upgrade creates: %s %v", ch.Message, ch.Objects)
		}
		out, ok := helmUpgrade(t, c, helmBin, added, "-f", v)
		agreeUpgrade(t, "added object without ownership", res, out, ok)
		if !strings.Contains(out, "cf-gitops-runtime-added") {
			t.Errorf("helm upgrade: %s", out)
		}

		// --fix adopts it; then both take the upgrade.
		fix := tc.Run(t, nil, "--kubeconfig", c.AdminKubeconfig(), "--upgrade", "--only", upgradeChecksOnly, "--chart", added,
			"-n", runtimeNS, "--release-name", runtimeRelease, "-f", v, "--helm-major", major, "--fix", "--yes")
		if !strings.Contains(fix.Stdout, "ConfigMap/codefresh/cf-gitops-runtime-added") || fix.Code != cli.ExitOK {
			t.Errorf("fix: exit %d, plan does not name the ConfigMap:\n%s\n%s", fix.Code, fix.Stdout, fix.Stderr)
		}
		res, doc = upgradePlugin(t, c, added, "-f", v, "--helm-major", major)
		if ch := tc.Check(t, doc, "helm-ownership"); ch.Status != "pass" {
			t.Errorf("after --fix: helm-ownership = %s (%s)", ch.Status, ch.Message)
		}
		out, ok = helmUpgrade(t, c, helmBin, added, "-f", v)
		agreeUpgrade(t, "added object adopted by --fix", res, out, ok)
		if !ok {
			t.Fatalf("helm upgrade after --fix: %s", out)
		}
		got, err := c.Kube.CoreV1().ConfigMaps(runtimeNS).Get(context.Background(), "cf-gitops-runtime-added", metav1.GetOptions{})
		if err != nil || got.Data["a"] != "b" {
			t.Errorf("after helm upgrade the ConfigMap holds %v (%v), want the chart's data", got.Data, err)
		}
	})

	// The release runs the chart with the added ConfigMap (the case above
	// took it there); the upgrade to the same chart changes no field of
	// the chart's, and meets the one another manager took.
	t.Run("a field another manager owns", func(t *testing.T) {
		patch := []byte(`{"spec":{"replicas":2}}`)
		if _, err := c.Kube.AppsV1().Deployments(runtimeNS).Patch(context.Background(), "cap-app-proxy", types.MergePatchType, patch,
			metav1.PatchOptions{FieldManager: "kubectl-patch"}); err != nil {
			t.Fatal(err)
		}
		res, doc := upgradePlugin(t, c, added, "-f", v, "--helm-major", major)
		ch := tc.Check(t, doc, "upgrade-apply")
		out, ok := helmUpgrade(t, c, helmBin, added, "-f", v)
		if major == "4" {
			if ch.Status != "fail" || !strings.Contains(ch.Message, "conflict") || !strings.Contains(ch.Message, "kubectl-patch") {
				t.Errorf("upgrade-apply = %s (%s)", ch.Status, ch.Message)
			}
		} else if ch.Status != "pass" {
			t.Errorf("upgrade-apply = %s (%s)", ch.Status, ch.Message)
		}
		agreeUpgrade(t, "field manager", res, out, ok)
	})
}
