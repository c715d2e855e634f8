package argocd

import (
	"reflect"
	"testing"
)

// TestPruned: a sync deletes an object the target no longer renders only
// with prune, never one annotated Prune=false, never one without the
// Application's tracking mark; helm.sh/resource-policy is not read.
func TestPruned(t *testing.T) {
	s := &Sync{SyncBase: SyncBase{Prune: true, TrackingApp: "rt1", NoPrune: map[string]bool{MatchKey("apiextensions.k8s.io", "CustomResourceDefinition", "", "rollouts.argoproj.io"): true}}}
	tracked := map[string]string{TrackingAnnotation: "rt1:apps/Deployment:codefresh/argo-rollouts", "helm.sh/resource-policy": "keep"}
	if s.Pruned("apiextensions.k8s.io", "CustomResourceDefinition", "", "rollouts.argoproj.io", nil, tracked) {
		t.Error("Prune=false is pruned")
	}
	if !s.Pruned("apps", "Deployment", "", "argo-rollouts", nil, tracked) {
		t.Error("prune: true does not prune a tracked object (helm.sh/resource-policy: keep)")
	}
	if s.Pruned("apps", "Deployment", "", "argo-rollouts", nil, map[string]string{"helm.sh/resource-policy": "keep"}) {
		t.Error("an object without the tracking mark is pruned")
	}
	if s.Pruned("apps", "Deployment", "", "argo-rollouts", nil, map[string]string{TrackingAnnotation: "other:apps/Deployment:codefresh/argo-rollouts"}) {
		t.Error("another Application's object is pruned")
	}
	s.TrackingMethod = "label"
	if !s.Pruned("apps", "Deployment", "", "argo-rollouts", map[string]string{DefaultInstanceLabelKey: "rt1"}, nil) {
		t.Error("label tracking: the labelled object is not pruned")
	}
	s.TrackingMethod = ""
	s.Prune = false
	if s.Pruned("apps", "Deployment", "", "argo-rollouts", nil, tracked) {
		t.Error("without prune, pruned")
	}
	for _, c := range []struct {
		ann  string
		want bool
	}{
		{"Prune=false", true},
		{" ServerSideApply=true, prune=False ", true},
		{"Prune=true", false},
		{"", false},
	} {
		if got := PruneDisabled(map[string]string{SyncOptionsAnnotation: c.ann, "helm.sh/resource-policy": "keep"}); got != c.want {
			t.Errorf("PruneDisabled(%q) = %v", c.ann, got)
		}
	}
	if PruneDisabled(map[string]string{"helm.sh/resource-policy": "keep"}) {
		t.Error("helm.sh/resource-policy: keep keeps an object out of Argo CD's prune")
	}
}

// TestHooks: the phases a sync runs an object in, Argo CD's annotation
// before Helm's; what is a hook; which Helm hooks run on every sync.
func TestHooks(t *testing.T) {
	cases := []struct {
		ann   map[string]string
		types []string
		hook  bool
	}{
		{map[string]string{HelmHookAnnotation: "pre-install,pre-upgrade"}, []string{PreSync, PreSync}, true},
		{map[string]string{HelmHookAnnotation: "post-install"}, []string{PostSync}, true},
		{map[string]string{HelmHookAnnotation: "pre-delete"}, nil, true},
		{map[string]string{HelmHookAnnotation: "test"}, nil, true},
		{map[string]string{HelmHookAnnotation: "crd-install"}, nil, false},
		{map[string]string{HookAnnotation: "Sync", HelmHookAnnotation: "pre-install"}, []string{"Sync"}, true},
		{map[string]string{HookAnnotation: "PreSync, SyncFail"}, []string{PreSync, "SyncFail"}, true},
		{map[string]string{HookAnnotation: "Skip"}, []string{"Skip"}, false},
		{map[string]string{HookAnnotation: "Bogus", HelmHookAnnotation: "post-upgrade"}, []string{PostSync}, true},
		{map[string]string{}, nil, false},
	}
	for _, c := range cases {
		if got := HookTypes(c.ann); !reflect.DeepEqual(got, c.types) {
			t.Errorf("HookTypes(%v) = %v, want %v", c.ann, got, c.types)
		}
		if got := IsHook(c.ann); got != c.hook {
			t.Errorf("IsHook(%v) = %v", c.ann, got)
		}
	}
	for hooks, want := range map[string]bool{"pre-install": true, "pre-upgrade": true, "post-install,pre-install": true, "post-upgrade": false, "pre-delete": false} {
		if RunsOnEverySync(hooks) != want {
			t.Errorf("RunsOnEverySync(%q) = %v", hooks, !want)
		}
	}
}
