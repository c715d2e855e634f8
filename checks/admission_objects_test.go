package checks

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// TestAdmissionObjects: every object of the chart (the hooks included) is
// sent as a dry-run create as the identity that installs; a
// ValidatingAdmissionPolicy refusing the hook's ClusterRole fails naming
// the policy, its binding and the value that leaves the hook out; its
// warnings in Warn mode warn; a refusal for lack of rights alone skips,
// naming the permission.
func TestAdmissionObjects(t *testing.T) {
	vap := "clusterroles.rbac.authorization.k8s.io \"validate-values-cr\" is forbidden: ValidatingAdmissionPolicy 'restrict-wildcard-verbs' with binding 'restrict-wildcard-verbs-binding' denied request: Use of a wildcard ('*') in verbs is forbidden"
	cases := []struct {
		name   string
		answer func(r dryRunRequest) (int, map[string]any, []string)
		want   outcome
		impact Impact
	}{
		{"admitted", nil, outcome{StatusPass, []string{"admits all", "user ci-installer (groups platform)"}}, ""},
		{"a policy refuses the hook's ClusterRole", func(r dryRunRequest) (int, map[string]any, []string) {
			if strings.HasSuffix(r.Path, "/clusterroles") {
				return 403, refuse(403, "Forbidden", vap), nil
			}
			return 0, nil, nil
		}, outcome{StatusFail, []string{"ClusterRole validate-values-cr (hook pre-install,pre-upgrade)", "ValidatingAdmissionPolicy restrict-wildcard-verbs (binding restrict-wildcard-verbs-binding)",
			"installer.skipValidation=true", "validationActions"}}, ImpactInstallFails},
		{"a policy in Warn mode", func(r dryRunRequest) (int, map[string]any, []string) {
			if strings.HasSuffix(r.Path, "/clusterroles") {
				return 201, r.Object, []string{"Validation failed for ValidatingAdmissionPolicy 'restrict-wildcard-verbs' with binding 'b': wildcard verbs"}
			}
			return 0, nil, nil
		}, outcome{StatusWarn, []string{"ClusterRole validate-values-cr", "Validation failed for ValidatingAdmissionPolicy"}}, ""},
		{"no right to create", func(r dryRunRequest) (int, map[string]any, []string) {
			return 403, refuse(403, "Forbidden", `configmaps "x" is forbidden: User "ci-installer" cannot create resource "configmaps" in API group "" in the namespace "codefresh"`), nil
		}, outcome{StatusSkip, []string{"no permission to create configmaps in namespace codefresh", "authorized like the writes"}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeAdmission{answer: tc.answer}
			o := admissionKit(t, f).outcome(AdmissionObjects())
			tc.want.expect(t, o.Result)
			if tc.impact != "" && o.Meta.Impact != tc.impact {
				t.Errorf("impact %s, want %s", o.Meta.Impact, tc.impact)
			}
			for _, r := range f.requests {
				if r.Method != "GET" && r.DryRun != "All" && !strings.Contains(r.Path, "selfsubjectreviews") {
					t.Errorf("%s %s without dryRun=All", r.Method, r.Path)
				}
			}
		})
	}
	// Every object once, the hooks' too; the release's carry Helm's
	// ownership metadata.
	f := &fakeAdmission{}
	admissionKit(t, f).run(AdmissionObjects())
	seen := map[string]int{}
	for _, r := range f.requests {
		md, _ := r.Object["metadata"].(map[string]any)
		if name, _ := md["name"].(string); name != "" {
			seen[r.Path+"/"+name]++
			if ann, _ := md["annotations"].(map[string]any); name == "gitops-operator-config" && ann["meta.helm.sh/release-name"] != DefaultReleaseName {
				t.Errorf("ConfigMap sent without Helm's ownership annotations: %v", md)
			}
		}
	}
	for _, want := range []string{"/apis/rbac.authorization.k8s.io/v1/clusterroles/validate-values-cr", "/apis/batch/v1/namespaces/codefresh/jobs/validate-values",
		"/apis/apps/v1/namespaces/codefresh/deployments/gitops-operator", "/api/v1/namespaces/codefresh/configmaps/gitops-operator-config"} {
		if seen[want] != 1 {
			t.Errorf("%s sent %d times, want once (sent: %v)", want, seen[want], seen)
		}
	}
}

