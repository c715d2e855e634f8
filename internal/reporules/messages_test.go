package reporules

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// parsingPackages are the packages whose functions, called on a check's
// message, would read meaning out of its text; parsingMethods are the
// methods that would (a compiled regexp's).
var (
	parsingPackages = []string{"strings", "regexp", "strconv"}
	parsingMethods  = regexp.MustCompile(`^(Match|Find|ReplaceAll|Split)`)
)

// messageParses returns "file:line: what" for every call, in the non-test
// Go files of dir, on a check's message (a .Message field) of a function of
// parsingPackages (under whatever name the file imports it) or of a method
// of parsingMethods, but strings.Split(x.Message, "\n"), which cuts it into
// the lines a reporter prints.
func messageParses(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	packageFiles(t, dir, func(name string, fset *token.FileSet, f *ast.File) {
		pkgs := map[string]string{} // local name -> package
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !slices.Contains(parsingPackages, p) {
				continue
			}
			local := p
			if imp.Name != nil {
				local = imp.Name.Name
			}
			pkgs[local] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			onMessage := slices.ContainsFunc(call.Args, func(a ast.Expr) bool {
				s, ok := a.(*ast.SelectorExpr)
				return ok && s.Sel.Name == "Message"
			})
			if !onMessage {
				return true
			}
			pkg := ""
			if x, ok := sel.X.(*ast.Ident); ok {
				pkg = pkgs[x.Name]
			}
			switch {
			case pkg == "strings" && sel.Sel.Name == "Split" && len(call.Args) == 2 && isNewline(call.Args[1]):
			case pkg != "":
				out = append(out, name+":"+strconv.Itoa(fset.Position(call.Pos()).Line)+": "+pkg+"."+sel.Sel.Name)
			case parsingMethods.MatchString(sel.Sel.Name):
				out = append(out, name+":"+strconv.Itoa(fset.Position(call.Pos()).Line)+": ."+sel.Sel.Name)
			}
			return true
		})
	})
	return out
}

// isNewline reports whether e is the literal "\n".
func isNewline(e ast.Expr) bool {
	l, ok := e.(*ast.BasicLit)
	return ok && l.Value == `"\n"`
}

// TestNoReporterParsesAMessage: a reporter prints a check's message, cut
// into its lines, and reads nothing out of it: what a report needs of a
// result (the upgrade step a fleet groups clusters by) is typed data on
// the Result.
func TestNoReporterParsesAMessage(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "reporters"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range messageParses(t, dir) {
		t.Errorf("reporters/%s parses a check's message: give the Result a typed field instead", p)
	}
}

// TestMessageRuleFindsOne is the rule's own test: a planted reporter
// cutting a message at ";" (nested in a line cut) and matching it with an
// aliased regexp is found; splitting it into lines to print is not.
func TestMessageRuleFindsOne(t *testing.T) {
	dir := t.TempDir()
	src := "package reporters\n\nimport (\n\t\"strings\"\n\tre \"regexp\"\n)\n\n" +
		"func step(o struct{ Message string }) string {\n" +
		"\tpath := strings.SplitN(strings.SplitN(o.Message, \"\\n\", 2)[0], \";\", 2)[0]\n" +
		"\t_ = re.MustCompile(`skips`).MatchString(o.Message)\n" +
		"\tfor _, l := range strings.Split(o.Message, \"\\n\") {\n\t\tpath += l\n\t}\n" +
		"\treturn path\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "fleet.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fleet_test.go"), []byte("package reporters\n\nimport \"strings\"\n\nvar _ = strings.Contains(struct{ Message string }{}.Message, \"x\")\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := messageParses(t, dir)
	want := []string{"fleet.go:9: strings.SplitN", "fleet.go:10: .MatchString"}
	if !slices.Equal(got, want) {
		t.Errorf("messageParses = %q, want %q", got, want)
	}
}
