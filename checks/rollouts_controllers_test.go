package checks

import "testing"

// TestRolloutsControllers: more than one controller is a fail of an advisory
// check (SeverityWarn), so it is reported warn.
func TestRolloutsControllers(t *testing.T) {
	rollouts := func(ns, name string) string {
		return controllerYAML("Deployment", ns, name, "quay.io/argoproj/argo-rollouts:v1.8.0", nil, nil, 1)
	}
	post := ModePost
	tests := []struct {
		name string
		yaml []string
		want outcome
	}{
		{"none", []string{controllerYAML("Deployment", "default", "web", "nginx:1.27", nil, nil, 1)},
			outcome{StatusPass, []string{"no Argo Rollouts controller in the cluster"}}},
		{"one", []string{rollouts("codefresh", "cf-argo-rollouts")},
			outcome{StatusPass, []string{"one Argo Rollouts controller: codefresh/cf-argo-rollouts"}}},
		{"the runtime's and a stray one", []string{rollouts("codefresh", "cf-argo-rollouts"), rollouts("argo-rollouts", "argo-rollouts")},
			outcome{StatusWarn, []string{"the runtime's codefresh/cf-argo-rollouts and argo-rollouts/argo-rollouts", "kubectl delete deployment argo-rollouts -n argo-rollouts", "never the CRDs"}}},
		{"two, none the runtime's", []string{rollouts("a", "r1"), rollouts("b", "r2")},
			outcome{StatusWarn, []string{"2 Argo Rollouts controllers (a/r1, b/r2), none in the runtime namespace codefresh"}}},
		{"by label, any image", []string{"apiVersion: apps/v1\nkind: Deployment\nmetadata: {namespace: x, name: mirror, labels: {app.kubernetes.io/component: rollouts-controller}}\nspec:\n  selector: {matchLabels: {app: m}}\n  template:\n    metadata: {labels: {app: m}}\n    spec: {containers: [{name: c, image: registry.example.com/mirror:1}]}\n",
			rollouts("codefresh", "cf-argo-rollouts")},
			outcome{StatusWarn, []string{"x/mirror"}}},
		{"not before install", nil, outcome{StatusSkip, []string{NotApplicable + "runs after the install only (--post)"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mode := post
			if tt.name == "not before install" {
				mode = ModePre
			}
			tt.want.expect(t, newKit(t, tt.yaml...).inMode(mode).run(RolloutsControllers()))
		})
	}
}
