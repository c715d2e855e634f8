package reporters

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestTableFitsTheWidth: at every terminal width from 30 to 200 columns, no
// line of the stacked table (coloured or not) is wider than the terminal, no
// line ends in a blank, and every word of every message and hint is still
// there; the same report piped (Width 0) keeps each message on one line.
func TestTableFitsTheWidth(t *testing.T) {
	r := mixedReport()
	r.Outcomes = append(r.Outcomes, checks.Outcome{
		Meta: checks.Meta{ID: "ingress-report-status", Category: checks.CategoryIngress, Modes: checks.ModePost, Title: "t", Impact: registeredImpact("ingress-report-status")},
		Result: checks.Warn("%s", "a-very-long-token-without-any-spaces-"+strings.Repeat("x", 150)).
			WithHint("see https://example.com/" + strings.Repeat("p", 120) + " for more"),
	})
	for width := 30; width <= 200; width++ {
		for _, colour := range []bool{false, true} {
			var buf bytes.Buffer
			if err := (Table{Options: Options{Width: width, Color: colour}}).Report(&buf, r); err != nil {
				t.Fatal(err)
			}
			plain := ansi.ReplaceAllString(buf.String(), "")
			for i, l := range strings.Split(strings.TrimSuffix(plain, "\n"), "\n") {
				if got := twwidth.Width(l); got > width {
					t.Fatalf("width %d: line %d is %d columns: %q", width, i+1, got, l)
				}
				if strings.HasSuffix(l, " ") {
					t.Fatalf("width %d: line %d ends in a blank: %q", width, i+1, l)
				}
			}
			joined := strings.Join(strings.Fields(plain), "")
			for _, o := range r.Outcomes {
				for _, want := range []string{o.Message, o.Hint} {
					if o.Status == checks.StatusPass || o.Status == checks.StatusSkip {
						want = o.Message
					}
					if !strings.Contains(joined, strings.Join(strings.Fields(want), "")) {
						t.Fatalf("width %d: text of %s lost: %q\n%s", width, o.ID, want, plain)
					}
				}
			}
		}
	}
	var piped bytes.Buffer
	if err := (Table{}).Report(&piped, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(piped.String(), "a-very-long-token-without-any-spaces-"+strings.Repeat("x", 150)+"\n") {
		t.Errorf("piped table wrapped a message:\n%s", piped.String())
	}
}

// TestWideFormatIgnoresWidth: -o wide is the full table even on a terminal.
func TestWideFormatIgnoresWidth(t *testing.T) {
	rep, err := New(FormatWide, Options{Width: 80})
	if err != nil {
		t.Fatal(err)
	}
	var wide, piped bytes.Buffer
	if err := rep.Report(&wide, mixedReport()); err != nil {
		t.Fatal(err)
	}
	if err := (Table{}).Report(&piped, mixedReport()); err != nil {
		t.Fatal(err)
	}
	if wide.String() != piped.String() {
		t.Errorf("-o wide differs from the piped table:\n%s\n---\n%s", wide.String(), piped.String())
	}
}
