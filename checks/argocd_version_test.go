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
