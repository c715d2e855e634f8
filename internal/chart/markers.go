package chart

import (
	"context"
	"fmt"
	"path"
	"strings"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// renderFiles renders c with vals as installRelease does, through Helm's
// engine alone, for the render with markers, which looks for text in the
// release's documents and needs neither their order nor the release: the
// values are prepared as action.Install prepares a client-only dry run
// (pkg/action install.go RunWithContext: chartutil.ProcessDependenciesWithMerge,
// the default capabilities with the cluster's Kubernetes version and API
// versions appended, chartutil.ToRenderValuesWithSchemaValidation with the
// install's release options; renderResources: the chart's kubeVersion
// checked, engine.Engine.Render, the NOTES.txt files dropped). What the
// install action does on top, releaseutil.SortManifests over every rendered
// file (it splits and parses all of them, the CRDs' megabytes included),
// is left to markersShown, for the files that hold a marker. The error is
// a *RenderError, as installRelease's.
func renderFiles(ctx context.Context, c *helmchart.Chart, releaseName, namespace string, vals map[string]any, caps Capabilities) (map[string]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if vals == nil {
		vals = map[string]any{}
	}
	vals = copyValues(vals)
	fail := func(err error) (map[string]string, error) { return nil, &RenderError{Raw: err.Error()} }
	if err := chartutil.ValidateReleaseName(releaseName); err != nil {
		return fail(err)
	}
	if err := chartutil.ProcessDependenciesWithMerge(c, vals); err != nil {
		return fail(err)
	}
	cp := chartutil.DefaultCapabilities.Copy()
	if caps.KubeVersion != "" {
		kv, err := chartutil.ParseKubeVersion(caps.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("kubernetes version %q: %w", caps.KubeVersion, err)
		}
		cp.KubeVersion = *kv
	}
	cp.APIVersions = append(cp.APIVersions, caps.APIVersions...)
	opts := chartutil.ReleaseOptions{Name: releaseName, Namespace: namespace, Revision: 1, IsInstall: true}
	values, err := chartutil.ToRenderValuesWithSchemaValidation(c, vals, opts, cp, false)
	if err != nil {
		return fail(err)
	}
	if c.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(c.Metadata.KubeVersion, cp.KubeVersion.String()) {
		return fail(fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", c.Metadata.KubeVersion, cp.KubeVersion.String()))
	}
	var e engine.Engine
	files, err := e.Render(c, values)
	if err != nil {
		return fail(err)
	}
	for k := range files {
		if strings.HasSuffix(k, "NOTES.txt") {
			delete(files, k)
		}
	}
	return files, nil
}

// markersShown returns, for each group of markers (by its key), whether
// one of them shows (markerShows) in a document of the release, hooks
// left out: the files that hold a marker are sorted with Helm's own
// releaseutil.SortManifests (its split, and its hook classification by
// the helm.sh/hook annotation), as the install action sorts them all. Its
// error, a file Helm cannot sort, is the install's: nothing is decided.
func markersShown(files map[string]string, markers map[int][]string) (map[int]bool, error) {
	shown := map[int]bool{}
	for name, text := range files {
		if strings.HasPrefix(path.Base(name), "_") || strings.TrimSpace(text) == "" {
			continue
		}
		var hit []int
		for i, ms := range markers {
			if !shown[i] && anyMarkerShows(text, ms) {
				hit = append(hit, i)
			}
		}
		if len(hit) == 0 {
			continue
		}
		_, manifests, err := releaseutil.SortManifests(map[string]string{name: text}, nil, releaseutil.InstallOrder)
		if err != nil {
			return nil, &RenderError{Raw: err.Error()}
		}
		for _, m := range manifests {
			for _, i := range hit {
				if anyMarkerShows(m.Content, markers[i]) {
					shown[i] = true
				}
			}
		}
	}
	return shown, nil
}
