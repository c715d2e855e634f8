package reporters

import (
	"bytes"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// TestListChecksFitsTheWidth: at every width from 30 to 200 columns the
// catalogue's lines fit and none ends in a blank; every check's ID, mode and
// category are there, and its docs: the full link where it fits (a pipe,
// 200 columns), the anchor "#<ID>" where that fits, and at 80 columns the
// one line saying the anchors are docs/checks.md#<ID>. -o wide has every
// column and no trailing blank.
func TestListChecksFitsTheWidth(t *testing.T) {
	list := checks.All()
	render := func(f Format, width int) string {
		var buf bytes.Buffer
		if err := ListChecks(&buf, f, list, width); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	for width := 30; width <= 200; width++ {
		out := render(FormatTable, width)
		for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if got := twwidth.Width(l); got > width {
				t.Fatalf("width %d: line %d is %d columns: %q", width, i+1, got, l)
			}
			if strings.HasSuffix(l, " ") {
				t.Fatalf("width %d: line %d ends in a blank: %q", width, i+1, l)
			}
		}
		fields := strings.Fields(out)
		for _, c := range list {
			for _, want := range []string{c.ID, c.Modes.String(), string(c.Category)} {
				if !containsField(fields, want) {
					t.Fatalf("width %d: %s's %q missing:\n%s", width, c.ID, want, out)
				}
			}
		}
	}
	at80 := render(FormatTable, 80)
	if !strings.Contains(at80, "Docs: docs/checks.md#<ID> in\n  "+docsRepo+"\n") || !strings.HasPrefix(at80, "ID ") {
		t.Errorf("80 columns: no docs anchor line:\n%s", at80)
	}
	at100 := render(FormatTable, 100)
	if !strings.Contains(at100, " #cluster-reachable\n") {
		t.Errorf("100 columns: no anchor column:\n%s", at100)
	}
	for _, out := range []string{render(FormatTable, 0), render(FormatTable, 200)} {
		if !strings.Contains(out, " "+checks.DocsBase+"#cluster-reachable\n") {
			t.Errorf("no full docs link:\n%s", out)
		}
	}
	wide := render(FormatWide, 80)
	for i, l := range strings.Split(wide, "\n") {
		if strings.HasSuffix(l, " ") {
			t.Fatalf("-o wide line %d ends in a blank: %q", i+1, l)
		}
	}
	if !strings.Contains(wide, list[0].Title) || !strings.Contains(wide, list[0].Docs()) || !strings.Contains(wide, "CATEGORY") {
		t.Errorf("-o wide lacks the title or the link:\n%s", wide)
	}
}

func containsField(fields []string, want string) bool {
	for _, f := range fields {
		if f == want || strings.TrimPrefix(f, "#") == want {
			return true
		}
	}
	return false
}
