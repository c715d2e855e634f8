package argocd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// HelmTemplate is the `helm template` Argo CD's repo-server runs for an
// Application's Helm source (reposerver/repository/repository.go
// helmTemplate and util/helm/cmd.go template,
// https://github.com/argoproj/argo-cd/blob/v3.2.6/reposerver/repository/repository.go,
// https://github.com/argoproj/argo-cd/blob/v3.2.6/util/helm/cmd.go):
// `helm template RELEASE CHART -n NAMESPACE -f FILE... --set ...
// --set-string ... [--include-crds]`.
type HelmTemplate struct {
	// ReleaseName is spec.source.helm.releaseName, else the Application's
	// name; Namespace is the destination namespace.
	ReleaseName, Namespace string
	// Values are the merged values (PrepareTemplate).
	Values map[string]any
	// IncludeCRDs is --include-crds: the chart's crds/ directories are
	// rendered, unless spec.source.helm.skipCrds.
	IncludeCRDs bool
	// Unread are the value files of other sources left out, no checkout of
	// their repository given: "$values/values/a.yaml (ref values: REPO at
	// REVISION)".
	Unread []string
}

// ValuesError is an Application whose helm values Argo CD cannot use: a
// value file that is not there (without ignoreMissingValueFiles), a ref no
// source has, a path out of its repository, values that do not parse.
// The repo-server fails the Application's manifest generation with it.
type ValuesError struct{ Msg string }

func (e *ValuesError) Error() string { return e.Msg }

// PrepareTemplate prepares the `helm template` of base's chart, chartName
// (for messages), whose files (every file of the chart's directory,
// Chart.yaml and values.yaml included, by slash-separated path) are
// chartFiles: the value files in order (a plain one is a file of the
// chart's directory: the Application's path is the chart's; "$<ref>/<path>"
// is <path> in the checkout of the source with that ref, SyncRef.Dir, and
// left out into Unread without one), then the inline values (valuesObject
// wins over values), then the parameters as --set and, with ForceString,
// --set-string, merged as Helm merges them (plan.Merge). The error is
// *ValuesError.
func PrepareTemplate(base SyncBase, chartName string, chartFiles map[string][]byte) (*HelmTemplate, error) {
	t := &HelmTemplate{ReleaseName: base.ReleaseName, Namespace: base.Namespace, IncludeCRDs: !base.SkipCRDs}
	var files []plan.ValuesFile
	for _, name := range base.ValueFiles {
		f, unread, err := valueFile(base, chartName, chartFiles, name)
		switch {
		case err != nil:
			return nil, err
		case unread != "":
			t.Unread = append(t.Unread, unread)
		case f != nil:
			files = append(files, *f)
		}
	}
	inline, err := inlineValues(base)
	if err != nil {
		return nil, err
	}
	if len(strings.TrimSpace(string(inline))) > 0 {
		files = append(files, plan.ValuesFile{Name: "the inline values", Data: inline})
	}
	var sets, stringSets []string
	for _, p := range base.Parameters {
		if p.ForceString {
			stringSets = append(stringSets, p.Name+"="+p.Value)
		} else {
			sets = append(sets, p.Name+"="+p.Value)
		}
	}
	if t.Values, err = plan.Merge(files, sets, stringSets); err != nil {
		return nil, &ValuesError{Msg: "the Application's helm values: " + err.Error()}
	}
	return t, nil
}

// valueFile reads the value file name of base; for one of another source
// without a checkout, it says what Unread says of it instead; neither (nil)
// is a missing file that ignoreMissingValueFiles lets pass.
func valueFile(base SyncBase, chartName string, chartFiles map[string][]byte, name string) (f *plan.ValuesFile, unread string, err error) {
	ref, rest, ok := refFile(name)
	if !ok {
		clean := filepath.ToSlash(filepath.Clean(strings.TrimPrefix(name, "./")))
		d, ok := chartFiles[clean]
		switch {
		case ok:
			return &plan.ValuesFile{Name: name, Data: d}, "", nil
		case base.IgnoreMissingValueFiles:
			return nil, "", nil
		}
		return nil, "", &ValuesError{Msg: fmt.Sprintf("Application value file %q is not in chart %s", name, chartName)}
	}
	src, known := base.Refs[ref]
	switch {
	case !known:
		// Argo CD refuses such an Application: the ref names no source
		// of it.
		return nil, "", &ValuesError{Msg: fmt.Sprintf("Application value file %q names ref %q, which no source of the Application has", name, ref)}
	case src.Dir == "":
		return nil, fmt.Sprintf("%s (ref %s: %s at %s)", name, ref, src.RepoURL, orHEAD(src.TargetRevision)), nil
	case !filepath.IsLocal(filepath.FromSlash(rest)):
		return nil, "", &ValuesError{Msg: fmt.Sprintf("Application value file %q leaves its repository", name)}
	}
	b, err := os.ReadFile(filepath.Join(src.Dir, filepath.FromSlash(rest)))
	switch {
	case err == nil:
		return &plan.ValuesFile{Name: name, Data: b}, "", nil
	case os.IsNotExist(err) && base.IgnoreMissingValueFiles:
		return nil, "", nil
	}
	return nil, "", &ValuesError{Msg: fmt.Sprintf("Application value file %q: %s is not in the checkout %s of %s", name, rest, src.Dir, src.RepoURL)}
}

// inlineValues is spec.source.helm's inline values as YAML: valuesObject,
// else values.
func inlineValues(base SyncBase) ([]byte, error) {
	if base.ValuesObject == nil {
		return []byte(base.InlineValues), nil
	}
	b, err := yaml.Marshal(base.ValuesObject)
	if err != nil {
		return nil, &ValuesError{Msg: "the Application's valuesObject: " + err.Error()}
	}
	return b, nil
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
