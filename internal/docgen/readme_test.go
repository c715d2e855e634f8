package docgen

import (
	"os"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// TestReadmeTables: no Markdown table in README.md is cut in two by a blank
// line (the rows after it would render as a paragraph of pipes), and every
// check of the catalogue has its row in the README's Checks tables.
func TestReadmeTables(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	isRow := func(i int) bool { return i >= 0 && i < len(lines) && strings.HasPrefix(lines[i], "|") }
	isSeparator := func(i int) bool { return isRow(i) && strings.Trim(lines[i], "|-: ") == "" }
	for i, l := range lines {
		// A table starts with a header row and a separator; a row after a
		// blank line that is not such a start is a broken table.
		if strings.TrimSpace(l) == "" && isRow(i-1) && isRow(i+1) && !isSeparator(i+2) {
			t.Errorf("README.md line %d: a blank line splits a table; line %d is a row without a header: %q", i+1, i+2, lines[i+1])
		}
	}
	for _, c := range checks.All() {
		if !strings.Contains(string(data), "| `"+c.ID+"` |") {
			t.Errorf("README.md has no table row for check %s", c.ID)
		}
	}
}
