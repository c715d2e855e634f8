package reporters

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// TestImpactLegendOnlyWithTheMarker: the summary's impact line counts only
// the checks that failed or errored, and the legend of ✱ follows it only when
// a check shows ✱ (a failed install-fails check), in the terminal layout and
// in the full table alike.
func TestImpactLegendOnlyWithTheMarker(t *testing.T) {
	outcome := func(id string, st checks.Status) checks.Outcome {
		return checks.Outcome{
			Meta:   checks.Meta{ID: id, Category: checks.CategoryCluster, Modes: checks.ModePre, Title: "t", Impact: registeredImpact(id)},
			Result: checks.Result{Status: st, Message: id + " said so"},
		}
	}
	pass := outcome("cluster-reachable", checks.StatusPass)
	for _, tt := range []struct {
		name       string
		outs       []checks.Outcome
		wantImpact string // the impact line; "" for none
	}{
		{"an install-fails failure", []checks.Outcome{pass, outcome("cluster-admin", checks.StatusFail), outcome("helm-version", checks.StatusWarn)},
			"Failing, by impact: 1 install-fails (✱ = helm install will fail)"},
		{"an install-fails error", []checks.Outcome{pass, outcome("cluster-admin", checks.StatusError)},
			"Failing, by impact: 1 install-fails (✱ = helm install will fail)"},
		{"a runtime-breaks failure only", []checks.Outcome{pass, outcome("argo-components", checks.StatusFail), outcome("helm-version", checks.StatusWarn)},
			"Failing, by impact: 1 runtime-breaks"},
		{"warnings only", []checks.Outcome{pass, outcome("helm-version", checks.StatusWarn), outcome("argo-components", checks.StatusWarn)}, ""},
		{"all pass", []checks.Outcome{pass}, ""},
	} {
		for _, width := range []int{0, 200} {
			var buf bytes.Buffer
			if err := (Table{Options: Options{Width: width}}).Report(&buf, &checks.Report{Mode: checks.ModePre, Outcomes: tt.outs}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			last := lines[len(lines)-1]
			if tt.wantImpact == "" {
				if strings.Contains(out, "by impact") || strings.Contains(out, installFailsMarker) {
					t.Errorf("%s, width %d: an impact line or a marker:\n%s", tt.name, width, out)
				}
				continue
			}
			if last != tt.wantImpact {
				t.Errorf("%s, width %d: last line %q, want %q", tt.name, width, last, tt.wantImpact)
			}
			if shown := strings.Count(out, installFailsMarker); (shown > 1) != strings.Contains(tt.wantImpact, installFailsMarker) {
				t.Errorf("%s, width %d: ✱ shown %d times (legend included):\n%s", tt.name, width, shown, out)
			}
		}
	}
}
