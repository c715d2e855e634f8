package checks

import (
	"strings"
	"testing"
)

// TestResourceQuota: the release's pods (replicas × the requests and limits
// their dry runs came back with) and objects are summed against each
// quota's room (hard − used); a hook Job's pod alone needs room first.
func TestResourceQuota(t *testing.T) {
	quota := func(hard, used string) string {
		return "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: codefresh}\nspec:\n  hard: {" + hard + "}\nstatus:\n  hard: {" + hard + "}\n  used: {" + used + "}\n"
	}
	// The LimitRange's defaults, as the pods' dry runs come back with them.
	defaults := func(r dryRunRequest) (int, map[string]any, []string) {
		if podOfRequest(r) == "" {
			return 0, nil, nil
		}
		for _, c := range asList(r.Object["spec"].(map[string]any)["containers"]) {
			c := c.(map[string]any)
			if _, ok := c["resources"].(map[string]any)["limits"]; !ok {
				c["resources"] = map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}, "requests": map[string]any{"cpu": "50m", "memory": "64Mi"}}
			}
		}
		return 201, r.Object, nil
	}
	cases := []struct {
		name, quota string
		answer      func(r dryRunRequest) (int, map[string]any, []string)
		want        outcome
		impact      Impact
	}{
		{"no quota", "", nil, outcome{StatusPass, []string{"no ResourceQuota"}}, ""},
		{"room for it", quota("limits.cpu: '4', pods: '10', configmaps: '5'", "limits.cpu: '1', pods: '1', configmaps: '1'"), defaults,
			outcome{StatusPass, []string{"fits all 1 ResourceQuota", "2 pods of the release"}}, ""},
		{"the runtime's pods do not fit", quota("limits.cpu: '20', pods: '3'", "limits.cpu: '1500m', pods: '2'"), defaults,
			outcome{StatusFail, []string{"ResourceQuota compute: the release's pods needs pods 2, room 1 (hard 3, used 2)"}}, ImpactRuntimeBreaks},
		{"the hook's pod does not fit", quota("limits.memory: '1Gi'", "limits.memory: '512Mi'"), defaults,
			outcome{StatusFail, []string{"pre hook hook Job validate-values", "limits.memory 1Gi, room 512Mi"}}, ImpactInstallFails},
		{"the objects do not fit", quota("count/configmaps: '2'", "count/configmaps: '2'"), nil,
			outcome{StatusFail, []string{"count/configmaps 1, room 0"}}, ImpactRuntimeBreaks},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var docs []string
			if tc.quota != "" {
				docs = append(docs, tc.quota)
			}
			o := admissionKit(t, &fakeAdmission{answer: tc.answer}, docs...).outcome(ResourceQuota())
			tc.want.expect(t, o.Result)
			if tc.impact != "" && o.Meta.Impact != tc.impact {
				t.Errorf("impact %s, want %s", o.Meta.Impact, tc.impact)
			}
		})
	}
	if !strings.Contains(ResourceQuota().Title, "ResourceQuota") {
		t.Error("title")
	}
}
