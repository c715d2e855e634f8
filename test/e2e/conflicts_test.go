package e2e

import (
	"context"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	rspb "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

var conflictChecks = "argo-components,sealed-secrets,argo-crds-ownership,existing-runtime"

func isForeign(name string) bool { return !isArgo(name) }
func isArgoCD(name string) bool  { return isArgo(name) && !isRollouts(name) }

func adopted(m metav1.PartialObjectMetadata, release, ns string) bool {
	return m.Labels[checks.HelmManagedByLabel] == "Helm" &&
		m.Annotations[checks.HelmReleaseNameAnnotation] == release &&
		m.Annotations[checks.HelmReleaseNamespaceAnnotation] == ns
}

// TestConflictChecksAndFix runs the four conflict checks and --fix against
// the real Argo CD, Argo Rollouts, SealedSecrets and Traefik manifests, on one
// control plane, step by step.
func TestConflictChecksAndFix(t *testing.T) {
	tc.Parallel(t)
	c := tc.Start(t)
	only := []string{"--only", conflictChecks}

	// 1. A clean cluster passes all four.
	res, doc := c.RunJSONReplayed(t, nil, only...)
	if res.Code != 0 {
		t.Fatalf("clean cluster: exit %d\n%s", res.Code, res.Stderr)
	}
	for _, id := range strings.Split(conflictChecks, ",") {
		wantStatus(t, doc, id, "pass")
	}

	// 2. Argo CD + Argo Rollouts + SealedSecrets (+ Traefik's foreign CRDs).
	for _, ns := range []string{"argocd", "argo-rollouts", "traefik"} {
		c.CreateNamespace(t, ns)
	}
	c.Kubectl(t, "apply", "--server-side", "-n", "argocd", "-f", conflictsFixture(t, "argo-cd/install.yaml"))
	c.Kubectl(t, "apply", "--server-side", "-n", "argo-rollouts", "-f", conflictsFixture(t, "argo-rollouts/install.yaml"))
	c.Kubectl(t, "apply", "--server-side", "-f", conflictsFixture(t, "sealed-secrets/rendered.yaml"))
	c.Kubectl(t, "apply", "--server-side", "-n", "traefik", "-f", conflictsFixture(t, "traefik/rendered.yaml"))

	res, doc = c.RunJSONReplayed(t, nil, only...)
	if res.Code != 1 {
		t.Fatalf("Argo cluster: exit %d, want 1\n%s", res.Code, res.Stderr)
	}
	ac := wantStatus(t, doc, "argo-components", "fail", "Argo CD in argocd", "StatefulSet/argocd-application-controller", "Argo Rollouts in argo-rollouts")
	if len(ac.Objects) != 8 { // 6 Argo CD Deployments + 1 StatefulSet + argo-rollouts
		t.Errorf("argo-components objects = %v, want 8", ac.Objects)
	}
	wantStatus(t, doc, "sealed-secrets", "fail", "kube-system/sealed-secrets-controller")
	own := wantStatus(t, doc, "argo-crds-ownership", "fail", "8 of 8 argoproj.io CRDs", "applications.argoproj.io (no Helm ownership metadata)")
	if !own.Fixable {
		t.Error("argo-crds-ownership fail is not marked fixable")
	}
	wantStatus(t, doc, "existing-runtime", "pass")

	// With --existing-argocd and Argo CD's namespace as runtime namespace, only
	// Rollouts is a conflict.
	_, doc = c.RunJSONReplayed(t, nil, "--only", "argo-components", "--existing-argocd", "-n", "argocd")
	ac = wantStatus(t, doc, "argo-components", "fail", "Argo Rollouts in argo-rollouts")
	if len(ac.Objects) != 1 || ac.Objects[0].Name != "argo-rollouts" {
		t.Errorf("existing-argocd: objects = %v, want only argo-rollouts", ac.Objects)
	}

	before := crdVersions(t, c)

	// 3. --fix without --yes and no terminal refuses (exit 2), changing nothing.
	res = tc.Run(t, nil, "--kubeconfig", c.AdminKubeconfig(), "--fix", "--only", "argo-crds-ownership")
	if res.Code != 2 || !strings.Contains(res.Stderr, "--yes") || strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 {
		t.Fatalf("--fix without --yes: exit %d, stderr %q; want 2 and one line naming --yes", res.Code, res.Stderr)
	}

	// 4. --fix --dry-run --yes shows the plan, the server accepts it, nothing changes.
	res, doc = c.RunJSON(t, nil, "--only", "argo-crds-ownership", "--fix", "--dry-run", "--yes")
	if res.Code != 1 {
		t.Fatalf("--fix --dry-run: exit %d, want 1 (still failing)\n%s", res.Code, res.Stderr)
	}
	wantStatus(t, doc, "argo-crds-ownership", "fail")
	for _, want := range []string{"CustomResourceDefinition/applications.argoproj.io", "metadata.labels[app.kubernetes.io/managed-by]: <none> → Helm", "meta.helm.sh/release-name]: <none> → cf-gitops-runtime", "8 accepted in dry run, 0 failed"} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("--dry-run plan on stderr lacks %q:\n%s", want, res.Stderr)
		}
	}
	sameVersions(t, before, crdVersions(t, c), func(string) bool { return true }, "after --dry-run")

	// 5. --crds=rollouts adopts only the five Argo Rollouts CRDs.
	res, doc = c.RunJSON(t, nil, "--only", "argo-crds-ownership", "--fix", "--yes", "--crds", "rollouts")
	if res.Code != 1 {
		t.Fatalf("--crds=rollouts: exit %d, want 1 (Argo CD CRDs still not adopted)\n%s", res.Code, res.Stderr)
	}
	wantStatus(t, doc, "argo-crds-ownership", "fail", "3 of 8")
	after := crdVersions(t, c)
	sameVersions(t, before, after, isArgoCD, "--crds=rollouts on Argo CD CRDs")
	sameVersions(t, before, after, isForeign, "--crds=rollouts on other groups")
	for _, n := range checks.ArgoRolloutsCRDs {
		if !adopted(after[n], checks.DefaultReleaseName, checks.DefaultNamespace) {
			t.Errorf("--crds=rollouts did not adopt %s: %v %v", n, after[n].Labels, after[n].Annotations)
		}
	}

	// 6. A user who may list CRDs but not patch them gets a per-object error, exit 1.
	ctx := context.Background()
	_, err := c.Kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "crd-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "crd-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "crd-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "reader", APIGroup: "rbac.authorization.k8s.io"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reader := c.UserKubeconfig(t, "reader")
	res = tc.Run(t, nil, "--kubeconfig", reader, "-o", "json", "--only", "argo-crds-ownership", "--fix", "--yes")
	doc = res.JSON(t)
	if res.Code != 1 {
		t.Fatalf("reader --fix: exit %d, want 1\n%s", res.Code, res.Stderr)
	}
	wantStatus(t, doc, "argo-crds-ownership", "fail", "3 of 8")
	for _, want := range []string{"✖ CustomResourceDefinition/applications.argoproj.io: forbidden", `cannot patch resource "customresourcedefinitions"`, "0 patched, 3 failed"} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("reader --fix output lacks %q:\n%s", want, res.Stderr)
		}
	}
	sameVersions(t, after, crdVersions(t, c), func(string) bool { return true }, "after a forbidden --fix")

	// 7. --fix --yes (table output) adopts the rest; the re-run check passes.
	res = tc.Run(t, nil, "--kubeconfig", c.AdminKubeconfig(), "--only", "argo-crds-ownership", "--fix", "--yes", "--no-color")
	if res.Code != 0 {
		t.Fatalf("--fix --yes: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, want := range []string{"Fix plan: will patch 3 object(s)", "3 patched, 0 failed", "✔ pass  argo-crds-ownership"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("--fix --yes table output lacks %q:\n%s", want, res.Stdout)
		}
	}
	fixed := crdVersions(t, c)
	sameVersions(t, before, fixed, isForeign, "--fix on other groups")
	sameVersions(t, after, fixed, isRollouts, "--fix on already adopted Rollouts CRDs")
	for name, m := range fixed {
		if isArgo(name) && !adopted(m, checks.DefaultReleaseName, checks.DefaultNamespace) {
			t.Errorf("%s not adopted: %v %v", name, m.Labels, m.Annotations)
		}
		if isArgo(name) && len(m.ManagedFields) > 0 {
			found := false
			for _, mf := range m.ManagedFields {
				found = found || mf.Manager == checks.FieldManager
			}
			if !found {
				t.Errorf("%s has no managed fields of %s", name, checks.FieldManager)
			}
		}
	}
	_, doc = c.RunJSONReplayed(t, nil, only...)
	wantStatus(t, doc, "argo-crds-ownership", "pass", "all 8 argoproj.io CRDs")

	// 8. A second --fix plans nothing and changes nothing.
	res, doc = c.RunJSON(t, nil, "--only", "argo-crds-ownership", "--fix", "--yes")
	if res.Code != 0 || !strings.Contains(res.Stderr, "nothing to fix") {
		t.Fatalf("second --fix: exit %d, stderr %q", res.Code, res.Stderr)
	}
	wantStatus(t, doc, "argo-crds-ownership", "pass")
	sameVersions(t, fixed, crdVersions(t, c), func(string) bool { return true }, "second --fix")

	// 9. A CRD owned by another release fails, naming it.
	c.Kubectl(t, "annotate", "--overwrite", "crd", "rollouts.argoproj.io", "meta.helm.sh/release-name=other-release")
	_, doc = c.RunJSONReplayed(t, nil, "--only", "argo-crds-ownership")
	wantStatus(t, doc, "argo-crds-ownership", "fail", "rollouts.argoproj.io (owned by release other-release in namespace codefresh)")
	// ...and for a release of another name, all are someone else's.
	_, doc = c.RunJSONReplayed(t, nil, "--only", "argo-crds-ownership", "--release-name", "mine", "-n", "gitops")
	wantStatus(t, doc, "argo-crds-ownership", "fail", "8 of 8", "owned by release cf-gitops-runtime in namespace codefresh")
}

