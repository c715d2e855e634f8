package docgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// pages reads the pages make docs rewrites: README.md and docs/*.md.
func pages(t *testing.T) []Page {
	t.Helper()
	paths, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []Page
	for _, p := range append([]string{"../../README.md"}, paths...) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Page{Path: strings.TrimPrefix(filepath.ToSlash(p), "../../"), Data: data})
	}
	return out
}

// TestReadmeTables: no Markdown table of the README or docs/ is cut in two
// by a blank line (the rows after it would render as a paragraph of
// pipes), and every check of the catalogue has its row in one of their
// checks tables.
func TestReadmeTables(t *testing.T) {
	var all strings.Builder
	for _, pg := range pages(t) {
		lines := strings.Split(string(pg.Data), "\n")
		isRow := func(i int) bool { return i >= 0 && i < len(lines) && strings.HasPrefix(lines[i], "|") }
		isSeparator := func(i int) bool { return isRow(i) && strings.Trim(lines[i], "|-: ") == "" }
		for i, l := range lines {
			// A table starts with a header row and a separator; a row after
			// a blank line that is not such a start is a broken table.
			if strings.TrimSpace(l) == "" && isRow(i-1) && isRow(i+1) && !isSeparator(i+2) {
				t.Errorf("%s line %d: a blank line splits a table; line %d is a row without a header: %q", pg.Path, i+1, i+2, lines[i+1])
			}
		}
		all.Write(pg.Data)
	}
	for _, c := range checks.All() {
		if !strings.Contains(all.String(), "checks.md#"+c.ID+") |") {
			t.Errorf("no page has a table row for check %s", c.ID)
		}
	}
}

// TestReadmeUpToDate: the generated tables of the README and docs/ (checks
// from the registry, flags from the command) are what `make docs` writes
// now.
func TestReadmeUpToDate(t *testing.T) {
	in := pages(t)
	want, err := Pages(in, checks.All(), CommandFlags())
	if err != nil {
		t.Fatalf("generating the tables: %v", err)
	}
	for i, pg := range in {
		if string(pg.Data) != string(want[i].Data) {
			t.Errorf("%s's generated tables are stale: run `make docs` and commit it", pg.Path)
		}
	}
}

// TestPagesLinkFromWhereTheyAre: a checks table in a page under docs/
// links the check's section as docs/checks.md is from there, and the
// pages are judged together (a check or the rest of the flags in a table
// of another page is listed).
func TestPagesLinkFromWhereTheyAre(t *testing.T) {
	flags := pflag.NewFlagSet("t", pflag.ContinueOnError)
	flags.Bool("post", false, "after the install")
	list := []checks.Check{testCheck("pre-one", checks.ModePre, checks.CategoryCluster), testCheck("up-one", checks.ModeUpgrade, checks.CategoryUpgrade)}
	in := []Page{
		{Path: "README.md", Data: []byte("<!-- BEGIN GENERATED checks: mode=pre (make docs) -->\n" + EndMarker + "\n")},
		{Path: "docs/upgrade.md", Data: []byte("<!-- BEGIN GENERATED checks: mode=upgrade (make docs) -->\n" + EndMarker + "\n<!-- BEGIN GENERATED flags: rest (make docs) -->\n" + EndMarker + "\n")},
	}
	out, err := Pages(in, list, flags)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out[0].Data), "[`pre-one`](docs/checks.md#pre-one)") || !strings.Contains(string(out[1].Data), "[`up-one`](checks.md#up-one)") {
		t.Errorf("links:\n%s\n%s", out[0].Data, out[1].Data)
	}
	if _, err := Pages(in[:1], list, flags); err == nil || !strings.Contains(err.Error(), "check up-one is in no table") || !strings.Contains(err.Error(), "no page has a") {
		t.Errorf("one page alone: %v", err)
	}
}

func TestReadmeRules(t *testing.T) {
	flags := pflag.NewFlagSet("t", pflag.ContinueOnError)
	flags.StringP("output", "o", "table", "output format: table|json")
	flags.Bool("post", false, "after the install")
	flags.String("kubeconfig", "", "Path to the kubeconfig file to use for CLI requests.")
	flags.Int("secret", 0, "hidden")
	_ = flags.MarkHidden("secret")
	pre := testCheck("pre-one", checks.ModePre, checks.CategoryCluster)
	ing := testCheck("ing-one", checks.ModePre, checks.CategoryIngress)
	ing.Applies = checks.Applies{Access: []checks.AccessMode{checks.AccessIngress}}
	post := testCheck("post-one", checks.ModePost, checks.CategoryRuntime)
	list := []checks.Check{pre, ing, post}

	readme := strings.Join([]string{
		"# x",
		"<!-- BEGIN GENERATED flags: post (make docs) -->",
		"stale",
		EndMarker,
		"<!-- BEGIN GENERATED flags: rest (make docs) -->",
		EndMarker,
		"<!-- BEGIN GENERATED checks: mode=pre (make docs) -->",
		EndMarker,
		"<!-- BEGIN GENERATED checks: mode=post (make docs) -->",
		EndMarker,
		"end",
	}, "\n")
	got, err := Readme([]byte(readme), list, flags)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| `--post` |  | after the install |\n" + EndMarker,
		"| `-o, --output string` | `table` | output format: table\\|json |",
		"| kubectl flags | | kubectl's connection flags, as `kubectl options` describes them: `--kubeconfig` |",
		"| [`ing-one`](docs/checks.md#ing-one) | ing-one | in ingress mode | `fail` · runtime-breaks |",
		"| [`post-one`](docs/checks.md#post-one) | post-one | always | `fail` · runtime-breaks |\n" + EndMarker + "\nend",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("generated README lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "stale") || strings.Contains(string(got), "secret") || strings.Count(string(got), "--post") != 1 {
		t.Errorf("stale text, a hidden flag, or a named flag repeated in rest:\n%s", got)
	}
	again, err := Readme(got, list, flags)
	if err != nil || string(again) != string(got) {
		t.Errorf("not idempotent: %v", err)
	}

	for name, bad := range map[string]string{
		"unclosed":       "<!-- BEGIN GENERATED flags: rest (make docs) -->\n<!-- BEGIN GENERATED checks: mode=pre (make docs) -->\n" + EndMarker,
		"unknown flag":   "<!-- BEGIN GENERATED flags: nope (make docs) -->\n" + EndMarker + "\n<!-- BEGIN GENERATED flags: rest (make docs) -->\n" + EndMarker + "\n<!-- BEGIN GENERATED checks: (make docs) -->\n" + EndMarker,
		"check nowhere":  "<!-- BEGIN GENERATED flags: rest (make docs) -->\n" + EndMarker + "\n<!-- BEGIN GENERATED checks: mode=pre (make docs) -->\n" + EndMarker,
		"no rest block":  "<!-- BEGIN GENERATED checks: (make docs) -->\n" + EndMarker,
		"malformed":      "<!-- BEGIN GENERATED tables: x -->\n" + EndMarker,
		"bad checks arg": "<!-- BEGIN GENERATED flags: rest (make docs) -->\n" + EndMarker + "\n<!-- BEGIN GENERATED checks: mode=later (make docs) -->\n" + EndMarker,
	} {
		if _, err := Readme([]byte(bad), list, flags); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// testCheck returns a registered-looking check for the README tests.
func testCheck(id string, mode checks.Mode, cat checks.Category) checks.Check {
	return checks.Check{Meta: checks.Meta{ID: id, Category: cat, Modes: mode, Title: id, Severity: checks.SeverityFail, Impact: checks.ImpactRuntimeBreaks}}
}
