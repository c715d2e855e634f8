package chart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	rspb "helm.sh/helm/v3/pkg/release"
	"sigs.k8s.io/yaml"
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

// SyncBase is what Argo CD deployed of a runtime it syncs, and how it
// syncs it: the Application's inventory as the live objects hold it, and
// the Application's spec.source.helm and sync policy.
type SyncBase struct {
	// App names the Application ("namespace/name"); Revision is the
	// revision it last synced (status.sync.revision).
	App, Revision string
	// ReleaseName is spec.source.helm.releaseName, else the Application's
	// name (Argo CD's --name-template); Namespace is the destination
	// namespace.
	ReleaseName, Namespace string
	// ChartVersion is the live chart version (the helm.sh/chart label of
	// the runtime's objects), "" when unknown.
	ChartVersion string
	// Manifest is the inventory's objects, hooks excluded, as YAML
	// documents: each object's last-applied configuration when it has one
	// (client-side apply), else the live object without its status and
	// server-set metadata.
	Manifest string
	// ValueFiles, InlineValues, ValuesObject and Parameters are
	// spec.source.helm's (valueFiles, values, valuesObject, parameters):
	// files of the chart's directory, inline values, and --set
	// (--set-string when ForceString).
	ValueFiles   []string
	InlineValues string
	ValuesObject map[string]any
	Parameters   []SyncParameter
	// IgnoreMissingValueFiles passes a value file that does not exist.
	IgnoreMissingValueFiles bool
	// SourceRepoURL and SourcePath are the chart's source (spec.source, or
	// the chart's of spec.sources): its repository and the chart's
	// directory in it.
	SourceRepoURL, SourcePath string
	// Refs are the Application's sources with a ref, by ref: a value file
	// "$<ref>/<path>" is <path> in that source's repository
	// (https://argo-cd.readthedocs.io/en/stable/user-guide/multiple_sources/#helm-value-files-from-external-git-repository).
	Refs map[string]SyncRef
	// SkipCRDs is spec.source.helm.skipCrds: the chart's crds/ directories
	// are not rendered (Argo CD passes --include-crds otherwise).
	SkipCRDs bool
	// Automated, Prune and SelfHeal are spec.syncPolicy.automated's;
	// ServerSideApply is the sync option ServerSideApply=true.
	Automated, Prune, SelfHeal, ServerSideApply bool
	// TrackingApp is the application part of Argo CD's tracking
	// annotation on the objects it applies ("<app>" or "<app namespace>_<app>").
	TrackingApp string
	// NoPrune are the inventory's objects annotated
	// argocd.argoproj.io/sync-options: Prune=false, by match key.
	NoPrune map[string]bool
}

// SyncRef is a source of a multi-source Application that others refer to
// by its ref.
type SyncRef struct {
	// RepoURL and TargetRevision are the source's.
	RepoURL, TargetRevision string
	// Dir is a checkout of that repository at that revision, "" when the
	// run has none: its files are then not read (SyncValues).
	Dir string
}

// SyncParameter is one spec.source.helm.parameters entry.
type SyncParameter struct {
	Name, Value string
	ForceString bool
}

// Sync is the Argo CD side of an Upgrade that Argo CD performs.
type Sync struct {
	SyncBase
	// Unread are the value files of other sources the render could not
	// read, no checkout of their repository given: "$values/values/a.yaml
	// (ref values: REPO at REVISION)". The render went on without them.
	Unread []string
}

// MatchKey is the key objects are matched by between the inventory and
// the target ("group/Kind/namespace/name"; the core group is ""): the key
// SyncBase.NoPrune holds.
func MatchKey(group, kind, namespace, name string) string {
	return group + "/" + kind + "/" + namespace + "/" + name
}

// Pruned reports whether a sync deletes o, an object of the inventory the
// target no longer renders: only with prune (automated.prune) and never
// with Prune=false on the object (gitops-engine pkg/sync pruneObject).
// Argo CD does not read helm.sh/resource-policy: keep when it prunes.
func (s *Sync) Pruned(o Object) bool {
	return s.Prune && !s.NoPrune[o.matchKey()]
}

