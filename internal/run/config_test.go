package run

import (
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// The ignored values are decided beside the render only for a selection
// that reads them: chart-renders does, the admission checks do not.
func TestNeedsIgnoredValues(t *testing.T) {
	reg, err := checks.NewRegistry(checks.All())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		only []string
		want bool
	}{
		{[]string{"admission-objects", "admission-pods", "resource-quota", "admission-webhooks"}, false},
		{[]string{"chart-renders"}, true},
		{nil, true},
	} {
		sel, err := reg.Select(checks.ModePre, tc.only, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := NeedsIgnoredValues(sel); got != tc.want {
			t.Errorf("NeedsIgnoredValues(%v) = %v, want %v", tc.only, got, tc.want)
		}
		if !NeedsChart(sel) {
			t.Errorf("NeedsChart(%v) = false", tc.only)
		}
	}
}
