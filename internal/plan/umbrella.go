package plan

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"
)

// umbrellaSources indexes the values.yaml of chartDir when it is an
// umbrella chart of the runtime (its Chart.yaml names gitops-runtime among
// its dependencies, as resources/<runtime-name>/chart of the Shared
// Configuration Repository does): those values are the user's, committed
// beside the chart. Every key is indexed as the umbrella holds it
// ("gitops-runtime.global.imageRegistry", "global.imageRegistry") and the
// runtime's keys also as the runtime chart reads them: a key under
// gitops-runtime: without that prefix, a global as it is (Helm passes the
// umbrella's globals down). false when chartDir is not such a chart or
// has no values.yaml.
//
// Helm's rule for a parent's values of a dependency:
// https://helm.sh/docs/chart_template_guide/subcharts_and_globals/
func umbrellaSources(chartDir string) (Sources, bool) {
	if chartDir == "" || !isUmbrella(chartDir) {
		return Sources{}, false
	}
	file := filepath.Join(chartDir, "values.yaml")
	data, err := os.ReadFile(file)
	if err != nil || len(data) > MaxFileSize {
		return Sources{}, false
	}
	var s Sources
	s.addFile(file, data)
	aliases := map[string]Source{}
	for k, src := range s.m {
		rest, ok := strings.CutPrefix(k, RuntimeChartName+sep)
		if !ok {
			continue
		}
		key := strings.Split(rest, sep)
		if _, global := s.m[rest]; global && key[0] == "global" {
			// The umbrella's own global wins over the dependency's global
			// of the same path, as Helm coalesces globals (coalesceGlobals).
			continue
		}
		aliases[rest] = Source{File: src.File, Line: src.Line, Column: src.Column, Path: pathString(key)}
	}
	for k, src := range aliases {
		s.m[k] = src
	}
	return s, true
}

// isUmbrella reports whether chartDir's Chart.yaml names the runtime chart
// among its dependencies (read with Helm's chart.Metadata).
func isUmbrella(chartDir string) bool {
	data, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil || len(data) > MaxFileSize {
		return false
	}
	var meta helmchart.Metadata
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return false
	}
	for _, d := range meta.Dependencies {
		if d != nil && d.Name == RuntimeChartName {
			return true
		}
	}
	return false
}

// listIndex reads a list item's key segment "[i]".
func listIndex(seg string) (int, bool) {
	n, ok := strings.CutPrefix(seg, "[")
	if n, ok = strings.CutSuffix(n, "]"); !ok {
		return 0, false
	}
	i, err := strconv.Atoi(n)
	return i, err == nil && i >= 0
}

// over returns the index of the user's values s laid over the umbrella
// chart's base, as Helm lays -f and --set over a chart's values.yaml: a key
// the user gives a map merges with the umbrella's, any other value
// replaces the umbrella's value there and everything under it. values are
// the user's merged values, which say which keys hold maps.
func (s Sources) over(base Sources, values map[string]any) Sources {
	out := Sources{m: make(map[string]Source, len(base.m)+len(s.m))}
	for k, v := range base.m {
		out.m[k] = v
	}
	keys := make([]string, 0, len(s.m))
	for k := range s.m {
		keys = append(keys, k)
	}
	// Parents before their children: a replace never drops a user's key.
	slices.SortFunc(keys, func(a, b string) int { return strings.Count(a, sep) - strings.Count(b, sep) })
	for _, k := range keys {
		key := strings.Split(k, sep)
		if _, isMap := valueAt(values, key).(map[string]any); isMap {
			out.put(key, s.m[k])
		} else {
			out.replace(key, s.m[k])
		}
	}
	return out
}

// valueAt is the value at key in values (list items as "[i]"), or nil.
func valueAt(values map[string]any, key []string) any {
	var cur any = values
	for _, seg := range key {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[seg]
		case []any:
			i, ok := listIndex(seg)
			if !ok || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}
