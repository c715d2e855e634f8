package plan

import (
	"os"
	"path/filepath"
	"testing"
)

// writeChart writes a chart directory with chartYAML and valuesYAML.
func writeChart(t *testing.T, chartYAML, valuesYAML string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"Chart.yaml": chartYAML, "values.yaml": valuesYAML} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const umbrellaChart = `apiVersion: v2
name: demo
version: 1.0.0
dependencies:
- name: gitops-runtime
  version: 0.30.0
  repository: https://chartmuseum.codefresh.io/gitops-runtime
`

// The values of resources/<runtime>/chart are the user's: indexed as the
// umbrella holds them and as the runtime chart reads them, under the
// user's -f and --set, which win.
func TestUmbrellaValuesAreAnchored(t *testing.T) {
	dir := writeChart(t, umbrellaChart, `global:
  runtime:
    name: rt1
gitops-runtime:
  global:
    imageRegistry: mirror.corp.example
    runtime:
      name: ignored-for-the-umbrella-global
  app-proxy:
    replicaCount: 2
    env:
      A: b
`)
	in, err := New(Flags{Chart: dir, SetValues: []string{"gitops-runtime.app-proxy.env=x"}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "values.yaml")
	for path, line := range map[string]int{
		"global.runtime.name":                   3,
		"gitops-runtime.global.imageRegistry":   6,
		"global.imageRegistry":                  6,
		"app-proxy.replicaCount":                10,
		"gitops-runtime.app-proxy.replicaCount": 10,
	} {
		src, ok := in.Sources.Of(path)
		if !ok || src.File != file || src.Line != line {
			t.Errorf("%s: %+v (%v), want %s:%d", path, src, ok, file, line)
		}
	}
	// The umbrella's global wins over the dependency's global of the same
	// path (Helm's coalesceGlobals).
	if src, _ := in.Sources.Of("global.runtime.name"); src.Line != 3 {
		t.Errorf("global.runtime.name from line %d, want the umbrella's global (3)", src.Line)
	}
	// --set replaced the map: its keys are the flag's, the file's are gone.
	if src, ok := in.Sources.Of("gitops-runtime.app-proxy.env"); !ok || src.Flag == "" {
		t.Errorf("gitops-runtime.app-proxy.env: %+v, want the --set flag", src)
	}
	if src, ok := in.Sources.Of("gitops-runtime.app-proxy.env.A"); ok {
		t.Errorf("gitops-runtime.app-proxy.env.A still indexed (%+v) though --set replaced the map", src)
	}
	// Where the version is bumped: the dependency's version line.
	if in.ChartVersionSource.File != filepath.Join(dir, "Chart.yaml") || in.ChartVersionSource.Line != 6 {
		t.Errorf("chart version source %+v, want Chart.yaml:6", in.ChartVersionSource)
	}
}

// The runtime chart's own values.yaml holds its defaults, not the user's:
// nothing is anchored there.
func TestRuntimeChartValuesAreNotAnchored(t *testing.T) {
	dir := writeChart(t, "apiVersion: v2\nname: gitops-runtime\nversion: 0.30.0\n", "global:\n  runtime:\n    name: x\n")
	in, err := New(Flags{Chart: dir})
	if err != nil {
		t.Fatal(err)
	}
	if n := in.Sources.Len(); n != 0 {
		t.Errorf("%d keys indexed from the chart's own defaults:\n%s", n, in.Sources)
	}
}
