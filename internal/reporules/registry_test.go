package reporules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// checkFacts is what the completeness rule knows of one registered check.
type checkFacts struct {
	ID, Impact string
	// Constructor is the function checks.All calls for it.
	Constructor string
}

// kitEntries are the test kit's ways of running a check (checks/kit_test.go,
// checks/testenv_test.go); a test helper of checks/ that calls one is one
// too (kitFuncs). nonPass are the statuses other than pass.
var (
	kitEntries = []string{"newKit", "runThrough", "fakeEnv"}
	nonPass    = []string{"StatusFail", "StatusWarn", "StatusSkip", "StatusError"}
)

// testGaps are the checks whose own kit test is not complete, each with its
// gap and why the kit cannot close it. The rule
// holds every other check to its own complete test file; an entry that no
// longer has a gap fails until it is removed, so the list only shrinks.
var testGaps = map[string]string{
	"upgrade-apply": "upgrade_apply_test.go runs it through the kit to its skips only: its dry runs need a real API server, " +
		"which the kit's fakes are not (and package checks cannot import testcluster: it imports reporters, which imports checks); " +
		"the e2e upgrade cases (test/e2e/upgrade_test.go) run its pass and fail",
}

// constructors returns the names of the functions checks.All calls, in
// order, read from checks/registry.go.
func constructors(t *testing.T, checksDir string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(checksDir, "registry.go"), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "All" || fn.Recv != nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			for _, e := range lit.Elts {
				if call, ok := e.(*ast.CallExpr); ok {
					if id, ok := call.Fun.(*ast.Ident); ok {
						out = append(out, id.Name)
					}
				}
			}
			return false
		})
	}
	return out
}

// idents returns the set of identifiers a Go file uses.
func idents(path string) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			out[id.Name] = true
		}
		return true
	})
	return out, nil
}

// kitFuncs returns kitEntries and every function of the test files in
// checksDir that calls one of them, directly or through another such
// function.
func kitFuncs(checksDir string) (map[string]bool, error) {
	uses := map[string]map[string]bool{}
	paths, err := filepath.Glob(filepath.Join(checksDir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil {
				continue
			}
			ids := map[string]bool{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					ids[id.Name] = true
				}
				return true
			})
			uses[fn.Name.Name] = ids
		}
	}
	kit := map[string]bool{}
	for _, k := range kitEntries {
		kit[k] = true
	}
	for grew := true; grew; {
		grew = false
		for name, ids := range uses {
			if kit[name] || strings.HasPrefix(name, "Test") {
				continue
			}
			for id := range ids {
				if kit[id] {
					kit[name], grew = true, true
					break
				}
			}
		}
	}
	return kit, nil
}

