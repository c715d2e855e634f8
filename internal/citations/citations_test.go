package citations

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestForbidden(t *testing.T) {
	cases := []struct {
		line string
		bad  bool
	}{
		{"// Helm 3.8.0 or higher (s" + "eed 001, \"Minimum system requirements\")", true},
		{"Seed `001_" + "876dec2aeba088c2.txt`, \"Step 3\"", true},
		{"// (chart" + "-facts.md §1.1)", true},
		{`p := "/work/` + `shared/fixtures/upstream/" + rel`, true},
		{"/" + "shared/fixtures/upstream at the start of a line", true},
		{"see docs/readme/" + "issue-3.md", true},
		{"// (plugin" + "-conventions §1.2)", true},
		{"// (CHECKS" + ".md \"JSON output\")", true},
		{"// see docs/checks/runtime-schedulable.md", false},
		{"// (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, \"Minimum system requirements\")", false},
		{"default: $UPSTREAM_FIXTURES, else ../" + "shared/fixtures/upstream", false},
		{`filepath.Join("..", "shared", "fixtures", "upstream")`, false},
		{"// scale is what to seed.", false},
		{"seeded with 5,000 Ready nodes", false},
		{"sha256 0123456789abcdef0123456789abcdef", false},
	}
	for _, c := range cases {
		if got := Forbidden(c.line) != ""; got != c.bad {
			t.Errorf("Forbidden(%q) = %q, want forbidden=%v", c.line, Forbidden(c.line), c.bad)
		}
	}
}

// TestRepositoryCitesPublicSources scans every .go, .md and .yaml/.yml file
// of the repository (except .git and the build output bin/) and fails on any
// line that cites a private file or a development machine's path.
func TestRepositoryCitesPublicSources(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", root, err)
	}
	scanned := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == ".git" || (d.Name() == "bin" && filepath.Dir(p) == root)) {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".go", ".md", ".yaml", ".yml":
		default:
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		scanned++
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
		rel, _ := filepath.Rel(root, p)
		for n := 1; sc.Scan(); n++ {
			if why := Forbidden(sc.Text()); why != "" {
				t.Errorf("%s:%d: %s: %s", rel, n, why, strings.TrimSpace(sc.Text()))
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 {
		t.Fatalf("scanned only %d files under %s; the walk is broken", scanned, root)
	}
}
