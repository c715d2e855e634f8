package checks

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func node(name, cpu, mem string, mut ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	for _, m := range mut {
		m(n)
	}
	return n
}

func cordoned(n *corev1.Node) { n.Spec.Unschedulable = true }

func notReady(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }

func tainted(effect corev1.TaintEffect) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: effect}} }
}

func TestNodeResources(t *testing.T) {
	tests := []struct {
		name    string
		nodes   []runtime.Object
		want    Status
		wantMsg []string
	}{
		{"one big node", []runtime.Object{node("small", "1", "2Gi"), node("big", "4", "16Gi")}, StatusPass, []string{"1 of 2 nodes qualify", "big"}},
		{"exactly the minimum", []runtime.Object{node("edge", "2", "5000M")}, StatusPass, []string{"edge"}},
		{"memory just short", []runtime.Object{node("n", "2", "4999M")}, StatusFail, []string{"best: n", "memory 4999M"}},
		{"cpu short", []runtime.Object{node("n", "1500m", "8Gi")}, StatusFail, []string{"cpu 1500m"}},
		{"big node cordoned", []runtime.Object{node("small", "1", "2Gi"), node("big", "8", "32Gi", cordoned)}, StatusFail, []string{"1 cordoned", "best: small"}},
		{"big node NoSchedule", []runtime.Object{node("big", "8", "32Gi", tainted(corev1.TaintEffectNoSchedule))}, StatusFail, []string{"no Ready, schedulable node", "1 NoSchedule-tainted"}},
		{"PreferNoSchedule still counts", []runtime.Object{node("big", "8", "32Gi", tainted(corev1.TaintEffectPreferNoSchedule))}, StatusPass, []string{"big"}},
		{"big node NotReady", []runtime.Object{node("big", "8", "32Gi", notReady)}, StatusFail, []string{"1 not Ready"}},
		{"no nodes", nil, StatusFail, []string{"no nodes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _ := fakeEnv(t, "v1.30.0", tt.nodes...)
			got := runThrough(t, NodeResources(), env)
			if got.Status != tt.want {
				t.Fatalf("node-resources = %s %q; want %s", got.Status, got.Message, tt.want)
			}
			for _, w := range tt.wantMsg {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q does not contain %q", got.Message, w)
				}
			}
		})
	}
}
