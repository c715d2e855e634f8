package checks

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// deploymentYAML is a Deployment running image, with the Helm ownership
// annotations of release rel in relNS when rel is set.
func deploymentYAML(ns, name, image, rel, relNS string, labels string) string {
	ann := ""
	if rel != "" {
		ann = fmt.Sprintf("\n  annotations: {meta.helm.sh/release-name: %s, meta.helm.sh/release-namespace: %s}", rel, relNS)
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
  namespace: %s
  labels: {%s}%s
spec:
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec:
      containers: [{name: c, image: %q}]
`, name, ns, labels, ann, name, name, image)
}

// TestArgoComponentsUpgrade: before helm upgrade the Argo workloads of the
// release being upgraded are its own; another Argo installation, or one
// owned by a release of the same name in another namespace, still fails;
// before an install the release's own workloads fail as before.
func TestArgoComponentsUpgrade(t *testing.T) {
	own := deploymentYAML("codefresh", "argo-cd-server", "quay.io/argoproj/argocd:v3.1.8", DefaultReleaseName, "codefresh", "app.kubernetes.io/part-of: argocd") +
		"---\n" + deploymentYAML("codefresh", "argo-server", "quay.io/argoproj/argocli:v3.6.1", DefaultReleaseName, "codefresh", "")
	community := deploymentYAML("argocd", "argocd-server", "quay.io/argoproj/argocd:v3.1.8", "argocd", "argocd", "app.kubernetes.io/part-of: argocd")
	otherNS := deploymentYAML("gitops", "argo-rollouts", "quay.io/argoproj/argo-rollouts:v1.8.3", DefaultReleaseName, "gitops", "")
	up := Inputs{}
	tests := []struct {
		name string
		docs []string
		in   Inputs
		want outcome
	}{
		{"upgrade: only the release's own", []string{own}, up,
			outcome{StatusPass, []string{"besides those of release cf-gitops-runtime being upgraded (2 workloads)"}}},
		{"upgrade: a community Argo CD beside it", []string{own, community}, up,
			outcome{StatusFail, []string{"found 1 Argo Project workload(s): Argo CD in argocd (Deployment/argocd-server)", "do not belong to release cf-gitops-runtime in namespace codefresh"}}},
		{"upgrade: same release name, other namespace", []string{own, otherNS}, up,
			outcome{StatusFail, []string{"Argo Rollouts in gitops (Deployment/argo-rollouts)"}}},
		{"pre-install: the release's own still fail", []string{own}, Inputs{},
			outcome{StatusFail, []string{"found 2 Argo Project workload(s)"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.expect(t, newKit(t, tt.docs...).with(tt.in).inMode(modeOfName(tt.name)).run(ArgoComponents()))
		})
	}
}

// TestSealedSecretsUpgrade: before helm upgrade the release's own
// sealed-secrets-controller passes; another controller fails.
func TestSealedSecretsUpgrade(t *testing.T) {
	const img = "quay.io/codefresh/sealed-secrets-controller:0.29.0"
	own := deploymentYAML("codefresh", "sealed-secrets-controller", img, DefaultReleaseName, "codefresh", "app.kubernetes.io/name: sealed-secrets")
	community := deploymentYAML("kube-system", "sealed-secrets", "docker.io/bitnami/sealed-secrets-controller:0.29.0", "sealed-secrets", "kube-system", "app.kubernetes.io/name: sealed-secrets")
	unowned := deploymentYAML("codefresh", "sealed-secrets-controller", img, "", "", "")
	up := Inputs{}
	tests := []struct {
		name string
		docs []string
		in   Inputs
		want outcome
	}{
		{"upgrade: the release's own controller", []string{own}, up,
			outcome{StatusPass, []string{"the only SealedSecrets controller is release cf-gitops-runtime's own (Deployment codefresh/sealed-secrets-controller)"}}},
		{"upgrade: a community controller beside it", []string{own, community}, up,
			outcome{StatusFail, []string{"SealedSecrets controller found: Deployment kube-system/sealed-secrets", "does not belong to release cf-gitops-runtime"}}},
		{"upgrade: in the namespace but not Helm-owned", []string{unowned}, up,
			outcome{StatusFail, []string{"Deployment codefresh/sealed-secrets-controller"}}},
		{"pre-install: the release's own still fails", []string{own}, Inputs{},
			outcome{StatusFail, []string{"Deployment codefresh/sealed-secrets-controller"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.expect(t, newKit(t, tt.docs...).with(tt.in).inMode(modeOfName(tt.name)).run(SealedSecrets()))
		})
	}
}

// TestExistingRuntimeUpgrade: before helm upgrade the release being
// upgraded is not a conflict; the other runtimes are judged by the
// multi-runtime rule against the target chart and the values Helm computes.
func TestExistingRuntimeUpgrade(t *testing.T) {
	c030 := crdChart(t, "0.30.0")
	first := runtimeRelease(t, "ns1", "rel1", "0.30.0", true, 3)
	second := runtimeRelease(t, "ns2", "rel-ns2", "0.30.0", true, 0)
	ownCM := "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: ns1, name: codefresh-cm, annotations: {meta.helm.sh/release-name: rel1, meta.helm.sh/release-namespace: ns1}}\n"
	strayCM := "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: ns1, name: codefresh-cm}\n"
	upgrade := func(in Inputs) Inputs { return in }
	alone := Inputs{Namespace: "ns1", ReleaseName: "rel1"}
	tests := []struct {
		name string
		docs []string
		in   Inputs
		objs []runtime.Object
		want outcome
	}{
		{"only the release being upgraded", []string{ownCM}, alone, []runtime.Object{first}, outcome{StatusPass, []string{
			"the only GitOps Runtime on the cluster is release rel1 in namespace ns1, the one being upgraded",
			"Helm release rel1 (chart gitops-runtime-0.30.0", "ConfigMap codefresh-cm"}}},
		{"a ConfigMap in its namespace Helm does not own", []string{strayCM}, alone, []runtime.Object{first}, outcome{StatusFail, []string{
			"namespace ns1 already holds a runtime (ConfigMap codefresh-cm)"}}},
		{"namespaced second beside a namespaced first", nil, upgrade(multiInputs("ns2", true, false)), []runtime.Object{first, second}, outcome{StatusPass, []string{
			"runtime release rel1 in namespace ns1 (chart gitops-runtime-0.30.0): namespaced, installs the cluster-wide parts (3 CRDs)",
			"the upgraded runtime (release rel-ns2 in namespace ns2, chart gitops-runtime 0.30.0 rendered with the upgrade's values): namespaced, installs no CRDs"}}},
		{"upgraded to cluster-wide beside another runtime", nil, upgrade(multiInputs("ns2", false, false)), []runtime.Object{first, second}, outcome{StatusFail, []string{
			"the planned runtime is cluster-wide", "Multi Runtime Installation"}}},
		{"the target would install the CRDs a second time", nil, upgrade(multiInputs("ns2", true, true)), []runtime.Object{first, second}, outcome{StatusFail, []string{
			"the planned runtime would install the cluster-wide parts (1 CRDs) too"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKit(t, tt.docs...).objects(tt.objs...).with(tt.in).inMode(ModeUpgrade).withChart(c030)
			tt.want.expect(t, k.run(ExistingRuntime()))
		})
	}

	// No values flag: Helm reuses the deployed values, namespaced, though
	// the flags say nothing of singleNamespace (the target's CRDs default
	// on, so the rule still breaks, but not on the mode).
	k := newKit(t).objects(first, second).with(Inputs{Namespace: "ns2", ReleaseName: "rel-ns2"}).inMode(ModeUpgrade).withChart(c030)
	r := k.run(ExistingRuntime())
	outcome{StatusFail, []string{"the planned runtime would install the cluster-wide parts"}}.expect(t, r)
	if strings.Contains(r.Message, "the planned runtime is cluster-wide") {
		t.Errorf("the reused values are namespaced, yet: %s", r.Message)
	}
}

// TestConflictsAgainstTheTarget: before helm upgrade another installation
// conflicts only when the target runs the same component: an Argo Rollouts
// or SealedSecrets controller installed on its own beside a target that
// runs none is not a conflict (upgrade-deletes advises installing Argo
// Rollouts on its own when the target drops the runtime's).
func TestConflictsAgainstTheTarget(t *testing.T) {
	argoCD := deploymentYAML("codefresh", "argo-cd-server", "quay.io/argoproj/argocd:v3.1.8", "", "", "app.kubernetes.io/part-of: argocd")
	sealed := deploymentYAML("codefresh", "sealed-secrets-controller", "quay.io/codefresh/sealed-secrets-controller:0.29.0", "", "", "app.kubernetes.io/name: sealed-secrets")
	communityCD := deploymentYAML("argocd", "argocd-server", "quay.io/argoproj/argocd:v3.1.8", "argocd", "argocd", "app.kubernetes.io/part-of: argocd")
	rollouts := deploymentYAML("argo-rollouts", "argo-rollouts", "quay.io/argoproj/argo-rollouts:v1.8.3", "", "", "app.kubernetes.io/name: argo-rollouts")
	communitySealed := deploymentYAML("kube-system", "sealed-secrets", "docker.io/bitnami/sealed-secrets-controller:0.29.0", "", "", "app.kubernetes.io/name: sealed-secrets")
	rel := schedRelease(t, argoCD)
	up := Inputs{}
	tests := []struct {
		name    string
		target  string
		cluster string
		check   Check
		want    outcome
	}{
		{"Argo Rollouts on its own, the target runs Argo CD only", argoCD, rollouts, ArgoComponents(),
			outcome{StatusPass, []string{"besides Argo Rollouts in argo-rollouts (Deployment/argo-rollouts), which the upgraded runtime does not run"}}},
		{"another Argo CD, the target runs Argo CD", argoCD, communityCD, ArgoComponents(),
			outcome{StatusFail, []string{"Argo CD in argocd (Deployment/argocd-server)"}}},
		{"another SealedSecrets controller, the target runs none", argoCD, communitySealed, SealedSecrets(),
			outcome{StatusPass, []string{"the upgraded runtime runs no SealedSecrets controller: Deployment kube-system/sealed-secrets is not a conflict"}}},
		{"another SealedSecrets controller, the target runs one", argoCD + "---\n" + sealed, communitySealed, SealedSecrets(),
			outcome{StatusFail, []string{"SealedSecrets controller found: Deployment kube-system/sealed-secrets"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKit(t, tt.cluster).objects(rel).with(up).inMode(ModeUpgrade).withChart(schedChart(t, tt.target))
			tt.want.expect(t, k.run(tt.check))
		})
	}
}

// modeOfName is the run mode a table row's name begins with: "pre-install:"
// rows run before the install, the others before helm upgrade.
func modeOfName(name string) Mode {
	if strings.HasPrefix(name, "pre-install:") {
		return ModePre
	}
	return ModeUpgrade
}
