package checks

import (
	"strings"
	"testing"
)

// TestUserTokenSecret: a plain token is copied into helm-values-config; the
// token itself never appears in the result.
func TestUserTokenSecret(t *testing.T) {
	const token = "plain-token-5f1e2d3c"
	c := hookChart(t, "0.30.0", ">=3.2 <=3.4", "", nil)
	plain := map[string]any{"global": map[string]any{"codefresh": map[string]any{"userToken": map[string]any{"token": token}}}}
	ref := map[string]any{"global": map[string]any{"codefresh": map[string]any{"userToken": map[string]any{"secretKeyRef": map[string]any{"name": "s", "key": "token"}}}}}
	bothSkipped := map[string]any{"global": plain["global"], "installer": map[string]any{"skipValidation": true, "skipUsageValidation": true}}
	tests := []struct {
		name  string
		chart string
		in    Inputs
		want  outcome
	}{
		{"plain token", c, Inputs{Values: plain, RenderValues: plain, PlainUserToken: true, Namespace: "cf"}, outcome{StatusWarn, []string{
			"given as a plain value", "chart gitops-runtime 0.30.0 copies the values, token included, into ConfigMap helm-values-config in namespace cf", "secretKeyRef.name=cf-user-token"}}},
		{"secretKeyRef", c, Inputs{Values: ref, RenderValues: ref}, outcome{StatusPass, []string{"not set as a plain value"}}},
		{"no ConfigMap rendered", c, Inputs{Values: bothSkipped, RenderValues: bothSkipped, PlainUserToken: true}, outcome{StatusWarn, []string{"helm get values", "renders no helm-values-config"}}},
		{"no chart", "", Inputs{Values: plain, RenderValues: plain, PlainUserToken: true}, outcome{StatusWarn, []string{"helm-values-config", "no chart loaded"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKit(t).with(tt.in)
			if tt.chart != "" {
				k.withChart(tt.chart)
			}
			r := k.run(UserTokenSecret())
			tt.want.expect(t, r)
			if strings.Contains(r.Message+r.Hint, token) {
				t.Errorf("the token appears in the result: %q %q", r.Message, r.Hint)
			}
		})
	}
}
