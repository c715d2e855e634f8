package checks

import (
	"fmt"
	"testing"
)

// argoServerYAML is Argo CD's server Service and Deployment in ns, with image.
func argoServerYAML(ns, image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  namespace: %[1]s
  name: argocd-server
  labels: {app.kubernetes.io/component: server, app.kubernetes.io/part-of: argocd}
spec: {selector: {app.kubernetes.io/name: argocd-server}}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  namespace: %[1]s
  name: argocd-server
  labels: {app.kubernetes.io/component: server, app.kubernetes.io/part-of: argocd, app.kubernetes.io/name: argocd-server}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: argocd-server}}
  template:
    metadata: {labels: {app.kubernetes.io/name: argocd-server}}
    spec:
      containers: [{name: argocd-server, image: %[2]q}]
`, ns, image)
}

func argoCMYAML(ns string, data string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: %s, name: argocd-cm}\ndata: %s\n", ns, data)
}

func TestArgoCDChecks(t *testing.T) {
	existing := Inputs{ExistingArgoCD: true, Namespace: "argocd"}
	server := argoServerYAML("argocd", "quay.io/argoproj/argocd:v3.1.5")
	tests := []struct {
		name  string
		check Check
		in    Inputs
		yaml  []string
		want  outcome
	}{
		{"server found", ArgoCDServerCheck(), existing, []string{server}, outcome{StatusPass, []string{"Service argocd/argocd-server"}}},
		{"server elsewhere", ArgoCDServerCheck(), existing, []string{argoServerYAML("other", "quay.io/argoproj/argocd:v3.1.5")},
			outcome{StatusFail, []string{"no Service labelled app.kubernetes.io/component=server,app.kubernetes.io/part-of=argocd in namespace argocd"}}},
		{"server: chart installs Argo CD", ArgoCDServerCheck(), Inputs{Namespace: "argocd"}, []string{server},
			outcome{StatusSkip, []string{NotApplicable + "Argo CD is installed by the chart (argo-cd.enabled=true); this check is for --existing-argocd"}}},
		{"version in range", ArgoCDVersionCheck(), existing, []string{server}, outcome{StatusFail, []string{`Argo CD v3.1.5 does not satisfy ">=3.2 <=3.4"`, "no chart loaded"}}},
		{"version too old", ArgoCDVersionCheck(), existing, []string{argoServerYAML("argocd", "quay.io/argoproj/argocd:v2.14.0")},
			outcome{StatusFail, []string{`Argo CD v2.14.0 does not satisfy ">=3.2 <=3.4"`}}},
		{"version unknown", ArgoCDVersionCheck(), existing, []string{argoServerYAML("argocd", "quay.io/argoproj/argocd:latest")},
			outcome{StatusWarn, []string{"has no version tag"}}},
		{"version: chart installs Argo CD", ArgoCDVersionCheck(), Inputs{}, nil, outcome{StatusSkip, []string{NotApplicable + "Argo CD is installed by the chart"}}},
		{"admin has apiKey and login", ArgoCDAdminAPIKeyCheck(), existing, []string{argoCMYAML("argocd", `{accounts.admin: "apiKey, login"}`)},
			outcome{StatusPass, []string{"argocd-cm accounts.admin: apiKey, login"}}},
		{"admin lacks apiKey", ArgoCDAdminAPIKeyCheck(), existing, []string{argoCMYAML("argocd", `{accounts.admin: "login"}`)},
			outcome{StatusFail, []string{"argocd-cm accounts.admin lacks apiKey", "kubectl patch configmap argocd-cm -n argocd"}}},
		{"admin disabled", ArgoCDAdminAPIKeyCheck(), existing, []string{argoCMYAML("argocd", `{accounts.admin: "apiKey, login", accounts.admin.enabled: "false"}`)},
			outcome{StatusFail, []string{"disables the admin account"}}},
		{"no argocd-cm", ArgoCDAdminAPIKeyCheck(), existing, nil, outcome{StatusFail, []string{"ConfigMap argocd-cm not found in namespace argocd"}}},
		{"token auth", ArgoCDAdminAPIKeyCheck(), func() Inputs {
			in := existing
			in.Values = map[string]any{"global": map[string]any{"integrations": map[string]any{"argo-cd": map[string]any{"server": map[string]any{"auth": map[string]any{"type": "token"}}}}}}
			in.ArgoCDAuthType = "token"
			return in
		}(), nil, outcome{StatusSkip, []string{"auth.type is token"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.expect(t, newKit(t, tt.yaml...).with(tt.in).run(tt.check))
		})
	}
}
