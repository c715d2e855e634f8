package reporules

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// exitTableFile is the command's exit table: the one file of the plugin
// that writes exit numbers.
const exitTableFile = "internal/cli/exit.go"

// exitName matches a name that says "exit": ExitCode, exit, FleetExit.
var exitName = regexp.MustCompile(`(?i)exit`)

// exitNamed reports whether e is an identifier or a field named like an
// exit (exitName).
func exitNamed(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return exitName.MatchString(x.Name)
	case *ast.SelectorExpr:
		return exitName.MatchString(x.Sel.Name)
	case *ast.StarExpr:
		return exitNamed(x.X)
	case *ast.UnaryExpr:
		return exitNamed(x.X)
	}
	return false
}

// intLit reports whether e is an integer literal.
func intLit(e ast.Expr) bool {
	l, ok := e.(*ast.BasicLit)
	return ok && l.Kind == token.INT
}

// exitLiterals returns "file:line: what" for every exit number written in
// the plugin's non-test Go files under root outside allowed (the exit
// table) and the tools (hack/, test/, bin/, .git): os.Exit of an integer
// literal; an integer literal compared with, assigned to, declared as, or a
// case of something named like an exit (e.Exit == 3, exitCode := 1, const
// ExitBad = 2); an integer literal as a field named like an exit or of a
// type named like one (FleetEntry{Exit: 2}, ExitError{Code: 2}); and any
// integer literal in a function named like one (FleetExit).
func exitLiterals(t *testing.T, root, allowed string) []string {
	t.Helper()
	var out []string
	goFiles(t, root, []string{"hack", "test", "bin", ".git"}, false, func(rel string, fset *token.FileSet, f *ast.File) {
		if rel == allowed {
			return
		}
		at := func(n ast.Node, what string) {
			out = append(out, rel+":"+strconv.Itoa(fset.Position(n.Pos()).Line)+": "+what)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.FuncDecl:
				if exitName.MatchString(x.Name.Name) && x.Body != nil {
					ast.Inspect(x.Body, func(m ast.Node) bool {
						if l, ok := m.(*ast.BasicLit); ok && l.Kind == token.INT {
							at(l, l.Value+" in func "+x.Name.Name)
						}
						return true
					})
					return false
				}
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Exit" && len(x.Args) == 1 && intLit(x.Args[0]) {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" {
						at(x, "os.Exit("+x.Args[0].(*ast.BasicLit).Value+")")
					}
				}
			case *ast.BinaryExpr:
				switch x.Op {
				case token.EQL, token.NEQ, token.LSS, token.GTR, token.LEQ, token.GEQ:
					if (intLit(x.X) && exitNamed(x.Y)) || (intLit(x.Y) && exitNamed(x.X)) {
						at(x, "an exit compared with a number")
					}
				}
			case *ast.AssignStmt:
				for i, r := range x.Rhs {
					if i < len(x.Lhs) && intLit(r) && exitNamed(x.Lhs[i]) {
						at(x, "a number assigned to an exit")
					}
				}
			case *ast.ValueSpec:
				for i, v := range x.Values {
					if i < len(x.Names) && intLit(v) && exitNamed(x.Names[i]) {
						at(x, "exit "+x.Names[i].Name+" declared as a number")
					}
				}
			case *ast.SwitchStmt:
				if x.Tag != nil && exitNamed(x.Tag) {
					for _, s := range x.Body.List {
						for _, e := range s.(*ast.CaseClause).List {
							if intLit(e) {
								at(e, "a case of an exit")
							}
						}
					}
				}
			case *ast.CompositeLit:
				typed := x.Type != nil && exitNamed(x.Type)
				for _, e := range x.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if ok && intLit(kv.Value) && (typed || exitNamed(kv.Key)) {
						at(kv, "an exit field set to a number")
					}
				}
			}
			return true
		})
	})
	return out
}

// TestExitNumbersOnlyInTheExitTable: a verdict becomes an exit number in
// one place, the command's exit table (internal/cli/exit.go); every other
// package names a verdict (run.Kind) or the table's constants.
func TestExitNumbersOnlyInTheExitTable(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, exitTableFile)); err != nil {
		t.Fatalf("the exit table %s is gone: %v", exitTableFile, err)
	}
	for _, l := range exitLiterals(t, root, exitTableFile) {
		t.Errorf("%s: an exit number outside the command's exit table (%s): map a run.Verdict there", l, exitTableFile)
	}
}

// TestExitLiteralRuleFindsOne is the rule's own test: each form of an exit
// number written outside the table is found, in a planted repository; the
// table itself, a test file, hack/ and numbers that are not exits are not.
func TestExitLiteralRuleFindsOne(t *testing.T) {
	root := t.TempDir()
	plant(t, root, "reporters/fleet.go", `package reporters

type FleetEntry struct{ Exit int }

func FleetExit(codes []int) int {
	out := 0
	for _, c := range codes {
		if c > 3 {
			out = c
		}
	}
	return out
}

func line(e FleetEntry) string {
	if e.Exit == 3 {
		return "unreachable"
	}
	switch e.Exit {
	case 2:
		return "not checked"
	}
	for i := 0; i < 2; i++ {
	}
	return ""
}

func entry() FleetEntry { return FleetEntry{Exit: 2} }
`)
	plant(t, root, "internal/run/verdict.go", `package run

import "os"

const ExitBad = 2

type ExitError struct{ Code int }

func stop() error {
	exitCode := 1
	_ = exitCode
	os.Exit(1)
	return &ExitError{Code: 3}
}
`)
	plant(t, root, "internal/cli/exit.go", "package cli\n\nconst ExitFailed = 1\n")
	plant(t, root, "internal/cli/exit_test.go", "package cli\n\nfunc x(e struct{ Exit int }) bool { return e.Exit == 1 }\n")
	plant(t, root, "hack/tool/main.go", "package main\n\nimport \"os\"\n\nfunc main() { os.Exit(1) }\n")
	got := exitLiterals(t, root, "internal/cli/exit.go")
	want := []string{
		"internal/run/verdict.go:5: exit ExitBad declared as a number",
		"internal/run/verdict.go:10: a number assigned to an exit",
		"internal/run/verdict.go:12: os.Exit(1)",
		"internal/run/verdict.go:13: an exit field set to a number",
		"reporters/fleet.go:6: 0 in func FleetExit",
		"reporters/fleet.go:8: 3 in func FleetExit",
		"reporters/fleet.go:16: an exit compared with a number",
		"reporters/fleet.go:20: a case of an exit",
		"reporters/fleet.go:28: an exit field set to a number",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("exitLiterals =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