// TestExistingRuntime finds a runtime by its Helm release (written with
// Helm's own storage driver), its codefresh-cm ConfigMap and its
// cap-app-proxy Deployment.
func TestExistingRuntime(t *testing.T) {
	tc.Parallel(t)
	c := tc.Start(t)
	ctx := context.Background()
	c.CreateNamespace(t, "codefresh")
	c.CreateNamespace(t, "web")
	store := func(ns, name, chartName string, status rspb.Status) {
		t.Helper()
		d := driver.NewSecrets(c.Kube.CoreV1().Secrets(ns))
		rls := &rspb.Release{Name: name, Namespace: ns, Version: 1,
			Info:  &rspb.Info{Status: status},
			Chart: &chart.Chart{Metadata: &chart.Metadata{Name: chartName, Version: "0.29.3", AppVersion: "0.1.73"}}}
		if err := d.Create("sh.helm.release.v1."+name+".v1", rls); err != nil {
			t.Fatal(err)
		}
	}

	// An unrelated release is not a runtime.
	store("web", "nginx", "ingress-nginx", rspb.StatusDeployed)
	_, doc := c.RunJSONReplayed(t, nil, "--only", "existing-runtime")
	wantStatus(t, doc, "existing-runtime", "pass")

	// A (failed) gitops-runtime release is.
	store("codefresh", "cf-gitops-runtime", "gitops-runtime", rspb.StatusFailed)
	res, doc := c.RunJSONReplayed(t, nil, "--only", "existing-runtime")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1", res.Code)
	}
	ch := wantStatus(t, doc, "existing-runtime", "fail", "in namespace codefresh: Helm release cf-gitops-runtime (chart gitops-runtime-0.29.3, revision 1, failed)")
	if !strings.Contains(ch.Hint, "helm upgrade") || !strings.Contains(ch.Hint, "kubectl gitops-preflight --upgrade -n codefresh --release-name cf-gitops-runtime") {
		t.Errorf("hint %q does not say to upgrade the same release", ch.Hint)
	}

	// codefresh-cm and cap-app-proxy elsewhere (a CLI-installed runtime) are too.
	c.CreateNamespace(t, "legacy")
	_, err := c.Kube.CoreV1().ConfigMaps("legacy").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "codefresh-cm", Labels: map[string]string{"codefresh.io/runtime-name": "old-rt"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	one := int32(1)
	_, err = c.Kube.AppsV1().Deployments("legacy").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "cap-app-proxy"},
		Spec: appsv1.DeploymentSpec{Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cap-app-proxy"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "cap-app-proxy"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "cap-app-proxy", Image: "quay.io/codefresh/cap-app-proxy:1.4124.0"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Another ConfigMap of the same name pattern but another name is not matched.
	_, err = c.Kube.CoreV1().ConfigMaps("web").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "codefresh-cm-backup"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, doc = c.RunJSONReplayed(t, nil, "--only", "existing-runtime", "--release-name", "mine", "-n", "gitops")
	ch = wantStatus(t, doc, "existing-runtime", "fail", "in namespace legacy: ConfigMap codefresh-cm (runtime old-rt), Deployment cap-app-proxy")
	if len(ch.Objects) != 3 || strings.Contains(ch.Hint, "helm upgrade") {
		t.Errorf("objects %v (want 3), hint %q (not about upgrading)", ch.Objects, ch.Hint)
	}
}
