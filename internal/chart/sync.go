package chart

import (
	"context"
	"errors"
	"fmt"
	"sort"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	rspb "helm.sh/helm/v3/pkg/release"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/argocd"
)

// RuntimeChartName is the name of the gitops-runtime chart: the chart
// itself, or the dependency of the umbrella chart the Shared Configuration
// Repository holds for a runtime Argo CD syncs (resources/<runtime>/chart,
// https://codefresh.io/docs/docs/installation/gitops/manage-runtimes/).
const RuntimeChartName = "gitops-runtime"

// RuntimeChart returns c when it is the gitops-runtime chart, else its
// gitops-runtime dependency (an umbrella chart), else c.
func RuntimeChart(c *helmchart.Chart) *helmchart.Chart {
	if c == nil || c.Metadata == nil || c.Metadata.Name == RuntimeChartName {
		return c
	}
	for _, d := range c.Dependencies() {
		if d.Metadata != nil && d.Metadata.Name == RuntimeChartName {
			return d
		}
	}
	return c
}

// runtimeValueKey is the key of the runtime's values in an umbrella chart
// (its dependency's name or alias); "" when c is the runtime chart.
func runtimeValueKey(c *helmchart.Chart) string {
	if c == nil || c.Metadata == nil || c.Metadata.Name == RuntimeChartName {
		return ""
	}
	for _, d := range c.Metadata.Dependencies {
		if d != nil && d.Name == RuntimeChartName {
			if d.Alias != "" {
				return d.Alias
			}
			return d.Name
		}
	}
	return ""
}

// PrepareSync predicts what Argo CD does when it syncs c (the chart the
// commit carries: an umbrella chart with gitops-runtime as a dependency,
// or the runtime chart itself) over base: it renders c as Argo CD's
// repo-server runs `helm template` (argocd.PrepareTemplate: release name,
// destination namespace, the values of spec.source.helm, the chart's
// crds/ included unless skipCrds), with Helm's own code and the cluster's
// capabilities. The result is an Upgrade whose Current is the
// inventory (revision 0, chart version base.ChartVersion) and whose Sync is
// set. The error is *RenderError when c does not render or Argo CD cannot
// use the Application's values (argocd.ValuesError).
func PrepareSync(ctx context.Context, c *helmchart.Chart, base argocd.SyncBase, caps Capabilities) (*Upgrade, error) {
	t, err := argocd.PrepareTemplate(base, c.Name(), chartFiles(c))
	if err != nil {
		var ve *argocd.ValuesError
		if errors.As(err, &ve) {
			return nil, &RenderError{Raw: ve.Msg}
		}
		return nil, err
	}
	vals := t.Values
	rel, err := installRelease(ctx, withoutUnreadFiles(c, vals, true), t.ReleaseName, t.Namespace, vals, caps)
	if err != nil {
		return nil, err
	}
	rc := RuntimeChart(c)
	r, err := rendering(rc.Metadata, rel)
	if err != nil {
		return nil, err
	}
	// The inventory's objects name the destination namespace, the chart's
	// templates mostly none (the namespace `helm template` and Argo CD
	// fill in): both sides are matched without it (SyncBase.Manifest
	// leaves it out the same way).
	for i := range r.Objects {
		if r.Objects[i].Namespace == t.Namespace {
			r.Objects[i].Namespace = ""
		}
	}
	manifest := rel.Manifest
	if t.IncludeCRDs {
		for _, crd := range rel.Chart.CRDObjects() {
			doc := "# Source: " + crd.Filename + "\n" + string(crd.File.Data)
			manifest += "\n---\n" + doc
			if o, ok, err := parse(doc); err == nil && ok {
				r.Objects = append(r.Objects, o)
			}
		}
	}
	cur := &rspb.Release{Name: base.ReleaseName, Namespace: base.Namespace, Version: 0, Manifest: base.Manifest,
		Info:  &rspb.Info{Status: rspb.StatusDeployed, Description: "synced by Argo CD (Application " + base.App + ")"},
		Chart: &helmchart.Chart{Metadata: &helmchart.Metadata{APIVersion: "v2", Name: RuntimeChartName, Version: base.ChartVersion}}}
	up := &Upgrade{Last: cur, Current: cur, Target: r, Chart: c, TargetManifest: manifest, Values: vals, Given: vals, Sync: &argocd.Sync{SyncBase: base, Unread: t.Unread}, caps: caps}
	if up.TargetDefaults, err = chartutil.CoalesceValues(rc, map[string]any{}); err != nil {
		return nil, fmt.Errorf("target chart defaults: %w", err)
	}
	computed, err := chartutil.CoalesceValues(rel.Chart, vals)
	if err != nil {
		return nil, fmt.Errorf("target values: %w", err)
	}
	up.TargetComputed = computed
	if k := runtimeValueKey(c); k != "" {
		// The runtime chart's own view: its values, the globals copied in.
		if sub, ok := computed[k].(map[string]any); ok {
			up.TargetComputed = sub
		}
	}
	return up, nil
}

// chartFiles is every file of c's directory (Chart.yaml, values.yaml,
// templates and the rest) by slash-separated path, as c was loaded.
func chartFiles(c *helmchart.Chart) map[string][]byte {
	files := map[string][]byte{}
	for _, f := range c.Raw {
		files[f.Name] = f.Data
	}
	for _, f := range c.Files {
		files[f.Name] = f.Data
	}
	return files
}

// ValueLeaves returns the dotted paths of the leaves of v (a map that is
// empty counts as a leaf), sorted.
func ValueLeaves(v map[string]any) []string {
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, x := range m {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if sub, ok := x.(map[string]any); ok && len(sub) > 0 {
				walk(p, sub)
				continue
			}
			out = append(out, p)
		}
	}
	walk("", v)
	sort.Strings(out)
	return out
}
