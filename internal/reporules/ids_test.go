package reporules

import (
	"go/ast"
	"go/parser"
	"go/token"
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
	goFiles(t, root, []string{"checks", "hack", "bin", ".git", "test"}, false, func(rel string, fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil || !ids[v] || flags.Lookup(v) != nil {
				return true
			}
			out = append(out, rel+":"+strconv.Itoa(fset.Position(lit.Pos()).Line)+": "+lit.Value)
			return true
		})
	})
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
	plant(t, root, "internal/side/side.go", "package side\n\nvar chartChecks = map[string]bool{\"chart-renders\": true}\n\nconst flag = \"values\"\n")
	flags := pflag.NewFlagSet("x", pflag.ContinueOnError)
	flags.String("values", "", "")
	got := idLiterals(t, root, map[string]bool{"chart-renders": true, "values": true}, flags)
	if len(got) != 1 || got[0] != `internal/side/side.go:3: "chart-renders"` {
		t.Fatalf("idLiterals = %q, want the chart-renders key alone", got)
	}
}

// idConstants returns the exported constants of the non-test files of
// checksDir whose value is a check ID of ids, untyped or strings (a typed
// constant that happens to equal an ID, Input "values", is another thing).
func idConstants(t *testing.T, checksDir string, ids map[string]bool) map[string]bool {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(checksDir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if typ, ok := vs.Type.(*ast.Ident); vs.Type != nil && (!ok || typ.Name != "string") {
					continue
				}
				for i, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING || i >= len(vs.Names) || !vs.Names[i].IsExported() {
						continue
					}
					if id, err := strconv.Unquote(lit.Value); err == nil && ids[id] {
						out[vs.Names[i].Name] = true
					}
				}
			}
		}
	}
	return out
}

// idConstantUses returns "file:line: pkg.Name" for every use, in the Go
// files under root outside checks/ (tests too; not .git, bin), of one of
// consts through an import of the checks package.
func idConstantUses(t *testing.T, root string, consts map[string]bool) []string {
	t.Helper()
	var out []string
	goFiles(t, root, []string{"checks", "bin", ".git"}, true, func(rel string, fset *token.FileSet, f *ast.File) {
		name := ""
		for _, imp := range f.Imports {
			if ip, _ := strconv.Unquote(imp.Path.Value); ip == Module+"/checks" {
				name = "checks"
				if imp.Name != nil {
					name = imp.Name.Name
				}
			}
		}
		if name == "" {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || !consts[sel.Sel.Name] {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == name {
				out = append(out, rel+":"+strconv.Itoa(fset.Position(sel.Pos()).Line)+": "+name+"."+sel.Sel.Name)
			}
			return true
		})
	})
	return out
}

// TestNoCheckIDConstantsOutsideChecks: no package outside checks/ singles a
// check out through an exported constant of its ID (a reporter matching
// upgrade-path to read its message): what others need of a check is an
// attribute of its Meta or typed data of its Result.
func TestNoCheckIDConstantsOutsideChecks(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range idConstantUses(t, root, idConstants(t, filepath.Join(root, "checks"), checkIDs())) {
		t.Errorf("%s names a check by an exported ID constant outside checks/: put what it needs on the check's Meta or Result", u)
	}
}

// TestIDConstantRuleFindsOne is the rule's own test: a planted exported
// constant of a check ID is found where another package uses it (under an
// import alias, in a test file too); an unexported one, a constant that is
// no ID, a typed constant equal to an ID and a use inside checks/ are not.
func TestIDConstantRuleFindsOne(t *testing.T) {
	root := t.TempDir()
	plant(t, root, "checks/upgrade_path.go", "package checks\n\ntype Input string\n\nconst UpgradePathID = \"upgrade-path\"\n\nconst upgradeValuesID = \"upgrade-values\"\n\nconst InputValues Input = \"upgrade-values\"\n\nconst DefaultNamespace = \"codefresh\"\n\nvar _ = UpgradePathID\n")
	plant(t, root, "reporters/fleet.go", "package reporters\n\nimport c \""+Module+"/checks\"\n\nvar _ = c.UpgradePathID\n\nvar _ = c.DefaultNamespace\n\nvar _ = c.InputValues\n")
	plant(t, root, "reporters/fleet_test.go", "package reporters\n\nimport \""+Module+"/checks\"\n\nvar _ = checks.UpgradePathID\n")
	ids := map[string]bool{"upgrade-path": true, "upgrade-values": true}
	consts := idConstants(t, filepath.Join(root, "checks"), ids)
	if len(consts) != 1 || !consts["UpgradePathID"] {
		t.Fatalf("idConstants = %v, want UpgradePathID alone", consts)
	}
	got := idConstantUses(t, root, consts)
	want := []string{"reporters/fleet.go:5: c.UpgradePathID", "reporters/fleet_test.go:5: checks.UpgradePathID"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("idConstantUses = %q, want %q", got, want)
	}
}
