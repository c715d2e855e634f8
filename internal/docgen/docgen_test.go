package docgen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

const docsDir = "../../docs"

// TestChecksDocUpToDate: every registered check has docs/checks/<id>.md, and
// docs/checks.md is what `make docs` generates from them now.
func TestChecksDocUpToDate(t *testing.T) {
	want, err := Generate(checks.All(), filepath.Join(docsDir, "checks"))
	if err != nil {
		t.Fatalf("generating docs/checks.md: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(docsDir, "checks.md"))
	if err != nil {
		t.Fatalf("reading docs/checks.md (run `make docs`): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/checks.md is stale: run `make docs` and commit it")
	}
}

// TestDocsAnchors: each check's docs URL ends in an anchor that docs/checks.md
// defines with a "## <id>" heading (GitHub's anchor for it is the ID).
func TestDocsAnchors(t *testing.T) {
	doc, err := Generate(checks.All(), filepath.Join(docsDir, "checks"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks.All() {
		url := c.Docs()
		base, anchor, ok := strings.Cut(url, "#")
		if !ok || base != checks.DocsBase || !strings.HasSuffix(base, "/docs/checks.md") || anchor != c.ID {
			t.Errorf("%s: docs URL %s does not point at docs/checks.md#%s", c.ID, url, c.ID)
		}
		if !bytes.Contains(doc, []byte("\n## "+anchor+"\n")) {
			t.Errorf("%s: no `## %s` heading in docs/checks.md", c.ID, anchor)
		}
	}
}

func TestGenerateRules(t *testing.T) {
	list := []checks.Check{{Meta: checks.Meta{ID: "alpha-one", Category: checks.CategoryCluster, Modes: checks.ModePre, Title: "Alpha holds", Severity: checks.SeverityWarn, Requires: []string{"cluster-reachable"}, Fixable: true, Applies: checks.Applies{Access: []checks.AccessMode{checks.AccessIngress}, ExistingArgoCD: true}}}}
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Generate(list, dir); err == nil || !strings.Contains(err.Error(), "alpha-one has no documentation") {
		t.Errorf("missing file: %v", err)
	}
	write("alpha-one.md", "## What it verifies\n")
	if _, err := Generate(list, dir); err == nil || !strings.Contains(err.Error(), `must start with the line "# alpha-one"`) {
		t.Errorf("bad first line: %v", err)
	}
	write("alpha-one.md", "# alpha-one\n\n## How to fix\n\n```sh\n# a shell comment, not a heading\n```\n")
	write("gone.md", "# gone\n")
	if _, err := Generate(list, dir); err == nil || !strings.Contains(err.Error(), `"gone", which is not a registered check`) {
		t.Errorf("orphan file: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "gone.md")); err != nil {
		t.Fatal(err)
	}
	doc, err := Generate(list, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n## alpha-one\n", "\n### How to fix\n", "\n# a shell comment, not a heading\n", "on failure: `warn` (advisory)", "requires [cluster-reachable](#cluster-reachable)", "fixable with `--fix`", " · runs in ingress mode, with `--existing-argocd`\n", "| [alpha-one](#alpha-one) | cluster | pre-install | Alpha holds |"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("generated doc lacks %q:\n%s", want, doc)
		}
	}
}
