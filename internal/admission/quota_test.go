package admission

import (
	"testing"

	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

func podWith(cpuLimit string) *corev1.Pod {
	c := corev1.Container{Name: "c"}
	if cpuLimit != "" {
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuLimit)}
	}
	return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
}

// quotaPlan is a plan with a pre hook Job, a post hook Job, a Deployment
// of 2 pods, and their pods as the dry runs answered them.
func quotaPlan(t *testing.T) (*Plan, *PodRuns) {
	r := &chart.Rendering{
		Objects: []chart.Object{obj(t, "v1", "ConfigMap", "config", "", nil), obj(t, "v1", "ConfigMap", "more", "", nil)},
		Hooks: []chart.Object{
			hook(obj(t, "batch/v1", "Job", "validate", "", nil), 0, release.HookPreInstall),
			hook(obj(t, "v1", "ConfigMap", "kept", "", nil), 0, release.HookPreInstall),
			hook(obj(t, "v1", "ConfigMap", "deleted", "", nil), 0, release.HookPreInstall),
			hook(obj(t, "batch/v1", "Job", "report", "", nil), 0, release.HookPostInstall),
		},
	}
	r.Hooks[2].DeletePolicies = []string{string(release.HookSucceeded)}
	p, err := NewPlan(Input{Rendering: r, Namespace: "codefresh", NamespaceExists: true, API: testAPI(), Workloads: []Workload{
		{Kind: "Deployment", Name: "operator", Namespace: "codefresh", Pods: 2},
		{Kind: "Job", Name: "validate", Namespace: "codefresh", Pods: 1},
		{Kind: "Job", Name: "report", Namespace: "codefresh", Pods: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// In plan order: the hook Jobs first.
	pods := []*corev1.Pod{podWith("500m"), podWith(""), podWith("1")}
	return p, &PodRuns{Plan: p, Pods: pods, Verdicts: make([]Verdict, len(pods))}
}

// TestQuotaPhases: each pre hook Job's pod alone with the pre hooks'
// objects, then the release's pods with the objects (a pre hook's object
// counted unless it is deleted when it succeeds), then each post hook's
// pod beside them.
func TestQuotaPhases(t *testing.T) {
	p, runs := quotaPlan(t)
	phases := QuotaPhases(p, runs)
	if len(phases) != 3 {
		t.Fatalf("%d phases, want 3: %+v", len(phases), phases)
	}
	pre, main, post := phases[0], phases[1], phases[2]
	if pre.Kind != PhasePreHook || pre.Hook.Name != "validate" || len(pre.Pods) != 1 || !pre.Helm || pre.Objects["configmaps"] != 2 || pre.Objects["jobs.batch"] != 1 {
		t.Errorf("pre phase %+v", pre)
	}
	if main.Kind != PhaseRelease || main.Helm || len(main.Pods) != 1 || main.Pods[0].Count != 2 || main.Objects["configmaps"] != 3 || main.Objects["jobs.batch"] != 1 {
		t.Errorf("release phase %+v", main)
	}
	if post.Kind != PhasePostHook || post.Hook.Name != "report" || len(post.Pods) != 2 || !post.Helm {
		t.Errorf("post phase %+v", post)
	}
}

// TestExceeded: a phase's sum beyond a quota's room (hard minus used) is
// named with its figures; objects are Helm's to meet, the release's pods
// their controllers'.
func TestExceeded(t *testing.T) {
	p, runs := quotaPlan(t)
	phases := QuotaPhases(p, runs)
	q := cluster.Quota{Name: "compute",
		Hard: corev1.ResourceList{"limits.cpu": resource.MustParse("3"), "count/configmaps": resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("10")},
		Used: corev1.ResourceList{"limits.cpu": resource.MustParse("1500m"), "count/configmaps": resource.MustParse("2")}}
	ex := Exceeded(q, phases)
	if len(ex) != 4 {
		t.Fatalf("%d excesses, want 4: %+v", len(ex), ex)
	}
	// The pre hook's pod alone fits; the release's pods, 2 × 1 CPU, do not
	// fit the 1.5 left, nor its 3 ConfigMaps the 2 left.
	if e := ex[0]; e.Phase.Kind != PhaseRelease || e.Resource != "count/configmaps" || e.Need.String() != "3" || e.Room.String() != "2" || !e.HelmMeets {
		t.Errorf("excess 0: %+v", e)
	}
	if e := ex[1]; e.Phase.Kind != PhaseRelease || e.Resource != "limits.cpu" || e.Need.String() != "2" || e.Room.String() != "1500m" || e.HelmMeets {
		t.Errorf("excess 1: %+v", e)
	}
	// The post hook's phase: the same, and Helm meets both (it waits
	// for the hook).
	if e := ex[2]; e.Phase.Kind != PhasePostHook || e.Resource != "count/configmaps" || !e.HelmMeets {
		t.Errorf("excess 2: %+v", e)
	}
	if e := ex[3]; e.Phase.Kind != PhasePostHook || e.Resource != "limits.cpu" || e.Hard.String() != "3" || e.Used.String() != "1500m" || !e.HelmMeets {
		t.Errorf("excess 3: %+v", e)
	}
}

// TestQuotaSelects: a quota's scopes select the pods it counts.
func TestQuotaSelects(t *testing.T) {
	deadline := int64(60)
	terminating := podWith("1")
	terminating.Spec.ActiveDeadlineSeconds = &deadline
	bestEffort := podWith("")
	bestEffort.Spec.PriorityClassName = "low"
	cases := []struct {
		name string
		q    cluster.Quota
		pod  *corev1.Pod
		want bool
	}{
		{"no scope", cluster.Quota{}, podWith("1"), true},
		{"Terminating", cluster.Quota{Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}}, terminating, true},
		{"NotTerminating", cluster.Quota{Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}}, terminating, false},
		{"BestEffort", cluster.Quota{Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}}, bestEffort, true},
		{"NotBestEffort", cluster.Quota{Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotBestEffort}}, bestEffort, false},
		{"PriorityClass In", cluster.Quota{Selector: []cluster.QuotaScope{{Scope: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Names: []string{"low"}}}}, bestEffort, true},
		{"PriorityClass NotIn", cluster.Quota{Selector: []cluster.QuotaScope{{Scope: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpNotIn, Names: []string{"low"}}}}, bestEffort, false},
		{"PriorityClass DoesNotExist", cluster.Quota{Selector: []cluster.QuotaScope{{Scope: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpDoesNotExist}}}, podWith("1"), true},
	}
	for _, tc := range cases {
		if got := quotaSelects(tc.q, tc.pod); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if !objectResource("count/configmaps") || !objectResource(corev1.ResourceSecrets) || objectResource("count/pods") || objectResource("limits.cpu") {
		t.Error("objectResource")
	}
}
