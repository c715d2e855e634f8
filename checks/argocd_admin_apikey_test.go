package checks

import "testing"

// TestArgoCDAdminAPIKey: the Argo CD account the runtime signs in with.
func TestArgoCDAdminAPIKey(t *testing.T) {
	existing := existingArgoCD()
	runArgoCases(t, ArgoCDAdminAPIKeyCheck(), []argoCase{
		{"admin has apiKey and login", existing, []string{argoCMYAML("argocd", `{accounts.admin: "apiKey, login"}`)},
			outcome{StatusPass, []string{"argocd-cm accounts.admin: apiKey, login"}}},
		{"admin lacks apiKey", existing, []string{argoCMYAML("argocd", `{accounts.admin: "login"}`)},
			outcome{StatusFail, []string{"argocd-cm accounts.admin lacks apiKey", "kubectl patch configmap argocd-cm -n argocd"}}},
		{"admin disabled", existing, []string{argoCMYAML("argocd", `{accounts.admin: "apiKey, login", accounts.admin.enabled: "false"}`)},
			outcome{StatusFail, []string{"disables the admin account"}}},
		{"no argocd-cm", existing, nil, outcome{StatusFail, []string{"ConfigMap argocd-cm not found in namespace argocd"}}},
		{"token auth", func() Inputs {
			in := existing
			in.Values = map[string]any{"global": map[string]any{"integrations": map[string]any{"argo-cd": map[string]any{"server": map[string]any{"auth": map[string]any{"type": "token"}}}}}}
			in.ArgoCDAuthType = "token"
			return in
		}(), nil, outcome{StatusSkip, []string{"auth.type is token"}}},
	})
}