// incomplete returns what each check in cs lacks under root: an Impact, a
// docs page docs/checks/<id>.md, and a test file checks/<id with _>_test.go
// that calls its constructor, runs it through the kit and expects both a
// pass and a non-pass status. gaps excuses the test-file findings of the
// checks it names, and must name only checks that still have one.
func incomplete(root string, cs []checkFacts, gaps map[string]string) ([]string, error) {
	kit, err := kitFuncs(filepath.Join(root, "checks"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range cs {
		if c.Impact == "" {
			out = append(out, c.ID+": no Impact on its Meta")
		}
		if _, err := os.Stat(filepath.Join(root, "docs", "checks", c.ID+".md")); err != nil {
			out = append(out, c.ID+": no docs page docs/checks/"+c.ID+".md")
		}
		found, err := testFindings(root, c, kit)
		if err != nil {
			return nil, err
		}
		switch {
		case gaps[c.ID] == "":
			out = append(out, found...)
		case len(found) == 0:
			out = append(out, c.ID+": its kit test is complete now: remove it from testGaps")
		}
	}
	return out, nil
}

// testFindings returns what c's own test file lacks.
func testFindings(root string, c checkFacts, kitFns map[string]bool) ([]string, error) {
	file := strings.ReplaceAll(c.ID, "-", "_") + "_test.go"
	path := filepath.Join(root, "checks", file)
	if _, err := os.Stat(path); err != nil {
		return []string{c.ID + ": no test file checks/" + file}, nil
	}
	ids, err := idents(path)
	if err != nil {
		return nil, err
	}
	var out []string
	if !ids[c.Constructor] {
		out = append(out, "checks/"+file+": never calls "+c.Constructor)
	}
	kit := false
	for k := range kitFns {
		kit = kit || ids[k]
	}
	if !kit {
		out = append(out, "checks/"+file+": does not run "+c.ID+" through the kit ("+strings.Join(kitEntries, ", ")+")")
	}
	other := false
	for _, s := range nonPass {
		other = other || ids[s]
	}
	if !ids["StatusPass"] || !other {
		out = append(out, "checks/"+file+": does not expect both a pass and a non-pass outcome")
	}
	return out, nil
}

// TestRegistryComplete: every registered check has an impact, a docs page
// and its own kit test with a passing and a non-passing outcome.
func TestRegistryComplete(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	all := checks.All()
	names := constructors(t, filepath.Join(root, "checks"))
	if len(names) != len(all) {
		t.Fatalf("checks/registry.go All() calls %d constructors, checks.All() returns %d checks", len(names), len(all))
	}
	var cs []checkFacts
	registered := map[string]bool{}
	for i, c := range all {
		cs = append(cs, checkFacts{ID: c.ID, Impact: string(c.Impact), Constructor: names[i]})
		registered[c.ID] = true
	}
	for id := range testGaps {
		if !registered[id] {
			t.Errorf("testGaps names %s, which is not a registered check", id)
		}
	}
	bad, err := incomplete(root, cs, testGaps)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestCompletenessRuleFindsOne is the rule's own test: in a planted
// repository, a complete check passes, and a check without impact, docs page
// or test file, one whose test expects no non-pass outcome, and one excused
// although its test is complete are each found; an excused gap is not.
func TestCompletenessRuleFindsOne(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) { plant(t, root, rel, body) }
	kitTest := func(ctor, statuses string) string {
		return "package checks\n\nfunc TestX(t *testing.T) {\n\tr := newKit(t).run(" + ctor + "())\n\t_ = []Status{" + statuses + "}\n\t_ = r\n}\n"
	}
	write("docs/checks/good-one.md", "# good-one\n")
	write("checks/good_one_test.go", kitTest("GoodOne", "StatusPass, StatusFail"))
	write("docs/checks/pass-only.md", "# pass-only\n")
	write("checks/pass_only_test.go", kitTest("PassOnly", "StatusPass"))
	write("docs/checks/excused.md", "# excused\n")
	write("checks/excused_test.go", kitTest("Excused", "StatusPass, StatusWarn"))
	cs := []checkFacts{
		{ID: "good-one", Impact: "advisory", Constructor: "GoodOne"},
		{ID: "no-impact-no-docs", Constructor: "NoImpact"},
		{ID: "pass-only", Impact: "advisory", Constructor: "PassOnly"},
		{ID: "excused", Impact: "advisory", Constructor: "Excused"},
	}
	cs = append(cs, checkFacts{ID: "gap", Impact: "advisory", Constructor: "Gap"},
		checkFacts{ID: "via-helper", Impact: "advisory", Constructor: "ViaHelper"},
		checkFacts{ID: "no-kit", Impact: "advisory", Constructor: "NoKit"})
	// A helper of a shared test file that calls the kit counts as the kit;
	// one that calls the check's run function does not.
	write("checks/shared_test.go", "package checks\n\nfunc runCases(t *testing.T, c Check) { _ = newKit(t).run(c) }\n\nfunc direct(c Check) { _ = c }\n")
	write("docs/checks/via-helper.md", "# via-helper\n")
	write("checks/via_helper_test.go", "package checks\n\nfunc TestV(t *testing.T) {\n\trunCases(t, ViaHelper())\n\t_ = []Status{StatusPass, StatusSkip}\n}\n")
	write("docs/checks/no-kit.md", "# no-kit\n")
	write("checks/no_kit_test.go", "package checks\n\nfunc TestN(t *testing.T) {\n\tdirect(NoKit())\n\t_ = []Status{StatusPass, StatusSkip}\n}\n")
	write("docs/checks/gap.md", "# gap\n")
	got, err := incomplete(root, cs, map[string]string{"excused": "tests in shared_test.go", "gap": "tests in shared_test.go"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"no-impact-no-docs: no Impact on its Meta",
		"no-impact-no-docs: no docs page docs/checks/no-impact-no-docs.md",
		"no-impact-no-docs: no test file checks/no_impact_no_docs_test.go",
		"checks/pass_only_test.go: does not expect both a pass and a non-pass outcome",
		"excused: its kit test is complete now: remove it from testGaps",
		"checks/no_kit_test.go: does not run no-kit through the kit (newKit, runThrough, fakeEnv)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("incomplete =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
