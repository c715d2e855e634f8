package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// The tests of this file compare the plugin's verdict with what real Helm
// then does with `helm install --no-hooks` of the real gitops-runtime chart
// 0.30.0 (the fixtures' gitops-runtime/chart, read in place).
// A disagreement fails the test.

var chartChecksOnly = "chart-renders,helm-ownership,argo-crds-ownership"

// preflight runs the chart-aware checks for release rel in ns.
func preflight(t *testing.T, c *tc.Cluster, rel, ns, values string, extra ...string) (tc.Result, reporters.Document) {
	t.Helper()
	args := append([]string{"--only", chartChecksOnly, "--chart", fixtureChart(t), "-f", values, "--release-name", rel, "-n", ns}, extra...)
	return c.RunJSON(t, nil, args...)
}

func createLeftoverSealedSecretsRBAC(t *testing.T, c *tc.Cluster) {
	t.Helper()
	kube := kubernetes.NewForConfigOrDie(c.Admin)
	labels := map[string]string{"app.kubernetes.io/name": "sealed-secrets", "app.kubernetes.io/instance": "sealed-secrets"}
	ctx := context.Background()
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "secrets-unsealer", Labels: labels},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"bitnami.com"}, Resources: []string{"sealedsecrets"}, Verbs: []string{"get", "list", "watch"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "sealed-secrets-controller", Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "secrets-unsealer"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "sealed-secrets-controller", Namespace: "kube-system"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func objectNamed(doc reporters.CheckDocument, kind, name string) bool {
	for _, o := range doc.Objects {
		if o.Kind == kind && o.Name == name {
			return true
		}
	}
	return false
}

// ownedState returns, for each ClusterRole and CRD carrying release rel's
// ownership annotation, what a --fix of it would change: its generation,
// labels and annotations, and whether the plugin's field manager
// (checks.FieldManager) owns a field of it. Not its resourceVersion: the API
// server's own controllers write a new CRD's status (NamesAccepted,
// Established) and aggregate ClusterRoles' rules when they come to it,
// which on a loaded machine is after the test read them.
func ownedState(t *testing.T, c *tc.Cluster, rel string) map[string]string {
	t.Helper()
	state := func(m metav1.ObjectMeta) string {
		fixed := false
		for _, f := range m.ManagedFields {
			fixed = fixed || f.Manager == checks.FieldManager
		}
		return fmt.Sprintf("generation %d, labels %v, annotations %v, fields of %s: %v", m.Generation, m.Labels, m.Annotations, checks.FieldManager, fixed)
	}
	out := map[string]string{}
	for name, m := range crdVersions(t, c) {
		if m.Annotations["meta.helm.sh/release-name"] == rel {
			out["crd/"+name] = state(m.ObjectMeta)
		}
	}
	kube := kubernetes.NewForConfigOrDie(c.Admin)
	crs, err := kube.RbacV1().ClusterRoles().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range crs.Items {
		if r.Annotations["meta.helm.sh/release-name"] == rel {
			out["clusterrole/"+r.Name] = state(r.ObjectMeta)
		}
	}
	return out
}

// ownershipChain runs, on one cluster, the ownership scenarios in the order
// a cluster lives them, each compared with `helm install --no-hooks`:
//  1. clean cluster: the plugin passes;
//  2. leftover Sealed Secrets RBAC: the plugin fails naming
//     ClusterRole/secrets-unsealer, Helm fails; after --fix --yes Helm
//     installs release rel1 in ns1;
//  3. a second runtime (rel2 in ns2) beside the deployed rel1: the plugin
//     fails, --fix refuses every object of rel1 and changes none of them
//     (their generation, labels and annotations equal, no field of the
//     plugin's field manager), exit 1; Helm fails;
//  4. rel1 uninstalled, its kept CRDs left: the plugin fails for rel2 (owner
//     gone), --fix adopts, Helm installs rel2.
//
// installAfterFix are extra flags of the `helm install` after --fix: Helm 4
// installs with server-side apply, and the adopted leftover objects have
// fields another field manager set (here the test's client), which
// conflict unless --force-conflicts (the plugin's hint says so); --replace
// reuses the name of the install that failed on them.
//
// With Helm 4 the chain runs only what Helm 4 decides differently: the
// installs after --fix (server-side apply). Whether an install may take an
// existing object at all is decided, before anything is created, by
// pkg/action's existingResourceConflict and checkOwnership, the same rule in
// Helm 3.22 and Helm 4.3 (https://github.com/helm/helm/blob/v4.3.1/pkg/action/validate.go,
// https://github.com/helm/helm/blob/v3.22.0/pkg/action/validate.go): the
// clean cluster, the install refused over the leftover RBAC, the second
// runtime and the install refused over the kept CRDs are Helm 3's steps
// alone, and the plugin's runs there do not depend on the Helm major.
func ownershipChain(t *testing.T, helm, major string, installAfterFix ...string) {
	c := tc.Start(t)
	values := chartValues(t, renderingValues)
	sameRule := major == "4" // the steps existingResourceConflict decides ran with Helm 3

	// 1. Clean cluster.
	var res tc.Result
	var doc reporters.Document
	if !sameRule {
		res, doc = preflight(t, c, "rel1", "ns1", values)
		wantCode(t, res, 0)
		wantStatus(t, doc, "chart-renders", "pass", "gitops-runtime 0.30.0")
		wantStatus(t, doc, "helm-ownership", "pass")
		if ok := dryRunHelm(t, c, helm, "rel1", "ns1", values); !ok {
			t.Errorf("clean cluster: plugin passes, helm install --dry-run=server fails")
		}
	}

	// 2. Leftover Sealed Secrets RBAC.
	createLeftoverSealedSecretsRBAC(t, c)
	if !sameRule {
		leftoverRBAC(t, c, helm, values)
	}
	res = tc.Run(t, nil, "--kubeconfig", c.AdminKubeconfig(), "--only", chartChecksOnly, "--chart", fixtureChart(t), "-f", values,
		"--release-name", "rel1", "-n", "ns1", "--fix", "--yes")
	wantCode(t, res, 0)
	if !strings.Contains(res.Stdout, "ClusterRole/secrets-unsealer") {
		t.Errorf("fix plan does not name ClusterRole/secrets-unsealer:\n%s", res.Stdout)
	}
	// After the adoption: Helm 3 (three-way merge patch) installs; Helm 4
	// (server-side apply) meets the fields the test's client set, and fails
	// unless --force-conflicts. The plugin, told which Helm, agrees.
	res, doc = preflight(t, c, "rel1", "ns1", values, "--helm-major", major)
	if major == "4" {
		wantCode(t, res, 1)
		wantStatus(t, doc, "helm-ownership", "fail", "server-side apply", "another field manager", "ClusterRole secrets-unsealer")
		out, ok := helmInstall(t, c, helm, "rel1", "ns1", values)
		agree(t, "Helm 4 after --fix, without --force-conflicts", res, out, ok)
		if ok || !strings.Contains(out, "conflict") {
			t.Fatalf("helm 4 install after --fix without --force-conflicts: ok=%v\n%s", ok, out)
		}
	} else {
		wantCode(t, res, 0)
		wantStatus(t, doc, "helm-ownership", "pass")
	}
	if out, ok := helmInstall(t, c, helm, "rel1", "ns1", values, installAfterFix...); !ok {
		t.Fatalf("helm install after --fix failed:\n%s", out)
	}

	// 3. A second runtime beside the deployed one.
	if !sameRule {
		secondRuntime(t, c, helm, values)
	}

	// 4. rel1 uninstalled, its kept CRDs left: reinstalled as rel2 in ns2.
	if out, code := helmCmd(t, c, helm, "uninstall", "rel1", "-n", "ns1", "--no-hooks"); code != 0 {
		t.Fatalf("helm uninstall: %s", out)
	}
	kept := ownedState(t, c, "rel1")
	if len(kept) == 0 {
		t.Fatal("no object of rel1 kept after uninstall: the scenario needs the chart's kept CRDs")
	}
	res, _ = preflight(t, c, "rel2", "ns2", values)
	wantCode(t, res, 1)
	if !sameRule {
		out, ok := helmInstall(t, c, helm, "rel2", "ns2", values)
		agree(t, "kept CRDs of an uninstalled release", res, out, ok)
	}
	res = tc.Run(t, nil, "--kubeconfig", c.AdminKubeconfig(), "--only", chartChecksOnly, "--chart", fixtureChart(t), "-f", values,
		"--release-name", "rel2", "-n", "ns2", "--fix", "--yes")
	wantCode(t, res, 0)
	if out, ok := helmInstall(t, c, helm, "rel2", "ns2", values); !ok {
		t.Fatalf("helm install after adopting the kept CRDs failed:\n%s", out)
	}
}

// leftoverRBAC is step 2 of ownershipChain before --fix: the plugin fails
// naming the leftover Sealed Secrets RBAC, and Helm fails on it.
func leftoverRBAC(t *testing.T, c *tc.Cluster, helm, values string) {
	t.Helper()
	res, doc := preflight(t, c, "rel1", "ns1", values)
	wantCode(t, res, 1)
	own := wantStatus(t, doc, "helm-ownership", "fail", "ClusterRole", "secrets-unsealer", "no owner")
	if !strings.Contains(own.Hint, "--force-conflicts") || !strings.Contains(own.Hint, "--take-ownership") {
		t.Errorf("hint %q names neither Helm 4's --force-conflicts nor --take-ownership", own.Hint)
	}
	if !objectNamed(own, "ClusterRole", "secrets-unsealer") || !objectNamed(own, "ClusterRoleBinding", "sealed-secrets-controller") {
		t.Errorf("helm-ownership objects %v lack the leftover RBAC", own.Objects)
	}
	out, ok := helmInstall(t, c, helm, "rel1", "ns1", values)
	agree(t, "leftover sealed-secrets RBAC", res, out, ok)
	if ok || !strings.Contains(out, "secrets-unsealer") {
		t.Fatalf("helm install with leftover RBAC: ok=%v\n%s", ok, out)
	}
}

// secondRuntime is step 3 of ownershipChain: with release rel1 deployed,
// the plugin fails release rel2 naming rel1, Helm fails, and --fix refuses
// every object of rel1 and changes none of them.
func secondRuntime(t *testing.T, c *tc.Cluster, helm, values string) {
	t.Helper()
	before := ownedState(t, c, "rel1")
	if len(before) < 10 {
		t.Fatalf("release rel1 owns only %d cluster-scoped objects: %v", len(before), before)
	}
	res, doc := preflight(t, c, "rel2", "ns2", values)
	wantCode(t, res, 1)
	wantStatus(t, doc, "helm-ownership", "fail", "owned by deployed release rel1 in namespace ns1")
	out, ok := helmInstall(t, c, helm, "rel2", "ns2", values)
	agree(t, "second runtime", res, out, ok)
	res = tc.Run(t, nil, "--kubeconfig", c.AdminKubeconfig(), "--only", chartChecksOnly, "--chart", fixtureChart(t), "-f", values,
		"--release-name", "rel2", "-n", "ns2", "--fix", "--yes")
	wantCode(t, res, 1)
	if !strings.Contains(res.Stdout, "refused") || !strings.Contains(res.Stdout, "deployed release rel1") {
		t.Errorf("fix does not refuse the objects of rel1:\n%s", res.Stdout)
	}
	after := ownedState(t, c, "rel1")
	for k, v := range before {
		if after[k] != v {
			t.Errorf("--fix changed %s of the deployed release:\n before: %s\n after:  %s", k, v, after[k])
		}
	}
}

// dryRunHelm asks Helm whether it would install (server-side dry run: no
// object is created, ownership is checked).
func dryRunHelm(t *testing.T, c *tc.Cluster, helm, rel, ns, values string) bool {
	t.Helper()
	out, code := helmCmd(t, c, helm, "install", rel, fixtureChart(t), "-n", ns, "--no-hooks", "-f", values, "--dry-run=server")
	if code != 0 {
		t.Logf("helm install --dry-run=server:\n%s", out)
	}
	return code == 0
}

func TestChartOwnershipAgreesWithHelm3(t *testing.T) {
	tc.Parallel(t, tc.Long)
	ownershipChain(t, tc.HelmBinary(t), "3")
}

// Helm 4 installs with server-side apply; its ownership rule is the same.
func TestChartOwnershipAgreesWithHelm4(t *testing.T) {
	tc.Parallel(t, tc.Long)
	ownershipChain(t, tc.Helm4Binary(t), "4", "--force-conflicts", "--replace")
}

// TestChartArgoAndGatewayAgreeWithHelm runs, on one cluster:
//  1. httpRoute mode without the Gateway API CRDs: the plugin fails naming
//     the kind HTTPRoute, and Helm fails;
//  2. community Argo CD and Argo Rollouts installed from their upstream
//     manifests: the plugin fails on the Argo CD CRDs only (chart 0.30
//     renders no Argo Rollouts CRD; admission-objects leaves the existing
//     CRDs out of its dry runs), Helm fails; after --fix --yes the
//     plugin passes, the Rollouts CRDs are untouched, and Helm installs.
func TestChartArgoAndGatewayAgreeWithHelm(t *testing.T) {
	tc.Parallel(t)
	c := tc.Start(t)
	helm := tc.HelmBinary(t)

	// 1. httpRoute mode without Gateway API.
	route := chartValues(t, renderingValues+`    httpRoute:
      enabled: true
      hostnames:
        - rt.example.com
      parentRefs:
        - name: gateway
          namespace: gateway-system
`)
	res, doc := preflight(t, c, "cf-gitops-runtime", "codefresh", route)
	wantCode(t, res, 1)
	own := wantStatus(t, doc, "helm-ownership", "fail", "HTTPRoute")
	named := false
	for _, o := range own.Objects {
		named = named || o.Kind == "HTTPRoute"
	}
	if !named {
		t.Errorf("helm-ownership objects %v name no HTTPRoute", own.Objects)
	}
	out, ok := helmInstall(t, c, helm, "cf-gitops-runtime", "codefresh", route)
	agree(t, "httpRoute without Gateway API", res, out, ok)
	if ok || !strings.Contains(out, "HTTPRoute") {
		t.Errorf("helm install in httpRoute mode without Gateway API: ok=%v\n%s", ok, out)
	}

	// 2. Community Argo CD and Argo Rollouts.
	c.CreateNamespace(t, "argocd")
	c.CreateNamespace(t, "argo-rollouts")
	c.Kubectl(t, "apply", "--server-side", "-n", "argo-rollouts", "-f", conflictsFixture(t, "argo-rollouts/install.yaml"))
	c.Kubectl(t, "apply", "--server-side", "-n", "argocd", "-f", conflictsFixture(t, "argo-cd/install.yaml"))
	rollouts := crdVersions(t, c)
	values := chartValues(t, renderingValues)
	res, doc = preflight(t, c, "cf-gitops-runtime", "codefresh", values)
	wantCode(t, res, 1)
	argo := wantStatus(t, doc, "argo-crds-ownership", "fail", "applications.argoproj.io")
	for _, o := range argo.Objects {
		if isRollouts(o.Name) {
			t.Errorf("argo-crds-ownership reports %s, which chart 0.30 does not render", o.Name)
		}
	}
	if own := tc.Check(t, doc, "helm-ownership"); strings.Contains(own.Message, "argoproj.io") {
		t.Errorf("helm-ownership reports Argo CRDs too: %s", own.Message)
	}
	// admission-objects sends no dry-run create of the Argo CD CRDs that
	// exist (Helm never creates them: argo-crds-ownership judges them) and
	// names them as not judged.
	ares, adoc := c.RunJSON(t, nil, "--only", "admission-objects", "--chart", fixtureChart(t), "-f", values, "--release-name", "cf-gitops-runtime", "-n", "codefresh")
	if adm := tc.Check(t, adoc, "admission-objects"); adm.Status == "fail" || !strings.Contains(adm.Message, "CustomResourceDefinition applications.argoproj.io: it exists already") {
		t.Errorf("admission-objects with the Argo CD CRDs installed (exit %d): %s %s", ares.Code, adm.Status, adm.Message)
	}
	out, ok = helmInstall(t, c, helm, "cf-gitops-runtime", "codefresh", values)
	agree(t, "community Argo CD", res, out, ok)

	res = tc.Run(t, nil, "--kubeconfig", c.AdminKubeconfig(), "--only", chartChecksOnly, "--chart", fixtureChart(t), "-f", values, "--fix", "--yes")
	wantCode(t, res, 0)
	sameVersions(t, rollouts, crdVersions(t, c), isRollouts, "--fix with a chart that renders no Rollouts CRD")
	res, _ = preflight(t, c, "cf-gitops-runtime", "codefresh", values)
	out, ok = helmInstall(t, c, helm, "cf-gitops-runtime", "codefresh", values)
	agree(t, "community Argo CD after --fix", res, out, ok)
	if !ok {
		t.Errorf("helm install after --fix failed:\n%s", out)
	}
}

// TestChartRendersAgreesWithHelmTemplate compares chart-renders with `helm
// template --validate` (the cluster's real capabilities) over values files
// the chart accepts and refuses: the verdicts must agree, and on a refusal
// the plugin's message must be Helm's (the chart's own words).
func TestChartRendersAgreesWithHelmTemplate(t *testing.T) {
	tc.Parallel(t, tc.Long)
	c := tc.Start(t)
	helm := tc.HelmBinary(t)

	// The default chart (oci://quay.io/codefresh/gitops-runtime) cannot be
	// pulled here (the harness blackholes quay.io): the chart checks skip at
	// once, saying why and which flag to use, and the run still passes.
	res, doc := c.RunJSON(t, nil, "--only", chartChecksOnly)
	wantCode(t, res, 0)
	wantStatus(t, doc, "chart-renders", "skip", "oci://quay.io/codefresh/gitops-runtime", "--chart")
	wantStatus(t, doc, "helm-ownership", "skip", "--chart")
	if res.Elapsed > 15*time.Second {
		t.Errorf("an unreachable default chart took %s", res.Elapsed)
	}

	cases := map[string]string{
		"minimal": renderingValues,
		"no-runtime-name": `global:
  codefresh:
    accountId: acc
    userToken: {token: t}
`,
		"no-user-token": `global:
  codefresh: {accountId: acc}
  runtime: {name: rt}
`,
		"no-account-id": `global:
  codefresh:
    userToken: {token: t}
  runtime: {name: rt}
`,
		"ingress-without-hosts": renderingValues + `    ingress:
      enabled: true
`,
		"ingress-with-host": renderingValues + `    ingress:
      enabled: true
      hosts: [rt.example.com]
`,
		"service-mesh-without-url": renderingValues + `tunnel-client:
  enabled: false
`,
		"service-mesh-with-url": renderingValues + `    ingressUrl: https://rt.example.com
tunnel-client:
  enabled: false
`,
		"reserved-secret-name": `global:
  codefresh:
    accountId: acc
    userToken:
      secretKeyRef: {name: codefresh-token, key: token}
  runtime: {name: rt}
`,
		"existing-argo-cd": renderingValues + `argo-cd:
  enabled: false
`,
		"secret-key-ref": `global:
  codefresh:
    accountId: acc
    userToken:
      secretKeyRef: {name: my-token, key: token}
  runtime: {name: rt}
`,
		"no-values-at-all": "{}\n",
	}
	agreeN := 0
	for name, yaml := range cases {
		t.Run(name, func(t *testing.T) {
			values := chartValues(t, yaml)
			res, doc := c.RunJSON(t, nil, "--only", "chart-renders", "--chart", fixtureChart(t), "-f", values, "-n", "codefresh")
			got := tc.Check(t, doc, "chart-renders")
			out, code := helmCmd(t, c, helm, "template", "cf-gitops-runtime", fixtureChart(t), "-n", "codefresh", "-f", values, "--validate")
			helmOK := code == 0
			if (got.Status == "pass") != helmOK || (res.Code == 0) != helmOK {
				t.Fatalf("chart-renders %s (exit %d: %s) but helm template ok=%v:\n%s", got.Status, res.Code, got.Message, helmOK, out)
			}
			if !helmOK {
				_, msg, _ := strings.Cut(got.Message, "in namespace codefresh: ")
				msg, _, _ = strings.Cut(msg, " (in .Values.") // the value expression is the plugin's addition
				if msg == "" || !strings.Contains(strings.Join(strings.Fields(out), " "), msg) || strings.Contains(msg, "templates/") {
					t.Errorf("chart-renders message %q is not the chart's own words in:\n%s", got.Message, out)
				}
				if got.Hint == "" {
					t.Error("no hint")
				}
			}
			agreeN++
		})
	}
	if agreeN < 10 {
		t.Errorf("only %d values files compared", agreeN)
	}
}
