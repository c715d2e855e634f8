package checks

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestUpgradeDeletes runs upgrade-deletes through the kit: the deployed
// revision holds objects the target chart (only ConfigMap codefresh-cm) no
// longer renders, and the live cluster decides what deleting them costs.
func TestUpgradeDeletes(t *testing.T) {
	doc := func(text string) string { return "---\n# Source: gitops-runtime/templates/x.yaml\n" + text }
	oldCM := doc("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: old-cm\n")
	thingsCRD := doc("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.io\n")
	rolloutsCtrl := doc("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: argo-rollouts\n")
	const (
		liveOldCM = `apiVersion: v1
kind: ConfigMap
metadata: {name: old-cm, namespace: codefresh}`
		keptOldCM = `apiVersion: v1
kind: ConfigMap
metadata: {name: old-cm, namespace: codefresh, annotations: {helm.sh/resource-policy: keep}}`
		liveCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.io}`
		things = `apiVersion: example.io/v1
kind: Thing
metadata: {name: t1, namespace: team-a}
---
apiVersion: example.io/v1
kind: Thing
metadata: {name: t2, namespace: team-b}`
		rollouts = `apiVersion: apps/v1
kind: Deployment
metadata: {name: argo-rollouts, namespace: codefresh, labels: {app.kubernetes.io/name: argo-rollouts}}
spec:
  selector: {matchLabels: {app: argo-rollouts}}
  template:
    metadata: {labels: {app: argo-rollouts}}
    spec: {containers: [{name: c, image: quay.io/argoproj/argo-rollouts:v1.7.2}]}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: rollouts.argoproj.io}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: shop}`
		ownRollouts = `apiVersion: apps/v1
kind: Deployment
metadata: {name: argo-rollouts, namespace: argo-rollouts, labels: {app.kubernetes.io/name: argo-rollouts}}
spec:
  selector: {matchLabels: {app: argo-rollouts}}
  template:
    metadata: {labels: {app: argo-rollouts}}
    spec: {containers: [{name: c, image: quay.io/argoproj/argo-rollouts:v1.7.2}]}`
	)
	for _, tt := range []struct {
		name     string
		manifest string // the deployed revision's, besides codefresh-cm
		live     []string
		want     outcome
		impact   Impact // the outcome's: the failure's effect, else the check's
	}{
		{"a ConfigMap deleted", oldCM, []string{liveOldCM},
			outcome{StatusPass, []string{"helm upgrade deletes 1 objects the target no longer renders; none holds custom resources or controls live ones"}}, ImpactDataLoss},
		{"already gone", oldCM, nil,
			outcome{StatusPass, []string{"helm upgrade deletes 0 objects"}}, ImpactDataLoss},
		{"a CRD deleted with its custom resources", oldCM + thingsCRD, []string{liveOldCM, liveCRD, things},
			outcome{StatusFail, []string{"helm upgrade deletes CRD things.example.io and with it 2 custom resources (team-a: 1, team-b: 1)", "helm.sh/resource-policy=keep"}}, ImpactDataLoss},
		{"a kept object stays labelled for the release", oldCM, []string{keptOldCM},
			outcome{StatusWarn, []string{"helm upgrade stops rendering 1 objects it keeps (helm.sh/resource-policy: keep), still labelled for release " + DefaultReleaseName + ": ConfigMap old-cm", "kubectl annotate <kind> <name>"}}, ImpactAdvisory},
		{"the Argo Rollouts controller removed while Rollouts live", rolloutsCtrl, []string{rollouts},
			outcome{StatusFail, []string{"helm upgrade removes the Argo Rollouts controller (Deployment codefresh/argo-rollouts) while 1 rollouts.argoproj.io live: shop/web", "https://github.com/codefresh-io/gitops-runtime-helm/commit/7581098b", "install the controller on its own"}}, ImpactRuntimeBreaks},
		{"another Argo Rollouts controller reconciles them", rolloutsCtrl, []string{rollouts, ownRollouts},
			outcome{StatusPass, []string{"the live ones of the removed controllers are reconciled elsewhere (Argo Rollouts by Deployment argo-rollouts/argo-rollouts)"}}, ImpactDataLoss},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rel := deployed{Version: "0.30.0", Manifest: configMapManifest + tt.manifest}.record(t)
			k := newKit(t, tt.live...).objects(rel).inMode(ModeUpgrade).withChart(targetChart(t, "0.31.0", "", configMapTemplate)).
				serves("v1", metav1.APIResource{Name: "configmaps", Kind: "ConfigMap", Namespaced: true}).
				serves("apps/v1", metav1.APIResource{Name: "deployments", Kind: "Deployment", Namespaced: true}).
				serves("apiextensions.k8s.io/v1", metav1.APIResource{Name: "customresourcedefinitions", Kind: "CustomResourceDefinition"}).
				serves("example.io/v1", metav1.APIResource{Name: "things", Kind: "Thing", Namespaced: true}).
				serves("argoproj.io/v1alpha1", metav1.APIResource{Name: "rollouts", Kind: "Rollout", Namespaced: true})
			o := k.outcome(UpgradeDeletes())
			tt.want.expect(t, o.Result)
			if o.Impact != tt.impact {
				t.Errorf("impact %q, want %q", o.Impact, tt.impact)
			}
		})
	}
}
