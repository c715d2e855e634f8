package argocd

import (
	"os"
	"path/filepath"
	"strings"
)

// SetCheckouts sets where the value files of b's other sources are read
// (SyncRef.Dir): the checkout given for a ref (given, by ref: the
// --argocd-source REF=DIR flags); else, for a source of the chart's own
// repository (SameRepo), the checkout the chart is in: chartDir is the
// chart's directory (as --chart <checkout>/resources/<runtime>/chart
// gives it), and when it ends in the chart source's path its checkout is
// what comes before.
func (b *SyncBase) SetCheckouts(given map[string]string, chartDir string) {
	root := ""
	if p := strings.Trim(filepath.ToSlash(filepath.Clean(b.SourcePath)), "/"); p != "" && p != "." {
		dir := filepath.ToSlash(filepath.Clean(chartDir))
		if st, err := os.Stat(chartDir); err == nil && st.IsDir() && strings.HasSuffix(dir, "/"+p) {
			root = filepath.FromSlash(strings.TrimSuffix(dir, "/"+p))
		}
	}
	for ref, src := range b.Refs {
		switch {
		case given[ref] != "":
			src.Dir = given[ref]
		case root != "" && SameRepo(src.RepoURL, b.SourceRepoURL):
			src.Dir = root
		}
		b.Refs[ref] = src
	}
}

// SameRepo reports whether two Git repository URLs name the same
// repository as Argo CD normalizes them: case, a trailing ".git" (util/git
// SameURL and NormalizeGitURL,
// https://github.com/argoproj/argo-cd/blob/v3.2.6/util/git/git.go), and a
// trailing "/". SSH forms are compared as written.
func SameRepo(a, b string) bool {
	norm := func(s string) string {
		s = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(s), "/"))
		return strings.TrimSuffix(s, ".git")
	}
	return a != "" && norm(a) == norm(b)
}
