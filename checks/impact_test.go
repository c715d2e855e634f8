package checks

import "testing"

func TestImpactOfEveryCheck(t *testing.T) {
	want := map[string]Impact{
		"chart-renders":      ImpactInstallFails,
		"helm-ownership":     ImpactInstallFails,
		"values":             ImpactInstallFails,
		"argo-components":    ImpactRuntimeBreaks,
		"node-resources":     ImpactRuntimeBreaks,
		"platform-reachable": ImpactAdvisory,
	}
	for _, c := range All() {
		got := c.Impact()
		if got != ImpactInstallFails && got != ImpactRuntimeBreaks && got != ImpactAdvisory {
			t.Errorf("%s: impact %q", c.ID, got)
		}
		if w, ok := want[c.ID]; ok && got != w {
			t.Errorf("%s: impact %s, want %s", c.ID, got, w)
		}
	}
	for id := range installFails {
		found := false
		for _, c := range All() {
			found = found || c.ID == id
		}
		if !found {
			t.Errorf("installFails names unknown check %s", id)
		}
	}
	r := &Report{Outcomes: []Outcome{
		{Meta: HelmOwnership().Meta, Result: Result{Status: StatusFail}},
		{Meta: ArgoComponents().Meta, Result: Result{Status: StatusPass}},
		{Meta: PlatformReachableCheck().Meta, Result: Result{Status: StatusWarn}},
	}}
	s := r.ImpactSummary()
	if s[ImpactInstallFails] != 1 || s[ImpactRuntimeBreaks] != 0 || s[ImpactAdvisory] != 1 {
		t.Errorf("impact summary %v", s)
	}
}
