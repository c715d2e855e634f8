package checks

import "github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"

// Source is where a value of the planned install came from (plan.Source):
// a values file's line and column, a flag, or the chart's Chart.yaml.
type Source = plan.Source

// Source returns where the value at path came from (dotted, list items as
// [i]: "global.runtime.ingress.hosts[0]"), or nil when no -f file or flag
// gave it (the chart's default applies). The index is the plan's
// (plan.Install.Sources); this is a position, never the value.
func (e *Env) Source(path string) *Source {
	if s, ok := e.Inputs.Sources.Of(path); ok {
		return &s
	}
	return nil
}

// ChartVersionAnchor returns where the chart version comes from
// (--chart-version, or a local chart's Chart.yaml line), or nil.
func (e *Env) ChartVersionAnchor() *Source {
	if s := e.Inputs.ChartVersionSource; s != (Source{}) {
		return &s
	}
	return nil
}

// WithSource returns r anchored to src (Result.Source); a nil src leaves r
// as it is.
func (r Result) WithSource(src *Source) Result {
	if src != nil {
		r.Source = src
	}
	return r
}

// firstSource is the first of paths that the index knows, or nil.
func (e *Env) firstSource(paths ...string) *Source {
	for _, p := range paths {
		if s := e.Source(p); s != nil {
			return s
		}
	}
	return nil
}

// runtimeNameSource is where the runtime name comes from (--runtime-name,
// or global.runtime.name in a values file), or nil for the default.
func (e *Env) runtimeNameSource() *Source {
	if s := e.Inputs.RuntimeNameSource; s != (Source{}) {
		return &s
	}
	return nil
}
