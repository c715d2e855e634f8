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

// TestRuntimeWorkloads: the release's workloads in the runtime namespace,
// their pods' reasons when one is down, and the codefresh-token Secret.
func TestRuntimeWorkloads(t *testing.T) {
	post := Inputs{}
	proxy := func(available int) string {
		return controllerYAML("Deployment", "codefresh", "cap-app-proxy", "quay.io/codefresh/cap-app-proxy:1.0", nil, nil, available)
	}
	token := "apiVersion: v1\nkind: Secret\nmetadata: {namespace: codefresh, name: codefresh-token}\n"
	crashing := `apiVersion: v1
kind: Pod
metadata: {namespace: codefresh, name: cap-app-proxy-abc, labels: {app: cap-app-proxy}}
spec: {containers: [{name: c, image: x}]}
status:
  phase: Running
  containerStatuses:
  - name: c
    restartCount: 7
    state: {waiting: {reason: CrashLoopBackOff}}
    lastState: {terminated: {exitCode: 1}}
`
	tests := []struct {
		name string
		yaml []string
		want outcome
	}{
		{"all available", []string{proxy(1), token}, outcome{StatusPass, []string{"all 1 runtime workloads in namespace codefresh have their replicas available"}}},
		{"available, no codefresh-token", []string{proxy(1)}, outcome{StatusWarn, []string{"Secret codefresh-token is missing", "kubectl logs deploy/cap-app-proxy -n codefresh"}}},
		{"down, crash looping", []string{proxy(0), token, crashing}, outcome{StatusFail, []string{"1 of 1 runtime workloads not available", "Deployment/cap-app-proxy: 0/1 available", "pod cap-app-proxy-abc", "CrashLoopBackOff"}}},
		{"down, no pods", []string{proxy(0), token}, outcome{StatusFail, []string{"no pods (the controller could not create them"}}},
		{"not installed", []string{controllerYAML("Deployment", "elsewhere", "cap-app-proxy", "x", nil, nil, 1)},
			outcome{StatusFail, []string{"no Deployment or StatefulSet of release cf-gitops-runtime in namespace codefresh"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.expect(t, newKit(t, tt.yaml...).with(post).inMode(ModePost).run(RuntimeWorkloads()))
		})
	}
	// The warning's first line says it is expected until the runtime registers.
	res := newKit(t, proxy(1)).with(post).inMode(ModePost).run(RuntimeWorkloads())
	if first := strings.SplitN(res.Message, "\n", 2)[0]; !strings.Contains(first, "Secret codefresh-token is missing") || !strings.Contains(first, "expected until the runtime registers with the platform") {
		t.Errorf("first line %q does not say the missing Secret is expected until the runtime registers", first)
	}
}

// TestRuntimeWorkloadsPodsRefused: a Deployment without pods whose
// ReplicaSet's FailedCreate events say why names the policy that refuses
// them, and the hint says what fixes it.
func TestRuntimeWorkloadsPodsRefused(t *testing.T) {
	ns := DefaultNamespace
	one := int32(1)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cap-app-proxy", Annotations: map[string]string{"meta.helm.sh/release-name": DefaultReleaseName}},
		Spec:       appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cap-app-proxy"}}},
	}
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rs.1"},
		InvolvedObject: corev1.ObjectReference{Kind: "ReplicaSet", Namespace: ns, Name: "cap-app-proxy-7d9f"},
		Type:           corev1.EventTypeWarning, Reason: "FailedCreate", Count: 7, LastTimestamp: metav1.NewTime(time.Now()),
		Message: `Error creating: pods "cap-app-proxy-7d9f-x" is forbidden: failed quota: compute: must specify limits.cpu for: cap-app-proxy`}
	env, _ := postEnv(t, Inputs{}, []runtime.Object{dep, ev})
	res, err := runRuntimeWorkloads(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	outcome{StatusFail, []string{"refused by ResourceQuota compute", "LimitRange"}}.expect(t, res)
}
