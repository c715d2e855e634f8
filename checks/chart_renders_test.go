package checks

import (
	"os"
	"path/filepath"
	"testing"
)

// requiredNameChart writes a chart whose only template requires
// global.runtime.name, with the message the gitops-runtime chart gives in
// tunnel mode, and returns its directory.
func requiredNameChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "gitops-runtime")
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: gitops-runtime\nversion: 0.30.0\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: codefresh-cm\ndata:\n" +
			"  runtime: {{ required \"global.runtime.name is required for tunnel based runtime\" ((.Values.global).runtime).name | quote }}\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestChartRenders runs chart-renders through the kit: a chart that renders
// passes, its own `required` message fails the check with the value to set,
// and a chart that cannot be loaded is a skip saying which.
func TestChartRenders(t *testing.T) {
	c := requiredNameChart(t)
	named := map[string]any{"global": map[string]any{"runtime": map[string]any{"name": "rt1"}}}
	misspelt := map[string]any{"global": map[string]any{"runtime": map[string]any{"name": "rt1"}, "runtmie": map[string]any{"name": "rt2"}}}
	for _, tt := range []struct {
		name  string
		chart string
		in    Inputs
		want  outcome
	}{
		{"renders", c, Inputs{Values: named, RenderValues: named}, outcome{StatusPass, []string{"chart gitops-runtime 0.30.0 renders 1 objects"}}},
		{"ignores a misspelt key", c, Inputs{Values: misspelt, RenderValues: misspelt}, outcome{StatusWarn, []string{
			"renders 1 objects", "but ignores 1 value you give: global.runtmie.name", "removing each leaves the rendered manifest unchanged"}}},
		{"required value missing", c, Inputs{RenderValues: map[string]any{}}, outcome{StatusFail, []string{
			"global.runtime.name is required for tunnel based runtime", "set global.runtime.name in your values file"}}},
		{"no chart", filepath.Join(t.TempDir(), "missing"), Inputs{RenderValues: map[string]any{}}, outcome{StatusSkip, []string{"missing"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.expect(t, newKit(t).with(tt.in).withChart(tt.chart).run(ChartRenders()))
		})
	}
}
