package chart

import (
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// TestArgoCDRulesOf: the hook's range and selector with their sources, the
// defaults where the chart was not rendered, renders no hook or a hook
// without the variable, and whether the hook enforces the range (not in a
// helm upgrade when the hook is pre-install only).
func TestArgoCDRulesOf(t *testing.T) {
	full := &ValidateValues{ArgoCDVersionConstraint: ">=3.2 <=3.4", ArgoCDServerSelector: "app=argocd-server", ChecksArgoCDVersion: true}
	def, defSel := plan.DefaultArgoCDVersionRange, plan.DefaultArgoCDServerSelector
	for name, tc := range map[string]struct {
		h           *Hooks
		helmUpgrade bool
		want        ArgoCDRules
	}{
		"not rendered": {nil, false, ArgoCDRules{Range: def, Selector: defSel, RangeFrom: RuleAssumed, SelectorFrom: RuleAssumed, Enforced: true}},
		"no hook":      {&Hooks{}, false, ArgoCDRules{Range: def, Selector: defSel, RangeFrom: RuleNoHook, SelectorFrom: RuleNoHook}},
		"from the hook": {&Hooks{ValidateValues: full}, false,
			ArgoCDRules{Range: ">=3.2 <=3.4", Selector: "app=argocd-server", RangeFrom: RuleFromHook, SelectorFrom: RuleFromHook, Enforced: true}},
		"unset in the hook, not checked": {&Hooks{ValidateValues: &ValidateValues{}}, false,
			ArgoCDRules{Range: def, Selector: defSel, RangeFrom: RuleUnsetInHook, SelectorFrom: RuleUnsetInHook}},
		"helm upgrade, pre-install hook": {&Hooks{ValidateValues: full}, true,
			ArgoCDRules{Range: ">=3.2 <=3.4", Selector: "app=argocd-server", RangeFrom: RuleFromHook, SelectorFrom: RuleFromHook}},
		"helm upgrade, pre-upgrade hook": {&Hooks{ValidateValues: full, ValidateValuesOnUpgrade: true}, true,
			ArgoCDRules{Range: ">=3.2 <=3.4", Selector: "app=argocd-server", RangeFrom: RuleFromHook, SelectorFrom: RuleFromHook, Enforced: true}},
	} {
		if got := ArgoCDRulesOf(tc.h, tc.helmUpgrade); got != tc.want {
			t.Errorf("%s: ArgoCDRulesOf = %+v, want %+v", name, got, tc.want)
		}
	}
}