// TestAdmissionObjectsLeavesExistingObjects: an object of the release that
// already exists is not sent (Helm creates no object that exists:
// helm-ownership judges it) and is named as not judged; a hook whose name
// exists is still sent (Helm creates hooks whatever exists).
func TestAdmissionObjectsLeavesExistingObjects(t *testing.T) {
	f := &fakeAdmission{}
	existing := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gitops-operator-config\n  namespace: codefresh\n---\n" +
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: validate-values-cr\n"
	o := admissionKit(t, f, strings.Split(existing, "---\n")...).outcome(AdmissionObjects())
	outcome{StatusPass, []string{"not judged: ConfigMap gitops-operator-config", "exists already"}}.expect(t, o.Result)
	sent := map[string]bool{}
	for _, r := range f.requests {
		md, _ := r.Object["metadata"].(map[string]any)
		if name, _ := md["name"].(string); name != "" {
			sent[r.Path+"/"+name] = true
		}
	}
	if sent["/api/v1/namespaces/codefresh/configmaps/gitops-operator-config"] {
		t.Error("the existing ConfigMap was sent as a dry-run create")
	}
	for _, want := range []string{"/apis/rbac.authorization.k8s.io/v1/clusterroles/validate-values-cr", "/apis/apps/v1/namespaces/codefresh/deployments/gitops-operator"} {
		if !sent[want] {
			t.Errorf("%s not sent (sent: %v)", want, sent)
		}
	}
}

// TestChartWorkloadValues holds the table of the chart's values the hints
// name (plan.ChartWorkloadValues) against every line of the real chart
// (0.26, 0.27, 0.30): rendered with every path set to a value of its own,
// each workload carries it; with every removal value set, each such
// workload is gone.
func TestChartWorkloadValues(t *testing.T) {
	onEveryChartLine(t, func(t *testing.T, ref string) {
		base := func() map[string]any {
			return map[string]any{"global": map[string]any{"codefresh": map[string]any{"accountId": "a", "userToken": map[string]any{"token": "x"}},
				"runtime": map[string]any{"name": "rt"}}}
		}
		set := setValuePath
		render := func(v map[string]any) map[string]RuntimePodSpec { return renderedWorkloadsOf(t, ref, v) }
		v := base()
		removals := base()
		for i, name := range plan.ChartWorkloadNames() {
			wv, _ := plan.ChartWorkloadValues(name)
			uid := int64(4000 + i)
			if wv.Resources != "" {
				set(v, wv.Resources, map[string]any{"limits": map[string]any{"cpu": fmt.Sprintf("%dm", 100+i)}})
			}
			if wv.PodSecurityContext != "" {
				set(v, wv.PodSecurityContext, map[string]any{"runAsUser": uid})
			}
			if wv.ContainerSecurityContext != "" {
				set(v, wv.ContainerSecurityContext, map[string]any{"runAsGroup": uid})
			}
			if wv.Remove != "" {
				k, val, _ := strings.Cut(wv.Remove, "=")
				set(removals, k, val == "true")
			}
		}
		got := render(v)
		for i, name := range plan.ChartWorkloadNames() {
			wv, _ := plan.ChartWorkloadValues(name)
			w, ok := got[name]
			if !ok {
				t.Errorf("%s: the chart renders no such workload", name)
				continue
			}
			uid := int64(4000 + i)
			if wv.Resources != "" && w.Spec.Containers[0].Resources.Limits.Cpu().MilliValue() != int64(100+i) {
				t.Errorf("%s: %s does not set its resources: %v", name, wv.Resources, w.Spec.Containers[0].Resources)
			}
			if wv.PodSecurityContext != "" && (w.Spec.SecurityContext == nil || w.Spec.SecurityContext.RunAsUser == nil || *w.Spec.SecurityContext.RunAsUser != uid) {
				t.Errorf("%s: %s does not set its pod securityContext", name, wv.PodSecurityContext)
			}
			if wv.ContainerSecurityContext != "" {
				c := w.Spec.Containers[0].SecurityContext
				if c == nil || c.RunAsGroup == nil || *c.RunAsGroup != uid {
					t.Errorf("%s: %s does not set its container securityContext", name, wv.ContainerSecurityContext)
				}
			}
		}
		gone := render(removals)
		for _, name := range plan.ChartWorkloadNames() {
			if wv, _ := plan.ChartWorkloadValues(name); wv.Remove != "" {
				if _, ok := gone[name]; ok {
					t.Errorf("%s: --set %s does not remove it", name, wv.Remove)
				}
			}
		}
	})
}

// setValuePath sets the dotted path of v to val, making the maps on the
// way.
func setValuePath(v map[string]any, path string, val any) {
	keys := strings.Split(path, ".")
	m := v
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = val
}

// renderedWorkloadsOf renders the chart at ref with values v and returns
// its workloads by name.
func renderedWorkloadsOf(t *testing.T, ref string, v map[string]any) map[string]RuntimePodSpec {
	t.Helper()
	k := newKit(t).withChart(ref).with(Inputs{Values: v, RenderValues: v})
	env := k.env()
	r, err := env.Rendering(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ws, err := renderedWorkloads(env, r)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]RuntimePodSpec{}
	for _, w := range ws {
		out[w.Name] = w
	}
	return out
}
