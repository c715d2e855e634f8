package checks

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A pod on a node that stopped reporting is "not ready, node stopped
// reporting", not Running; repeated events are one line with their count.
func TestRuntimeWorkloadsSilentNodeAndRepeatedEvents(t *testing.T) {
	ns := DefaultNamespace
	one := int32(1)
	labels := map[string]string{"app": "cap-app-proxy"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cap-app-proxy", Annotations: map[string]string{"meta.helm.sh/release-name": DefaultReleaseName}},
		Spec:       appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status."}}}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cap-app-proxy-abc", Labels: labels},
		Spec:       corev1.PodSpec{NodeName: "n1"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "cap-app-proxy", Ready: true}}},
	}
	pending := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cap-app-proxy-def", Labels: labels},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: "Unschedulable", Message: "0/1 nodes are available: 1 Insufficient memory."}}},
	}
	ev := func(name string, count int32) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "cap-app-proxy-def"},
			Type:           corev1.EventTypeWarning, Reason: "FailedScheduling", Message: "0/1 nodes are available: 1 Insufficient memory.",
			Count: count, LastTimestamp: metav1.NewTime(time.Now())}
	}
	env, _ := postEnv(t, Inputs{}, []runtime.Object{dep, node, pod, pending, ev("e1", 1), ev("e2", 2)})
	res, err := runRuntimeWorkloads(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusFail {
		t.Fatalf("status %s: %s", res.Status, res.Message)
	}
	for _, want := range []string{
		"pod cap-app-proxy-abc: not ready, node n1 stopped reporting (Ready Unknown)",
		"event Pod/cap-app-proxy-def FailedScheduling (x3): 0/1 nodes are available: 1 Insufficient memory.",
	} {
		if !strings.Contains(res.Message, want) {
			t.Errorf("message lacks %q:\n%s", want, res.Message)
		}
	}
	if n := strings.Count(res.Message, "FailedScheduling"); n != 1 {
		t.Errorf("FailedScheduling printed %d times:\n%s", n, res.Message)
	}
}
