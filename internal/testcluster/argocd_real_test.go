package testcluster

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The Argo CD StartArgoCD runs is the one its tool module requires.
func TestArgoCDVersionIsTheToolModules(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "hack", "tools", "argocd", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/argoproj/argo-cd/v3 (v\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("hack/tools/argocd/go.mod requires no github.com/argoproj/argo-cd/v3")
	}
	if string(m[1]) != ArgoCDVersion {
		t.Errorf("hack/tools/argocd/go.mod requires argo-cd %s, ArgoCDVersion is %s", m[1], ArgoCDVersion)
	}
	if g := regexp.MustCompile(`(?m)^\s*github\.com/argoproj/argo-cd/gitops-engine/v3 (v\S+)`).FindSubmatch(data); g == nil || string(g[1]) != ArgoCDVersion {
		t.Errorf("hack/tools/argocd/go.mod must require github.com/argoproj/argo-cd/gitops-engine/v3 %s (argo-cd's own replace points at its directory)", ArgoCDVersion)
	}
}

// The Makefile builds Argo CD where ArgoCDBinary looks for it.
func TestArgoCDCacheNameIsTheMakefiles(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ARGOCD_DIR\s*:=\s*\$\(TOOL_CACHE\)/(\S+)\$\(ARGOCD_VERSION\)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("the Makefile sets no ARGOCD_DIR := $(TOOL_CACHE)/<name>$(ARGOCD_VERSION)")
	}
	if got := string(m[1]) + ArgoCDVersion; got != ArgoCDCacheName {
		t.Errorf("the Makefile builds Argo CD into %s, ArgoCDBinary looks in %s", got, ArgoCDCacheName)
	}
}

// Commit replaces a path's files and returns the commit; Checkout gives a
// commit's tree back.
func TestGitRepoCommitAndCheckout(t *testing.T) {
	r := NewGitRepo(t)
	src := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("Chart.yaml", "name: a\n")
	write("templates/a.yaml", "a\n")
	write("templates/b.yaml", "b\n")
	first := r.Commit(t, src, "resources/rt/chart", "first")
	if err := os.Remove(filepath.Join(src, "templates", "b.yaml")); err != nil {
		t.Fatal(err)
	}
	second := r.Commit(t, src, "resources/rt/chart", "second")
	if first == second || len(first) != 40 {
		t.Fatalf("commits %q and %q", first, second)
	}
	for rev, wantB := range map[string]bool{first: true, second: false} {
		dir := r.Checkout(t, rev)
		if _, err := os.Stat(filepath.Join(dir, "resources", "rt", "chart", "templates", "a.yaml")); err != nil {
			t.Errorf("%s: %v", rev, err)
		}
		_, err := os.Stat(filepath.Join(dir, "resources", "rt", "chart", "templates", "b.yaml"))
		if gotB := err == nil; gotB != wantB {
			t.Errorf("%s: templates/b.yaml present %v, want %v", rev, gotB, wantB)
		}
	}
	if got := r.URL(); got != "file://"+r.Bare {
		t.Errorf("URL %q", got)
	}
}
