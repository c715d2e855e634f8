package argocd

import (
	"reflect"
	"testing"
)

// TestStatusReaders: the resources out of sync and unhealthy, a failed
// operation's failed hooks, and the error conditions.
func TestStatusReaders(t *testing.T) {
	a := &Application{Resources: []Resource{
		{Kind: "ConfigMap", Name: "a", Status: "Synced"},
		{Kind: "Deployment", Name: "b", Status: "OutOfSync", Health: "Progressing"},
		{Kind: "Service", Name: "c", Status: "OutOfSync", Health: "Healthy"},
		{Kind: "Secret", Name: "d", Status: "Synced"},
	}}
	if got := a.OutOfSync(); len(got) != 2 || got[0].Name != "b" || got[1].Name != "c" {
		t.Errorf("OutOfSync %+v", got)
	}
	if got := a.Unhealthy(); len(got) != 1 || got[0].Name != "b" {
		t.Errorf("Unhealthy %+v", got)
	}
	var none *Operation
	if none.Failed() || none.Running() || none.FailedHooks() != nil {
		t.Error("no operation: not failed, not running, no hooks")
	}
	op := &Operation{Phase: "Error", Results: []ResourceResult{
		{Kind: "Job", Name: "ok", HookType: "PreSync", HookPhase: "Succeeded"},
		{Kind: "Job", Name: "failed", HookType: "PreSync", HookPhase: "Failed"},
		{Kind: "Job", Name: "errored", HookType: "PostSync", HookPhase: "Error"},
		{Kind: "Pod", Name: "refused", HookType: "Sync", Status: "SyncFailed"},
		{Kind: "Deployment", Name: "object", Status: "SyncFailed"},
	}}
	var names []string
	for _, r := range op.FailedHooks() {
		names = append(names, r.Name)
	}
	if !op.Failed() || op.Running() || !reflect.DeepEqual(names, []string{"failed", "errored", "refused"}) {
		t.Errorf("failed %v, hooks %v", op.Failed(), names)
	}
	if (&Operation{Phase: "Running"}).Failed() || !(&Operation{Phase: "Running"}).Running() {
		t.Error("a running operation")
	}
	running := &Operation{Phase: "Running", Results: []ResourceResult{
		{Kind: "Job", Name: "done", HookType: PreSync, HookPhase: "Succeeded"},
		{Kind: "Job", Name: "runs", HookType: PreSync, HookPhase: "Running"},
		{Kind: "Job", Name: "created", HookType: PreSync},
		{Kind: "ConfigMap", Name: "object", Status: "Synced"},
	}}
	var hooks []string
	for _, r := range running.RunningHooks() {
		hooks = append(hooks, r.Name)
	}
	if !reflect.DeepEqual(hooks, []string{"runs", "created"}) || (&Operation{Phase: "Failed", Results: running.Results}).RunningHooks() != nil {
		t.Errorf("running hooks %v", hooks)
	}
	for typ, isErr := range map[string]bool{"ComparisonError": true, "SyncError": true, "InvalidSpecError": true, "OrphanedResourceWarning": false, "ExcludedResourceWarning": false} {
		if (Condition{Type: typ}).IsError() != isErr {
			t.Errorf("%s: IsError %v", typ, !isErr)
		}
	}
}

// The causes Argo CD 3 writes in the Application's health message, in its
// own format (controller/health.go formatHealthCauses).
func TestHealthCauses(t *testing.T) {
	a := &Application{Health: "Degraded", HealthMessage: "Caused by autoscaling/HorizontalPodAutoscaler:codefresh/argo-gateway, Service:codefresh/internal-router, apiextensions.k8s.io/CustomResourceDefinition:rollouts.argoproj.io and 2 more"}
	got := a.HealthCauses()
	want := []Resource{
		{Group: "autoscaling", Kind: "HorizontalPodAutoscaler", Namespace: "codefresh", Name: "argo-gateway", Health: "Degraded"},
		{Kind: "Service", Namespace: "codefresh", Name: "internal-router", Health: "Degraded"},
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "rollouts.argoproj.io", Health: "Degraded"},
	}
	if len(got) != len(want) {
		t.Fatalf("%+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cause %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, msg := range []string{"", "Deployment is progressing", "Caused by nothing"} {
		if c := (&Application{HealthMessage: msg}).HealthCauses(); len(c) != 0 {
			t.Errorf("%q: causes %+v", msg, c)
		}
	}
}
