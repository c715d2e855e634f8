package checks

import (
	"strings"
	"testing"
)

// TestResourceQuota: the release's pods (replicas × the requests and limits
// their dry runs came back with) and objects are summed against each
// quota's room (hard − used); a hook Job's pod alone needs room first; an
// object the release creates beyond a count quota is refused to Helm
// itself (install-fails).
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
			outcome{StatusFail, []string{"ResourceQuota compute: the release's pods needs pods 2, room 1 (hard 3, used 2)",
				"the pods beyond the room are refused: without --wait Helm reports success", "with --wait the install fails after its --timeout"}}, ImpactRuntimeBreaks},
		{"the hook's pod does not fit", quota("limits.memory: '1Gi'", "limits.memory: '512Mi'"), defaults,
			outcome{StatusFail, []string{"pre hook hook Job validate-values", "limits.memory 1Gi, room 512Mi"}}, ImpactInstallFails},
		{"the objects do not fit", quota("count/configmaps: '2'", "count/configmaps: '2'"), nil,
			outcome{StatusFail, []string{"count/configmaps 1, room 0", "helm meets the refusal itself"}}, ImpactInstallFails},
		{"the objects do not fit (configmaps)", quota("configmaps: '2'", "configmaps: '2'"), nil,
			outcome{StatusFail, []string{"configmaps 1, room 0", "helm meets the refusal itself"}}, ImpactInstallFails},
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

// TestResourceQuotaFollowsHelmWait: the runtime's pods beyond a quota's
// room follow whether Helm waits (--helm-wait): install-fails with --wait,
// runtime-breaks without, runtime-breaks and both outcomes said when the
// run was not told. A hook's pod beyond the room fails the install
// whatever --wait says.
func TestResourceQuotaFollowsHelmWait(t *testing.T) {
	quota := func(hard, used string) string {
		return "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: pods, namespace: codefresh}\nspec:\n  hard: {" + hard + "}\nstatus:\n  hard: {" + hard + "}\n  used: {" + used + "}\n"
	}
	admitted := func(r dryRunRequest) (int, map[string]any, []string) {
		if podOfRequest(r) == "" {
			return 0, nil, nil
		}
		return 201, r.Object, nil
	}
	pods := quota("pods: '3'", "pods: '2'")
	cases := []struct {
		name    string
		quota   string
		wait    HelmWait
		want    []string
		notWant []string
		impact  Impact
	}{
		{"--helm-wait=true", pods, HelmWaitOn,
			[]string{"the release's pods needs pods 2, room 1", "helm install --wait fails after its --timeout", "the refused pods are never created"},
			[]string{"reports success"}, ImpactInstallFails},
		{"--helm-wait=false", pods, HelmWaitOff,
			[]string{"the release's pods needs pods 2, room 1", "helm reports success and the release's workloads run without the pods beyond the room"},
			[]string{"--timeout"}, ImpactRuntimeBreaks},
		{"not told", pods, HelmWaitUnknown,
			[]string{"without --wait Helm reports success", "with --wait the install fails after its --timeout", "--helm-wait"},
			nil, ImpactRuntimeBreaks},
		{"a hook's pod, without --wait", quota("pods: '1'", "pods: '1'"), HelmWaitOff,
			[]string{"pre hook hook Job validate-values", "helm meets the refusal itself"},
			[]string{"reports success"}, ImpactInstallFails},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := admissionKit(t, &fakeAdmission{answer: admitted}, tc.quota).waits(tc.wait).outcome(ResourceQuota())
			outcome{StatusFail, tc.want}.expect(t, o.Result)
			for _, w := range tc.notWant {
				if strings.Contains(o.Message, w) {
					t.Errorf("the message says %q:\n%s", w, o.Message)
				}
			}
			if o.Meta.Impact != tc.impact {
				t.Errorf("impact %s, want %s", o.Meta.Impact, tc.impact)
			}
		})
	}
}
