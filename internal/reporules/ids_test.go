package reporules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/docgen"
)

// idLiterals returns "file:line: literal" for every Go string literal in the
// non-test files under root (outside checks/, hack/, bin/ and .git) that is
// exactly a check ID of ids, unless it is also the name of a flag in flags
// (a flag may be named like a check: --values, --runtime-name).
func idLiterals(t *testing.T, root string, ids map[string]bool, flags *pflag.FlagSet) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			switch rel {
			case "checks", "hack", "bin", ".git", "test":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil || !ids[v] || flags.Lookup(v) != nil {
				return true
			}
			out = append(out, filepath.ToSlash(rel)+":"+strconv.Itoa(fset.Position(lit.Pos()).Line)+": "+lit.Value)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checkIDs() map[string]bool {
	ids := map[string]bool{}
	for _, c := range checks.All() {
		ids[c.ID] = true
	}
	return ids
}

// TestNoCheckIDsOutsideChecks: a check's attributes live on its Meta, so no
// package outside checks/ names a check by its ID string (a table keyed by
// IDs there would miss a new check silently). Tests and hack/ (programs
// that run the plugin as a user would, with --skip ID) are free.
func TestNoCheckIDsOutsideChecks(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", root, err)
	}
	for _, l := range idLiterals(t, root, checkIDs(), docgen.CommandFlags()) {
		t.Errorf("%s names a check by ID outside checks/: put the attribute on the check's Meta", l)
	}
}

// TestIDLiteralRuleFindsOne is the rule's own test: a side table in a
// package outside checks/ is found; a flag named like a check is not.
func TestIDLiteralRuleFindsOne(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "internal", "side"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package side\n\nvar chartChecks = map[string]bool{\"chart-renders\": true}\n\nconst flag = \"values\"\n"
	if err := os.WriteFile(filepath.Join(root, "internal", "side", "side.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := pflag.NewFlagSet("x", pflag.ContinueOnError)
	flags.String("values", "", "")
	got := idLiterals(t, root, map[string]bool{"chart-renders": true, "values": true}, flags)
	if len(got) != 1 || got[0] != `internal/side/side.go:3: "chart-renders"` {
		t.Fatalf("idLiterals = %q, want the chart-renders key alone", got)
	}
}
