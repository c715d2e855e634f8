package checks

import (
	"reflect"
	"strings"
	"testing"

	rspb "helm.sh/helm/v3/pkg/release"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

func TestKeptDefaults(t *testing.T) {
	up := func(reuse bool) *chart.Upgrade {
		return &chart.Upgrade{
			Options: chart.UpgradeValues{Reuse: reuse},
			// The target chart's defaults.
			TargetDefaults: map[string]any{"global": map[string]any{
				"image":   map[string]any{"tag": "0.27", "registry": "quay.io"},
				"runtime": map[string]any{"name": ""},
				"newKey":  true,
			}},
			// What the templates see with --reuse-values: the previous
			// computed values (the deployed chart's defaults, the user's).
			TargetComputed: map[string]any{"global": map[string]any{
				"image":   map[string]any{"tag": "0.26", "registry": "quay.io"},
				"runtime": map[string]any{"name": "rt1"},
			}},
			Current: &rspb.Release{Config: map[string]any{"global": map[string]any{"runtime": map[string]any{"name": "rt1"}}}},
		}
	}
	got := keptDefaults(up(true))
	want := []string{"global.image.tag (0.26 → 0.27)", "global.newKey (unset → true)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("keptDefaults = %q, want %q (the user's runtime name is not a default)", got, want)
	}
	if got := keptDefaults(up(false)); got != nil {
		t.Errorf("without --reuse-values: %q, want none", got)
	}
}

// upgradeValuesChart is a target chart defaulting the values the runtime
// depends on and reading them in a template, as the gitops-runtime chart
// does; its template requires the runtime name.
func upgradeValuesChart(t *testing.T) string {
	t.Helper()
	return targetChart(t, "0.31.0", `global:
  runtime:
    name: ""
  codefresh:
    accountId: ""
    userToken:
      token: ""
      secretKeyRef: {}
`, map[string]string{"cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: codefresh-cm
data:
  runtime: {{ required "global.runtime.name is required" .Values.global.runtime.name | quote }}
  account: {{ .Values.global.codefresh.accountId | quote }}
  {{- with .Values.global.codefresh.userToken.secretKeyRef }}
  tokenSecret: {{ printf "%s/%s" .name .key | quote }}
  {{- end }}
`})
}

// TestUpgradeValues runs upgrade-values through the kit: helm upgrade
// without values reuses the deployed revision's and passes; -f or --set
// with only some of them drops the others and fails; a changed token
// source warns without printing the token; a key the target chart no
// longer reads warns; values the target does not render with fail with
// Helm's message.
func TestUpgradeValues(t *testing.T) {
	tokenRef := map[string]any{"secretKeyRef": map[string]any{"name": "codefresh-user-token", "key": "token"}}
	cfg := func(token map[string]any, extra map[string]any) map[string]any {
		g := map[string]any{"runtime": map[string]any{"name": "rt1"}, "codefresh": map[string]any{"accountId": "acc1", "userToken": token}}
		for k, v := range extra {
			g[k] = v
		}
		return map[string]any{"global": g}
	}
	const secretToken = "s3cr3t-user-token"
	for _, tt := range []struct {
		name   string
		config map[string]any // the deployed revision's user values
		given  map[string]any // -f/--set of the upgrade; nil = none
		want   outcome
	}{
		{"no values: the previous ones reused", cfg(tokenRef, nil), nil,
			outcome{StatusPass, []string{"runtime name, account, token source, access mode, Argo CD and image registries are as in revision 1", "the target reads every value given"}}},
		{"--set of one value drops the others", cfg(tokenRef, nil), map[string]any{"global": map[string]any{"runtime": map[string]any{"name": "rt1"}}},
			outcome{StatusFail, []string{"the upgrade drops account (global.codefresh.accountId), user token source (global.codefresh.userToken) (set in revision 1)",
				"with -f or --set, helm upgrade does not reuse the previous values", "helm get values " + DefaultReleaseName + " -n " + DefaultNamespace, "--reset-then-reuse-values"}}},
		{"token moved to a Secret", cfg(map[string]any{"token": secretToken}, nil), cfg(tokenRef, nil),
			outcome{StatusWarn, []string{`user token source (global.codefresh.userToken): "a plain value" → "Secret codefresh-user-token key token"`}}},
		{"a key the target no longer reads", cfg(tokenRef, map[string]any{"oldRegistry": "registry.example.com"}), nil,
			outcome{StatusWarn, []string{"the target chart 0.31.0 ignores 1 value you give: global.oldRegistry", "removing each leaves its rendered manifest unchanged", "move them to the keys the target reads"}}},
		{"the target does not render", cfg(tokenRef, nil), map[string]any{"global": map[string]any{"codefresh": map[string]any{"accountId": "acc1"}}},
			outcome{StatusFail, []string{"the target chart does not render with the effective values: global.runtime.name is required", "(with -f or --set, helm upgrade does not reuse the previous values)"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rel := deployed{Version: "0.30.0", Config: tt.config, Manifest: configMapManifest}.record(t)
			r := newKit(t).objects(rel).with(Inputs{Values: tt.given, RenderValues: tt.given}).inMode(ModeUpgrade).withChart(upgradeValuesChart(t)).run(UpgradeValues())
			tt.want.expect(t, r)
			if strings.Contains(r.Message+r.Hint, secretToken) {
				t.Errorf("the user token is printed: %q / %q", r.Message, r.Hint)
			}
		})
	}
}
