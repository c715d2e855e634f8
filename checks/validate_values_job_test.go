package checks

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func failedJob(name string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "codefresh", Name: name, UID: "uid-" + "x"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: name, Image: "quay.io/codefresh/gitops-runtime-installer"}}}}},
		Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{
			Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}}},
	}
}

// TestValidateValuesJobLogTail covers the log path the e2e tests cannot
// reach (no kubelet there): the fake clientset serves pods/log as "fake logs".
func TestValidateValuesJobLogTail(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "node-1"}, ObjectMeta: metav1.ObjectMeta{Namespace: "codefresh", Name: "validate-values-abcde",
		Labels: map[string]string{"batch.kubernetes.io/job-name": "validate-values"}}}
	env, kube := postEnv(t, Inputs{}, []runtime.Object{failedJob("validate-values"), pod})
	r, err := runValidateValuesJob(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusFail || !strings.Contains(r.Message, "BackoffLimitExceeded") ||
		!strings.Contains(r.Message, "last 1 line of pod validate-values-abcde:\n  fake logs") {
		t.Fatalf("result = %+v", r)
	}
	if !strings.Contains(r.Hint, "kubectl logs jobs/validate-values -n codefresh --tail=50") {
		t.Fatalf("hint = %q", r.Hint)
	}
	var sawLog bool
	for _, a := range kube.Actions() {
		if a.GetResource().Resource == "pods" && a.GetSubresource() == "log" {
			sawLog = true
		}
	}
	if !sawLog {
		t.Fatal("no pods/log request")
	}
}

func TestValidateValuesJobPodGone(t *testing.T) {
	env, _ := postEnv(t, Inputs{}, []runtime.Object{failedJob("validate-usage")})
	env.Mode = ModePost
	r := runThrough(t, ValidateValuesJob(), env)
	if r.Status != StatusFail || !strings.Contains(r.Message, "Job validate-usage failed") ||
		!strings.Contains(r.Message, "pod is gone") || !strings.Contains(r.Message, "kubectl logs jobs/validate-usage -n codefresh --tail=50") {
		t.Fatalf("= %+v", r)
	}
}

func TestValidateValuesJobPasses(t *testing.T) {
	env, _ := postEnv(t, Inputs{}, nil)
	env.Mode = ModePost
	if r := runThrough(t, ValidateValuesJob(), env); r.Status != StatusPass {
		t.Fatalf("= %+v", r)
	}
}

func TestValidateValuesJobPodNeverScheduled(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "codefresh", Name: "validate-values-q",
		Labels: map[string]string{"job-name": "validate-values"}}}
	env, kube := postEnv(t, Inputs{}, []runtime.Object{failedJob("validate-values"), pod})
	r, err := runValidateValuesJob(context.Background(), env)
	if err != nil || r.Status != StatusFail || !strings.Contains(r.Message, "never scheduled to a node") || !strings.Contains(r.Message, "kubectl logs jobs/validate-values") {
		t.Fatalf("= %+v, %v", r, err)
	}
	for _, a := range kube.Actions() {
		if a.GetSubresource() == "log" {
			t.Fatal("asked for the log of a pod that never ran")
		}
	}
}

// TestValidateValuesJobPodRefused: a running hook Job whose pod the API
// server refuses (the Job controller's FailedCreate event) fails, naming
// the policy as the admission checks do before the install.
func TestValidateValuesJobPodRefused(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "codefresh", Name: "validate-values"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "validate-values"}}}}}}
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "codefresh", Name: "validate-values.1"}, Type: corev1.EventTypeWarning, Reason: "FailedCreate", Count: 4,
		InvolvedObject: corev1.ObjectReference{Kind: "Job", Namespace: "codefresh", Name: "validate-values"},
		Message:        `Error creating: pods "validate-values-x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true (pod or container "validate-values" must set securityContext.runAsNonRoot=true)`}
	env, _ := postEnv(t, Inputs{}, []runtime.Object{job, ev})
	env.Mode = ModePost
	r := runThrough(t, ValidateValuesJob(), env)
	outcome{StatusFail, []string{"Job validate-values has no pod", "PodSecurity restricted:latest", "x4", "installer.skipValidation=true"}}.expect(t, r)
}