// PrepareSync predicts what Argo CD does when it syncs c (the chart the
// commit carries: an umbrella chart with gitops-runtime as a dependency,
// or the runtime chart itself) over base: it renders c as Argo CD's
// repo-server runs `helm template` (release name, destination namespace,
// value files, inline values and parameters of spec.source.helm, the
// chart's crds/ included unless skipCrds), with Helm's own code and the
// cluster's capabilities. The result is an Upgrade whose Current is the
// inventory (revision 0, chart version base.ChartVersion) and whose Sync is
// set. The error is *RenderError when c does not render.
func PrepareSync(ctx context.Context, c *helmchart.Chart, base SyncBase, caps Capabilities) (*Upgrade, error) {
	vals, unread, err := syncValues(c, base)
	if err != nil {
		return nil, err
	}
	rel, err := installRelease(ctx, withoutUnreadFiles(c, vals, true), base.ReleaseName, base.Namespace, vals, caps)
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
		if r.Objects[i].Namespace == base.Namespace {
			r.Objects[i].Namespace = ""
		}
	}
	manifest := rel.Manifest
	if !base.SkipCRDs {
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
	up := &Upgrade{Last: cur, Current: cur, Target: r, Chart: c, TargetManifest: manifest, Values: vals, Given: vals, Sync: &Sync{SyncBase: base, Unread: unread}, caps: caps}
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

// SyncValues merges the values Argo CD gives `helm template` for base:
// the value files (read from the chart's own files: the Application's path
// is the chart's directory), then the inline values (valuesObject wins
// over values), then the parameters as --set / --set-string, with Helm's
// own merge (pkg/cli/values), as Argo CD's repo-server passes them
// (https://github.com/argoproj/argo-cd/blob/v3.2.6/util/helm/cmd.go template).
// A value file "$<ref>/<path>" is read from the checkout of that source
// (SyncRef.Dir); without one it is left out (see Sync.Unread).
func SyncValues(c *helmchart.Chart, base SyncBase) (map[string]any, error) {
	vals, _, err := syncValues(c, base)
	return vals, err
}

// syncValues is SyncValues, and the value files of other sources it left
// out, no checkout of them given.
func syncValues(c *helmchart.Chart, base SyncBase) (map[string]any, []string, error) {
	var unread []string
	dir, err := os.MkdirTemp("", "gitops-preflight-values-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	files := map[string][]byte{}
	for _, f := range c.Raw {
		files[f.Name] = f.Data
	}
	for _, f := range c.Files {
		files[f.Name] = f.Data
	}
	var opts values.Options
	for i, name := range base.ValueFiles {
		var data []byte
		if ref, rest, ok := refFile(name); ok {
			src, known := base.Refs[ref]
			switch {
			case !known:
				// Argo CD refuses such an Application: the ref names no
				// source of it.
				return nil, nil, &RenderError{Raw: fmt.Sprintf("Application value file %q names ref %q, which no source of the Application has", name, ref)}
			case src.Dir == "":
				unread = append(unread, fmt.Sprintf("%s (ref %s: %s at %s)", name, ref, src.RepoURL, orHEAD(src.TargetRevision)))
				continue
			}
			if !filepath.IsLocal(filepath.FromSlash(rest)) {
				return nil, nil, &RenderError{Raw: fmt.Sprintf("Application value file %q leaves its repository", name)}
			}
			b, err := os.ReadFile(filepath.Join(src.Dir, filepath.FromSlash(rest)))
			if err != nil {
				if os.IsNotExist(err) && base.IgnoreMissingValueFiles {
					continue
				}
				return nil, nil, &RenderError{Raw: fmt.Sprintf("Application value file %q: %s is not in the checkout %s of %s", name, rest, src.Dir, src.RepoURL)}
			}
			data = b
		} else {
			clean := filepath.ToSlash(filepath.Clean(strings.TrimPrefix(name, "./")))
			d, ok := files[clean]
			if !ok {
				if base.IgnoreMissingValueFiles {
					continue
				}
				return nil, nil, &RenderError{Raw: fmt.Sprintf("Application value file %q is not in chart %s", name, c.Name())}
			}
			data = d
		}
		p := filepath.Join(dir, fmt.Sprintf("values-%d.yaml", i))
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return nil, nil, err
		}
		opts.ValueFiles = append(opts.ValueFiles, p)
	}
	inline := []byte(base.InlineValues)
	if base.ValuesObject != nil {
		if inline, err = yaml.Marshal(base.ValuesObject); err != nil {
			return nil, nil, err
		}
	}
	if len(strings.TrimSpace(string(inline))) > 0 {
		p := filepath.Join(dir, "values-inline.yaml")
		if err := os.WriteFile(p, inline, 0o600); err != nil {
			return nil, nil, err
		}
		opts.ValueFiles = append(opts.ValueFiles, p)
	}
	for _, p := range base.Parameters {
		if p.ForceString {
			opts.StringValues = append(opts.StringValues, p.Name+"="+p.Value)
		} else {
			opts.Values = append(opts.Values, p.Name+"="+p.Value)
		}
	}
	vals, err := opts.MergeValues(getter.Providers{})
	if err != nil {
		return nil, nil, &RenderError{Raw: "the Application's helm values: " + err.Error()}
	}
	return vals, unread, nil
}

// refFile splits a value file of another source, "$<ref>/<path>", into
// its ref and path.
func refFile(name string) (ref, path string, ok bool) {
	if !strings.HasPrefix(name, "$") {
		return "", "", false
	}
	ref, path, ok = strings.Cut(name[1:], "/")
	return ref, path, ok && ref != ""
}

// orHEAD is rev, or HEAD for the default revision.
func orHEAD(rev string) string {
	if rev == "" {
		return "HEAD"
	}
	return rev
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
