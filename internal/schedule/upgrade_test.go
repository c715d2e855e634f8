package schedule

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// deployment is Deployment name of the release: replicas copies of a pod
// of image requesting cpu, rolled by strategy (nil: the default
// RollingUpdate, 25% each).
func deployment(name, image, cpu string, replicas int, strategy *appsv1.DeploymentStrategy) PodSpec {
	p := onePod(name, cpu, "256Mi")
	p.Replicas, p.Kind = replicas, "Deployment"
	p.Spec.Containers[0].Image = image
	p.Template = corev1.PodTemplateSpec{Spec: p.Spec}
	d := &appsv1.Deployment{}
	if strategy != nil {
		d.Spec.Strategy = *strategy
	}
	p.Deployment = d
	return p
}

func maxUnavailable(n int) *appsv1.DeploymentStrategy {
	v := intstr.FromInt(n)
	return &appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &v}}
}

func TestSurgeBesideOld(t *testing.T) {
	for _, c := range []struct {
		name string
		spec PodSpec
		want int
	}{
		{"default, 1 replica: maxUnavailable 25% rounds down to 0, maxSurge up to 1", deployment("a", "i", "1", 1, nil), 1},
		{"default, 4 replicas: maxUnavailable 1", deployment("a", "i", "1", 4, nil), 0},
		{"maxUnavailable 1", deployment("a", "i", "1", 1, maxUnavailable(1)), 0},
		{"Recreate", deployment("a", "i", "1", 2, &appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}), 0},
		{"not a Deployment", onePod("s", "1", "1Mi"), 0},
	} {
		if got := SurgeBesideOld(c.spec); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// TestPlanUpgrade sorts the target's workloads against the deployed ones:
// unchanged (kept, more replicas added), changed (freed and placed after,
// its surge first), new, gone (freed), and the upgrade's hooks.
func TestPlanUpgrade(t *testing.T) {
	current := []PodSpec{
		deployment("same", "i:1", "100m", 2, nil),
		deployment("grows", "i:1", "100m", 1, nil),
		deployment("changed", "i:1", "100m", 1, nil),
		deployment("gone", "i:1", "100m", 1, nil),
	}
	preHook, postHook, deleteHook := onePod("pre", "1", "1Mi"), onePod("post", "1", "1Mi"), onePod("del", "1", "1Mi")
	preHook.Kind, preHook.Hook = "Job", "pre-install,pre-upgrade"
	postHook.Kind, postHook.Hook = "Job", "post-upgrade"
	deleteHook.Kind, deleteHook.Hook = "Job", "pre-delete"
	target := []PodSpec{
		deployment("same", "i:1", "100m", 2, nil),
		deployment("grows", "i:1", "100m", 3, nil),
		deployment("changed", "i:2", "100m", 1, nil),
		deployment("new", "i:1", "100m", 1, nil),
		preHook, postHook, deleteHook,
	}
	p := PlanUpgrade(target, current, "rt")
	names := func(specs []PodSpec) (out []string) {
		for _, s := range specs {
			out = append(out, s.Name+"×"+string(rune('0'+s.Replicas)))
		}
		return out
	}
	if got := names(p.PreHooks); len(got) != 1 || got[0] != "pre×1" {
		t.Errorf("pre-upgrade hooks %q", got)
	}
	if got := names(p.After); len(got) != 4 || got[0] != "grows×2" || got[1] != "changed×1" || got[2] != "new×1" || got[3] != "post×1" {
		t.Errorf("after %q", got)
	}
	if got := names(p.Surge); len(got) != 1 || got[0] != "changed×1" {
		t.Errorf("surge %q", got)
	}
	if p.Kept != 3 || len(p.Freed) != 2 || !p.Freed["Deployment/rt/changed"] || !p.Freed["Deployment/rt/gone"] {
		t.Errorf("kept %d, freed %v", p.Kept, p.Freed)
	}
	if WorkloadKey("Deployment", "", "a", "rt") != "Deployment/rt/a" || WorkloadKey("Job", "x", "a", "rt") != "Job/x/a" {
		t.Error("WorkloadKey")
	}
}

// TestSimulateRollouts: a's new pod fits nowhere beside the old pods, b's
// does (on n1, first fit); once b's old pod leaves n2, n2 holds a's, and
// a's old pod leaves n1. With b needing more (on n2, beside its old pod),
// a stalls.
func TestSimulateRollouts(t *testing.T) {
	nodes := []cluster.Node{schedNode("n1", "2", "4Gi", nil), schedNode("n2", "2", "4Gi", nil)}
	own := []cluster.BoundPod{
		{Namespace: "rt", Name: "a-1", Node: "n1", OwnerKind: "Deployment", OwnerName: "a", MilliCPU: 1500, MemoryBytes: 256 << 20},
		{Namespace: "rt", Name: "b-1", Node: "n2", OwnerKind: "Deployment", OwnerName: "b", MilliCPU: 1000, MemoryBytes: 256 << 20},
	}
	bound := map[string]cluster.NodeUsage{"n1": {MilliCPU: 1500, MemoryBytes: 256 << 20, Pods: 1}, "n2": {MilliCPU: 1000, MemoryBytes: 256 << 20, Pods: 1}}
	surge := []PodSpec{deployment("a", "new", "1500m", 1, nil), deployment("b", "new", "400m", 1, nil)}
	stuck, at := SimulateRollouts(surge, nodes, bound, own, "rt")
	if len(stuck) != 0 {
		t.Fatalf("stuck %+v, want both rolled", stuck)
	}
	if at["n1"].MilliCPU != 400 || at["n2"].MilliCPU != 1500 || at["n2"].Pods != 1 || bound["n2"].MilliCPU != 1000 {
		t.Errorf("usage after the rollouts %+v (bound %+v left as it was)", at, bound)
	}
	surge[1] = deployment("b", "new", "600m", 1, nil)
	stuck, at = SimulateRollouts(surge, nodes, bound, own, "rt")
	if len(stuck) != 1 || stuck[0].Name != "a" || stuck[0].Replicas != 1 || at["n2"].MilliCPU != 600 {
		t.Fatalf("stuck %+v at %+v, want a stalled beside b's new pod", stuck, at)
	}
	freed, n := FreeOwnPods(bound, own, map[string]bool{"Deployment/rt/a": true}, "rt")
	if n != 1 || freed["n1"].MilliCPU != 0 || freed["n1"].Pods != 0 || freed["n2"] != bound["n2"] {
		t.Errorf("freed %d: %+v", n, freed)
	}
}
