package reporules

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
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
	var out []string
	packageFiles(t, dir, func(name string, fset *token.FileSet, f *ast.File) {
		if allowed[name] != "" {
			return
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
	})
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

// invocationExceptions are names plan.Install shares with the run's
// invocation that mean another thing there, each with why.
var invocationExceptions = map[string]string{
	"Chart": "Install.Chart is the chart reference helm install takes; Config.Chart and Env.Chart are its loader and its rendering",
}

// invocationFields returns the fields of install (a struct type) named like
// a field or method of one of invocation (the run's config and the
// checks' environment: how the run was invoked), but those of except.
func invocationFields(install reflect.Type, invocation []reflect.Type, except map[string]string) []string {
	names := map[string]string{}
	for _, typ := range invocation {
		for _, t := range []reflect.Type{typ, reflect.PointerTo(typ)} {
			for i := 0; i < t.NumMethod(); i++ {
				names[t.Method(i).Name] = typ.String()
			}
		}
		for i := 0; i < typ.NumField(); i++ {
			if f := typ.Field(i); f.IsExported() && f.Name != "Inputs" {
				names[f.Name] = typ.String()
			}
		}
	}
	var out []string
	for i := 0; i < install.NumField(); i++ {
		f := install.Field(i)
		if of, ok := names[f.Name]; ok && except[f.Name] == "" {
			out = append(out, install.String()+"."+f.Name+" (as "+of+" says how the run was invoked)")
		}
	}
	return out
}

// TestPlanHoldsOnlyWhatTheChartGets: plan.Install (checks.Inputs) is what
// the chart will get; how the run was invoked (its mode, --helm-major, the
// fix options, helm upgrade's values flags, --wait...) reaches the checks
// as checks.Env (Mode, Post(), Upgrading(), HelmMajor, Fix) from run.Config.
// No field of the plan is named like one of those: a check reading
// Inputs.Post or Inputs.Upgrade does not compile, and this rule keeps such
// a field from coming back.
func TestPlanHoldsOnlyWhatTheChartGets(t *testing.T) {
	invocation := []reflect.Type{reflect.TypeOf(run.Config{}), reflect.TypeOf(run.Fix{}), reflect.TypeOf(checks.Env{}), reflect.TypeOf(checks.FixOptions{})}
	for name := range invocationExceptions {
		if _, ok := reflect.TypeOf(plan.Install{}).FieldByName(name); !ok {
			t.Errorf("invocationExceptions names %s, which plan.Install no longer has: remove it", name)
		}
	}
	for _, f := range invocationFields(reflect.TypeOf(plan.Install{}), invocation, invocationExceptions) {
		t.Errorf("%s: keep it in run.Config and give it to the checks through checks.Env", f)
	}
}

// TestInvocationRuleFindsOne is the rule's own test: a planted plan with
// the fields of the old one (Post, Upgrade, HelmMajor, CRDs, TLSSecret) is
// found against the real run config and environment; its own fields and an
// excused one are not.
func TestInvocationRuleFindsOne(t *testing.T) {
	type oldInstall struct {
		RuntimeName, Namespace string
		Chart                  string
		Post, Upgrade          bool
		HelmMajor              int
		CRDs, TLSSecret        string
	}
	invocation := []reflect.Type{reflect.TypeOf(run.Config{}), reflect.TypeOf(run.Fix{}), reflect.TypeOf(checks.Env{}), reflect.TypeOf(checks.FixOptions{})}
	got := invocationFields(reflect.TypeOf(oldInstall{}), invocation, invocationExceptions)
	want := []string{
		"reporules.oldInstall.Post (as checks.Env says how the run was invoked)",
		"reporules.oldInstall.Upgrade (as checks.Env says how the run was invoked)",
		"reporules.oldInstall.HelmMajor (as checks.Env says how the run was invoked)",
		"reporules.oldInstall.CRDs (as checks.FixOptions says how the run was invoked)",
		"reporules.oldInstall.TLSSecret (as checks.FixOptions says how the run was invoked)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("invocationFields =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
