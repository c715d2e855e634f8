package reporules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rawValuesReaders are the check files that may read the raw chart values,
// each with why. Every other check reads the typed plan (plan.Install).
var rawValuesReaders = map[string]string{
	"values.go": "the values check judges the merged values themselves (what the chart and its validator require)",
	"upgrade_values.go": "upgrade-values compares two raw value trees across chart versions (the deployed release's and the target's, " +
		"and the keys the target chart no longer reads), through plan's lookups",
}

// rawValueFields are the plan's fields that hold raw values; rawValueFuncs
// are plan's functions that read, merge or derive from raw values.
var (
	rawValueFields = []string{"Values", "RenderValues"}
	rawValueFuncs  = []string{"Lookup", "String", "Bool", "Map", "List", "Has", "Derive", "Load", "ReadFile", "Set", "ApplyShortcuts"}
)

// rawValueReads returns "file:line: what" for every read of raw chart values
// in the non-test Go files of dir outside allowed: a selector of a raw-value
// field (x.Values, x.RenderValues) or a call of one of plan's raw-value
// functions, under whatever name the file imports plan.
func rawValueReads(t *testing.T, dir string, allowed map[string]string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || allowed[name] != "" {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		planName := ""
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == Module+"/internal/plan" {
				planName = "plan"
				if imp.Name != nil {
					planName = imp.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pos := name + ":" + strconv.Itoa(fset.Position(sel.Pos()).Line) + ": "
			if x, ok := sel.X.(*ast.Ident); ok && planName != "" && x.Name == planName {
				if slices.Contains(rawValueFuncs, sel.Sel.Name) {
					out = append(out, pos+"plan."+sel.Sel.Name+" reads raw values")
				}
				return true
			}
			if slices.Contains(rawValueFields, sel.Sel.Name) {
				out = append(out, pos+"."+sel.Sel.Name+" reads raw values")
			}
			return true
		})
	}
	return out
}

// TestPlanIsTheOnlyInput: checks read the typed plan; only the files of
// rawValuesReaders read raw chart values. A check that needs a value the
// plan lacks gets a typed field on plan.Install, derived (and table-tested)
// in internal/plan.
func TestPlanIsTheOnlyInput(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "checks"))
	if err != nil {
		t.Fatal(err)
	}
	for name := range rawValuesReaders {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("rawValuesReaders names %s, which is gone: remove it", name)
		}
	}
	for _, r := range rawValueReads(t, dir, rawValuesReaders) {
		t.Errorf("checks/%s: read a typed field of plan.Install instead (derive it in internal/plan)", r)
	}
}

// TestRawValueRuleFindsOne is the rule's own test: a planted check reading
// Inputs.Values, RenderValues and plan.String (under an import alias) is
// found; the allowed file, a test file and plan's typed fields are not.
func TestRawValueRuleFindsOne(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"bad.go": "package checks\n\nimport p \"" + Module + "/internal/plan\"\n\n" +
			"func bad(env *Env) string {\n\tv := env.Inputs.Values\n\t_ = len(env.Inputs.RenderValues)\n\treturn p.String(v, \"global.codefresh.url\")\n}\n",
		"good.go": "package checks\n\nimport \"" + Module + "/internal/plan\"\n\n" +
			"func good(env *Env) string {\n\tif env.Inputs.HasValues() {\n\t\treturn env.Inputs.PlatformURL\n\t}\n\treturn plan.DefaultPlatformURL\n}\n",
		"values.go":   "package checks\n\nfunc vals(env *Env) any { return env.Inputs.Values }\n",
		"bad_test.go": "package checks\n\nfunc tv(env *Env) any { return env.Inputs.Values }\n",
	}
	for n, src := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := rawValueReads(t, dir, map[string]string{"values.go": "allowed"})
	want := []string{
		"bad.go:6: .Values reads raw values",
		"bad.go:7: .RenderValues reads raw values",
		"bad.go:8: plan.String reads raw values",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rawValueReads = %q, want %q", got, want)
	}
}
