package reporules

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// frameworkFiles are the files of checks/ that register no check, each
// with what it holds: the framework every check runs in, and the one file
// of helpers several checks share. Every other non-test file of checks/
// registers a check; an engine goes to an internal package with its own
// tests, and a helper of one check lives in that check's file.
var frameworkFiles = map[string]string{
	"check.go":    "a check: Meta, Result, Status and Applies",
	"env.go":      "what a check may use: Env, the inputs, where a value was given, the identity that installs and the dry-run engine it sends as",
	"registry.go": "the catalogue (All, the catalogue of format 1 bundles), the selection of a run's checks and a check's reads narrowed to one namespace",
	"runner.go":   "the runner",
	"report.go":   "the report model and its impacts",
	"doc.go":      "the package documentation",
	"fix.go":      "what a fix changes",
	"helpers.go":  "the helpers several checks share, the rendering as the checks read it and the words of their messages",
}

// maxFuncLines is the length, in lines from func to its closing brace, a
// function of checks/ stays under.
const maxFuncLines = 80

// checkFileFindings returns what breaks the file rule in checksDir: a
// non-test file that declares no constructor (a func Xxx() Check) among
// registered (the constructors All lists), unless framework names it; and
// an entry of framework that is no file of checksDir.
func checkFileFindings(t *testing.T, checksDir string, registered []string, framework map[string]string) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	packageFiles(t, checksDir, func(name string, _ *token.FileSet, f *ast.File) {
		seen[name] = true
		ctors := false
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv == nil && fn.Type.Params.NumFields() == 0 && returnsCheck(fn) && slices.Contains(registered, fn.Name.Name) {
				ctors = true
			}
		}
		switch {
		case ctors, framework[name] != "":
		default:
			out = append(out, "checks/"+name+": registers no check (no func Xxx() Check that All lists): move its engine to an internal package and its words into the checks that use them")
		}
	})
	for _, name := range sortedKeys(keys(framework)) {
		if !seen[name] {
			out = append(out, "checks/"+name+": named as an exception, but no such file: remove it from the list")
		}
	}
	return out
}

// returnsCheck reports whether fn returns exactly one Check.
func returnsCheck(fn *ast.FuncDecl) bool {
	r := fn.Type.Results
	if r == nil || len(r.List) != 1 || len(r.List[0].Names) > 1 {
		return false
	}
	id, ok := r.List[0].Type.(*ast.Ident)
	return ok && id.Name == "Check"
}

// longFuncs returns "file:line: name (n lines)" for every function of the
// non-test files of checksDir of maxFuncLines lines or more (the name is
// Type.Name for a method).
func longFuncs(t *testing.T, checksDir string) []string {
	t.Helper()
	var out []string
	packageFiles(t, checksDir, func(name string, fset *token.FileSet, f *ast.File) {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start := fset.Position(fn.Pos()).Line
			n := fset.Position(fn.End()).Line - start + 1
			id := funcName(fn)
			if n < maxFuncLines {
				continue
			}
			out = append(out, "checks/"+name+":"+strconv.Itoa(start)+": "+id+" ("+strconv.Itoa(n)+" lines)")
		}
	})
	return out
}

// funcName is fn's name, Type.Name for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

func keys(m map[string]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestChecksHoldsChecks: every non-test file of checks/ registers a check
// (declares a func Xxx() Check constructor that checks.All lists), but the
// framework files and the one file of shared helpers (frameworkFiles).
func TestChecksHoldsChecks(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "checks")
	for _, f := range checkFileFindings(t, dir, constructors(t, dir), frameworkFiles) {
		t.Error(f)
	}
}

// TestCheckFileRuleFindsOne is the rule's own test: in a planted checks/,
// a file that registers a check and a framework file pass; a file of
// helpers alone, a file whose constructor All does not list and an
// exception with no file are each found.
func TestCheckFileRuleFindsOne(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "checks")
	write := func(name, body string) { plant(t, dir, name, "package checks\n\n"+body) }
	write("good.go", "func Good() Check { return Check{} }\n")
	write("good_test.go", "func helperOfTests() {}\n")
	write("check.go", "type Check struct{}\n")
	write("engine.go", "func evaluate(x int) int { return x }\n")
	write("unlisted.go", "func Unlisted() Check { return Check{} }\n")
	got := checkFileFindings(t, dir, []string{"Good"},
		map[string]string{"check.go": "a check", "gone.go": "removed"})
	want := []string{
		"checks/engine.go: registers no check (no func Xxx() Check that All lists): move its engine to an internal package and its words into the checks that use them",
		"checks/unlisted.go: registers no check (no func Xxx() Check that All lists): move its engine to an internal package and its words into the checks that use them",
		"checks/gone.go: named as an exception, but no such file: remove it from the list",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("checkFileFindings =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestNoLongFunctionsInChecks: no function of a non-test file of checks/
// is maxFuncLines (80) lines or more: a check's run reads as gather ->
// engine -> words, each a function of its own.
func TestNoLongFunctionsInChecks(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range longFuncs(t, filepath.Join(root, "checks")) {
		t.Errorf("%s: split it by meaning (gather, judge, word) under %d lines", f, maxFuncLines)
	}
}

// TestLongFunctionRuleFindsOne is the rule's own test: a function and a
// method of 80 lines are found; one of 79 lines and a long one in a test
// file are not.
func TestLongFunctionRuleFindsOne(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "checks")
	body := func(name string, lines int) string {
		// func line + body lines + closing brace = lines.
		return "func " + name + " {\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n"
	}
	plant(t, dir, "long.go", "package checks\n\ntype T struct{}\n\n"+body("runLong()", 80)+body("(t *T) judge()", 81)+body("short()", 79))
	plant(t, dir, "long_test.go", "package checks\n\n"+body("helper()", 200))
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not Go"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := longFuncs(t, dir)
	want := []string{
		"checks/long.go:5: runLong (80 lines)",
		"checks/long.go:85: T.judge (81 lines)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("longFuncs =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
