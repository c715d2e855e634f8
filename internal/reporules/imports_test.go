package reporules

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// goPackage is the part of `go list -json` the rule reads.
type goPackage struct {
	ImportPath, Dir string
	GoFiles         []string
	Imports         []string
}

// listPackages runs `go list -json ./...` at the repository root.
func listPackages(t *testing.T) []goPackage {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -json ./...: %v\n%s", err, stderr.String())
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages: the listing is broken", len(pkgs))
	}
	return pkgs
}

// violations returns, for each import of a project package that table does
// not allow, "file: imports pkg".
func violations(pkgs []goPackage, table map[string][]string, fileImports func(dir, file string) ([]string, error)) ([]string, error) {
	var out []string
	for _, p := range pkgs {
		from := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, Module), "/")
		for _, imp := range p.Imports {
			to, ok := strings.CutPrefix(imp, Module+"/")
			if !ok || slices.Contains(table[from], to) {
				continue
			}
			// Name the files that add the edge.
			for _, f := range p.GoFiles {
				imps, err := fileImports(p.Dir, f)
				if err != nil {
					return nil, err
				}
				if slices.Contains(imps, imp) {
					out = append(out, filepath.Join(from, f)+": imports "+to+" (not an edge allowedImports allows for "+from+")")
				}
			}
		}
	}
	return out, nil
}

func parseImports(dir, file string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, file), nil, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range f.Imports {
		p, err := strconv.Unquote(s.Path.Value)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// TestImportEdges fails on every import between the project's packages that
// allowedImports does not list, naming the file.
func TestImportEdges(t *testing.T) {
	pkgs := listPackages(t)
	bad, err := violations(pkgs, allowedImports, parseImports)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestImportTableIsTight fails on table entries no package uses, so the
// table stays the graph as it is and an edge removed is removed here too.
func TestImportTableIsTight(t *testing.T) {
	used := map[string]map[string]bool{}
	for _, p := range listPackages(t) {
		from := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, Module), "/")
		for _, imp := range p.Imports {
			if to, ok := strings.CutPrefix(imp, Module+"/"); ok {
				if used[from] == nil {
					used[from] = map[string]bool{}
				}
				used[from][to] = true
			}
		}
	}
	for from, tos := range allowedImports {
		for _, to := range tos {
			if !used[from][to] {
				t.Errorf("allowedImports: %s -> %s is allowed but no file imports it: remove it", from, to)
			}
		}
	}
}

// TestViolationsNameTheFile is the rule's own test: an edge not in the table
// is reported with the file that adds it; an allowed one is not.
func TestViolationsNameTheFile(t *testing.T) {
	pkgs := []goPackage{{
		ImportPath: Module + "/reporters", Dir: "/src/reporters",
		GoFiles: []string{"json.go", "table.go"},
		Imports: []string{"fmt", Module + "/checks", Module + "/internal/cli"},
	}}
	files := map[string][]string{
		"json.go":  {"fmt", Module + "/checks"},
		"table.go": {Module + "/checks", Module + "/internal/cli"},
	}
	got, err := violations(pkgs, map[string][]string{"reporters": {"checks"}}, func(_, f string) ([]string, error) { return files[f], nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"reporters/table.go: imports internal/cli (not an edge allowedImports allows for reporters)"}
	if !slices.Equal(got, want) {
		t.Errorf("violations = %q, want %q", got, want)
	}
}
