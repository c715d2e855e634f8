package reporules

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// runsAlone is the phrase of an end-to-end test's doc comment that keeps it
// out of the parallel run, followed by the reason: a test that bounds the
// plugin's own time (exit 3 within --request-timeout plus a few seconds)
// measures it on an idle machine. go test runs such tests first, one after
// the other, and then the parallel ones together.
const runsAlone = "Runs alone:"

// TestEndToEndTestsRunInParallel: every top-level end-to-end test starts
// with testcluster.Parallel(t, ...) (each has its own control plane, ports,
// kubeconfigs, HOME and Helm homes, so that make test runs them
// E2E_PARALLEL at a time, in the suite's slots: a bare t.Parallel() would
// run outside them), or says in its doc comment why it runs alone ("Runs
// alone: <reason>").
func TestEndToEndTestsRunInParallel(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	found, problems := e2eParallelism(t, filepath.Join(root, "test", "e2e"))
	for _, p := range problems {
		t.Error(p)
	}
	if found < 10 {
		t.Fatalf("found %d end-to-end tests in test/e2e; the rule read the wrong folder", found)
	}
}

// TestParallelRuleFindsOne is the rule's own test: a test that neither
// calls testcluster.Parallel first nor says why it runs alone is found; so
// are one that calls it later, after other work, and one that calls
// t.Parallel() instead.
func TestParallelRuleFindsOne(t *testing.T) {
	root := t.TempDir()
	plant(t, root, "a_test.go", `package e2e

import (
	"testing"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

func TestOne(t *testing.T) {
	tc.Parallel(t, tc.Long)
}

// TestTwo bounds a time.
//
// Runs alone: it asserts the plugin's exit within 8 s.
func TestTwo(t *testing.T) {}

func TestThree(t *testing.T) {}

func TestFour(t *testing.T) {
	start(t)
	tc.Parallel(t)
}

func TestFive(t *testing.T) {
	t.Parallel()
}

func helper(t *testing.T) {}

func TestMain(m *testing.M) {}
`)
	found, got := e2eParallelism(t, root)
	want := []string{
		"a_test.go:18: TestThree neither starts with testcluster.Parallel(t, ...) nor says why it runs alone (\"Runs alone: <reason>\" in its doc comment)",
		"a_test.go:20: TestFour neither starts with testcluster.Parallel(t, ...) nor says why it runs alone (\"Runs alone: <reason>\" in its doc comment)",
		"a_test.go:25: TestFive neither starts with testcluster.Parallel(t, ...) nor says why it runs alone (\"Runs alone: <reason>\" in its doc comment)",
	}
	if found != 5 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("found %d tests, problems:\n%s\nwant 5 and:\n%s", found, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// e2eParallelism returns how many top-level tests the Go files of dir hold
// and, for each one that does not start with testcluster.Parallel and has no
// "Runs alone: <reason>" in its doc comment, a line naming it.
func e2eParallelism(t *testing.T, dir string) (int, []string) {
	t.Helper()
	found := 0
	var problems []string
	paths, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		rel := filepath.Base(p)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Body == nil || !takesT(fn) {
				continue // TestMain takes *testing.M
			}
			found++
			if startsParallel(fn, testclusterName(f)) {
				continue
			}
			if doc := fn.Doc.Text(); strings.Contains(doc, runsAlone) && strings.TrimSpace(doc[strings.Index(doc, runsAlone)+len(runsAlone):]) != "" {
				continue
			}
			problems = append(problems, fmt.Sprintf("%s:%d: %s neither starts with testcluster.Parallel(t, ...) nor says why it runs alone (%q in its doc comment)",
				rel, fset.Position(fn.Pos()).Line, fn.Name.Name, runsAlone+" <reason>"))
		}
	}
	return found, problems
}

// takesT reports whether fn's one parameter is a *testing.T.
func takesT(fn *ast.FuncDecl) bool {
	ps := fn.Type.Params.List
	if len(ps) != 1 {
		return false
	}
	star, ok := ps[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}

// testclusterName is the name file f imports internal/testcluster under
// ("" when it does not).
func testclusterName(f *ast.File) string {
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, `"`) != Module+"/internal/testcluster" {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return "testcluster"
	}
	return ""
}

// startsParallel reports whether fn's first statement is pkg.Parallel(t,
// ...) on its *testing.T parameter, pkg the name of internal/testcluster.
func startsParallel(fn *ast.FuncDecl, pkg string) bool {
	if pkg == "" || len(fn.Body.List) == 0 || len(fn.Type.Params.List) != 1 || len(fn.Type.Params.List[0].Names) != 1 {
		return false
	}
	param := fn.Type.Params.List[0].Names[0].Name
	expr, ok := fn.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := expr.X.(*ast.CallExpr)
	if !ok || len(call.Args) == 0 {
		return false
	}
	if arg, ok := call.Args[0].(*ast.Ident); !ok || arg.Name != param {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Parallel" {
		return false
	}
	recv, ok := sel.X.(*ast.Ident)
	return ok && recv.Name == pkg
}
