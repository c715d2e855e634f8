package checks

import "testing"

// TestArgoCDVersion: the server image tag against the range (no chart
// loaded: the defaults' range).
func TestArgoCDVersion(t *testing.T) {
	existing := existingArgoCD()
	server := argoServerYAML("argocd", "quay.io/argoproj/argocd:v3.1.5")
	runArgoCases(t, ArgoCDVersionCheck(), []argoCase{
		{"version in range", existing, []string{server}, outcome{StatusFail, []string{`Argo CD v3.1.5 does not satisfy ">=3.2 <=3.4"`, "no chart loaded"}}},
		{"version too old", existing, []string{argoServerYAML("argocd", "quay.io/argoproj/argocd:v2.14.0")},
			outcome{StatusFail, []string{`Argo CD v2.14.0 does not satisfy ">=3.2 <=3.4"`}}},
		{"version unknown", existing, []string{argoServerYAML("argocd", "quay.io/argoproj/argocd:latest")},
			outcome{StatusWarn, []string{"has no version tag"}}},
		{"version: chart installs Argo CD", Inputs{}, nil, outcome{StatusSkip, []string{NotApplicable + "Argo CD is installed by the chart"}}},
		{"version within the defaults' range", existing, []string{argoServerYAML("argocd", "quay.io/argoproj/argocd:v3.3.0")}, outcome{StatusPass, []string{"v3.3.0"}}},
	})
}

// TestArgoCDVersionUpgradeFollowsTheReleaseValues: in an --upgrade run
// without values, Helm reuses the release's: a release installed with
// argo-cd.enabled=false is judged (its Argo CD's version against the
// range), one with the chart's Argo CD is not applicable, whatever the
// flags say.
func TestArgoCDVersionUpgradeFollowsTheReleaseValues(t *testing.T) {
	server := argoServerYAML(DefaultNamespace, "quay.io/argoproj/argocd:v2.14.0")
	for _, tc := range []struct {
		name   string
		config map[string]any
		want   outcome
	}{
		{"the release brings its own Argo CD", map[string]any{"argo-cd": map[string]any{"enabled": false}},
			outcome{StatusFail, []string{`Argo CD v2.14.0 does not satisfy`}}},
		{"the chart's Argo CD", map[string]any{},
			outcome{StatusSkip, []string{NotApplicable + "Argo CD is installed by the chart (argo-cd.enabled=true in the values the upgrade renders with)"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKit(t).objects(deployed{Version: "0.29.0", Config: tc.config}.record(t)).yaml(server).inMode(ModeUpgrade).withChart(imageChart(t))
			tc.want.expect(t, k.run(ArgoCDVersionCheck()))
		})
	}
}
