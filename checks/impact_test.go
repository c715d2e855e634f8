package checks

import (
	"slices"
	"strings"
	"testing"
)

func TestImpactOfEveryCheck(t *testing.T) {
	want := map[string]Impact{
		"chart-renders":      ImpactInstallFails,
		"helm-ownership":     ImpactInstallFails,
		"values":             ImpactInstallFails,
		"argo-components":    ImpactRuntimeBreaks,
		"node-resources":     ImpactRuntimeBreaks,
		"platform-reachable": ImpactAdvisory,
		"release-upgradable": ImpactUpgradeFails,
		"release-apis":       ImpactUpgradeFails,
		"upgrade-values":     ImpactUpgradeFails,
		"upgrade-deletes":    ImpactDataLoss,
		"upgrade-path":       ImpactRuntimeBreaks,
	}
	for _, c := range All() {
		got := c.Impact
		if !got.known() {
			t.Errorf("%s: impact %q", c.ID, got)
		}
		if w, ok := want[c.ID]; ok && got != w {
			t.Errorf("%s: impact %s, want %s", c.ID, got, w)
		}
	}
	// The checks whose failure makes Helm refuse the install (or, after it,
	// the release): Helm's ownership rule, the chart's templates and its
	// validate-values hook, the rights to create what the chart renders, a
	// reachable API server, the Helm client's version, an existing Argo CD
	// outside the range the hook accepts, a leftover runtime token that
	// switches the hook's mode, the platform refusing what the hook asks,
	// the admission chain refusing an object, a hook pod or a webhook call
	// (their results say runtime-breaks when only the runtime's pods are).
	wantInstallFails := []string{"admission-objects", "admission-pods", "admission-webhooks", "cluster-reachable", "cluster-admin", "helm-version", "argo-crds-ownership", "argocd-version",
		"helm-ownership", "existing-runtime", "leftover-runtime-token", "platform-user-token", "runtime-name", "runtime-namespace", "values", "chart-renders",
		"release-deployed", "validate-values-job"}
	var gotInstallFails []string
	for _, c := range All() {
		if c.Impact == ImpactInstallFails {
			gotInstallFails = append(gotInstallFails, c.ID)
		}
	}
	slices.Sort(wantInstallFails)
	slices.Sort(gotInstallFails)
	if !slices.Equal(gotInstallFails, wantInstallFails) {
		t.Errorf("install-fails checks = %v, want %v", gotInstallFails, wantInstallFails)
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

// TestRegistryRefusesMissingImpact: a check must say what its failure means.
func TestRegistryRefusesMissingImpact(t *testing.T) {
	for name, mutate := range map[string]func(*Check){
		"no impact":                func(c *Check) { c.Impact = "" },
		"unknown impact":           func(c *Check) { c.Impact = "catastrophic" },
		"warn check, not advisory": func(c *Check) { c.Severity, c.Impact = SeverityWarn, ImpactInstallFails },
		"fix options, not fixable": func(c *Check) { c.Fixable, c.FixOptions = false, []string{"crds"} },
	} {
		t.Run(name, func(t *testing.T) {
			list := All()
			for i := range list {
				if list[i].ID == "argo-crds-ownership" {
					mutate(&list[i])
				}
			}
			if _, err := NewRegistry(list); err == nil || !strings.Contains(err.Error(), "argo-crds-ownership") {
				t.Fatalf("NewRegistry = %v, want an error naming argo-crds-ownership", err)
			}
		})
	}
	if _, err := NewRegistry(All()); err != nil {
		t.Fatal(err)
	}
}
