package checks

import (
	"testing"
)

// TestValidationHooks: the switches are read from the rendered hooks of the
// chart being installed, naming it; without a chart, from the values.
func TestValidationHooks(t *testing.T) {
	c := hookChart(t, "0.30.0", ">=3.2 <=3.4", "", nil)
	vals := func(kv ...any) Inputs {
		v := map[string]any{}
		inst := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			inst[kv[i].(string)] = kv[i+1]
		}
		v["installer"] = inst
		return Inputs{Values: v, RenderValues: v, SkipValidation: inst["skipValidation"] == true, SkipUsageValidation: inst["skipUsageValidation"] == true}
	}
	tests := []struct {
		name  string
		chart string
		in    Inputs
		want  outcome
	}{
		{"both run", c, vals(), outcome{StatusPass, []string{"validate-values and validate-usage hooks run", "chart gitops-runtime 0.30.0"}}},
		{"skipValidation", c, vals("skipValidation", true), outcome{StatusWarn, []string{"installer.skipValidation=true: no validate-values hook", "Admin role", "runtime name being free", "chart gitops-runtime 0.30.0"}}},
		{"skipUsageValidation", c, vals("skipUsageValidation", true), outcome{StatusWarn, []string{"installer.skipUsageValidation=true: no validate-usage hook", "limit of clusters"}}},
		{"no chart: from the values", "", vals("skipValidation", true, "skipUsageValidation", true), outcome{StatusWarn, []string{"no validate-values hook", "no validate-usage hook", "no chart loaded", "read from the values"}}},
		{"no chart, nothing skipped", "", vals(), outcome{StatusPass, []string{"read from the values"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKit(t).with(tt.in)
			if tt.chart != "" {
				k.withChart(tt.chart)
			}
			o := k.outcome(ValidationHooks())
			tt.want.expect(t, o.Result)
			if o.Meta.Impact != ImpactAdvisory {
				t.Errorf("impact %s", o.Meta.Impact)
			}
		})
	}
}
