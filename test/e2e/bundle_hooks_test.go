package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestBundlePostKeepsTheHookJob: a --post --bundle run while the failed
// validate-values Job and its pod exist (an event about the pod echoes the
// user token); then the Job and its pod are deleted, as their TTL would;
// `replay --hooks` still shows the Job, its condition, its pod, the
// container's state, why its log was not read (on this bare cluster no
// node serves pod logs: TestBundlePostKeepsTheHookLog reads a real one) and
// the event, masked; the replay of the checks equals the live
// run; no planted credential is in any byte of the bundle.
func TestBundlePostKeepsTheHookJob(t *testing.T) {
	testcluster.Parallel(t)
	// Bare: the Job and its pod are written by hand, in the state the Job
	// controller leaves a failed hook, and no controller changes them.
	c := testcluster.StartBare(t)
	const ns = "codefresh"
	c.CreateNamespace(t, ns)
	job, err := c.Kube.BatchV1().Jobs(ns).Create(bg, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "validate-values"},
		Spec: batchv1.JobSpec{BackoffLimit: ptr(int32(0)), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "validate-values", Image: "quay.io/codefresh/gitops-runtime-installer:0.30.0"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	job.Status = batchv1.JobStatus{StartTime: &now, Failed: 1, Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
		{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
	}}
	if _, err := c.Kube.BatchV1().Jobs(ns).UpdateStatus(bg, job, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	podWith(t, c, ns, "validate-values-x7k2p", "validate-values", "node-1", map[string]string{"batch.kubernetes.io/job-name": "validate-values", "job-name": "validate-values"},
		corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "validate-values", Image: "x",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}}}}})
	warningEvent(t, c, ns, "Pod", "validate-values-x7k2p", "BackOff", "validation failed with token: e2e-token")

	file := filepath.Join(t.TempDir(), "post.tgz")
	live, liveDoc := post(t, c, "--only=validate-values-job", "--bundle", file)
	wantCode(t, live, cli.ExitFailed)
	wantStatus(t, liveDoc, "validate-values-job", "fail", "Job validate-values failed (BackoffLimitExceeded")

	// The TTL: Kubernetes deletes the Job and its pod.
	if err := c.Kube.BatchV1().Jobs(ns).Delete(bg, "validate-values", metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Kube.CoreV1().Pods(ns).Delete(bg, "validate-values-x7k2p", metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
		t.Fatal(err)
	}

	res := testcluster.Run(t, nil, "replay", file, "--hooks")
	wantCode(t, res, 0)
	for _, want := range []string{
		"Job codefresh/validate-values: ", "Failed (BackoffLimitExceeded: Job has reached the specified backoff limit)",
		"Pod validate-values-x7k2p: Failed on node-1",
		"container validate-values: terminated: Error, exit code 1",
		"log not read: ",
		"event Pod/validate-values-x7k2p Warning BackOff: validation failed with token: ***",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("replay --hooks lacks %q:\n%s", want, res.Stdout)
		}
	}
	js := testcluster.Run(t, nil, "replay", file, "--hooks", "-o", "json")
	var hooks []struct {
		Name string `json:"name"`
		Pods []struct {
			Name string `json:"name"`
		} `json:"pods"`
	}
	if err := json.Unmarshal([]byte(js.Stdout), &hooks); err != nil || len(hooks) != 1 || hooks[0].Name != "validate-values" || len(hooks[0].Pods) != 1 {
		t.Errorf("replay --hooks -o json: %v\n%s", err, js.Stdout)
	}
	rep := testcluster.Run(t, nil, "replay", file)
	if rep.Code != live.Code {
		t.Errorf("replay exit %d, live %d\n%s", rep.Code, live.Code, rep.Stderr)
	}
	sameReport(t, liveDoc, rep.JSON(t))
	if !strings.Contains(rep.Stderr, "holds 1 validation hook Job(s)") || !strings.Contains(rep.Stderr, "--hooks") {
		t.Errorf("replay does not point at --hooks: %q", rep.Stderr)
	}
	if body := untarred(t, file); strings.Contains(body, "e2e-token") {
		t.Error("the planted token is in the bundle")
	}
}

// TestBundlePostKeepsTheHookLog: on a full cluster, the chart's two
// validation Jobs, validate-values and validate-usage, each with a pod kwok
// fails (exit 1, BackoffLimitExceeded) and a container log kwok serves
// (ServeLogs) the way a kubelet does; validate-values' log holds a JWT and a
// password, as a hook's debug output can. A --post --bundle run quotes each
// Job's log under that Job, masked; the bundle keeps them, masked, under
// hooks/; after the Jobs and their pods are deleted `replay --hooks` prints
// them, masked, each under its own pod; neither planted value is in any byte
// of the bundle or of the output; the replay of the checks equals the live run.
func TestBundlePostKeepsTheHookLog(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.Start(t)
	c.AddNode(t, testcluster.NodeSpec{Name: "worker-1", CPU: "4", Memory: "8Gi"})
	const ns = "codefresh"
	c.CreateNamespace(t, ns)
	const jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJlMmUtdXNlciJ9.c2lnbmVkLWJ5LWUyZQ"
	const password = "gh-e2e-s3cret"
	c.ServeLogs(t, testcluster.LogSource{Namespace: ns, Containers: []string{"validate-values"}},
		"+ cf helm validate --values /job_tmp/values.yaml --namespace codefresh --version 0.30.0 --hook --log-level debug",
		`level=debug msg="using user token `+jwt+`"`,
		`level=debug msg="cloning the runtime repo as e2e-bot with password=`+password+`"`,
		"Error: the user token is not valid for account e2e-account (401 Unauthorized)")
	// The chart runs `cf account validate-usage --fail-condition=reached
	// --subject=clusters ...`: its refusal, as the test writes it.
	c.ServeLogs(t, testcluster.LogSource{Namespace: ns, Containers: []string{"validate-usage"}},
		"Error: account e2e-account reached its limit of 1 clusters (subject: clusters, fail condition: reached)")
	masked := map[string][]string{
		"validate-values": {
			"+ cf helm validate --values /job_tmp/values.yaml --namespace codefresh --version 0.30.0 --hook --log-level debug",
			`level=debug msg="using user token ***"`,
			`level=debug msg="cloning the runtime repo as e2e-bot with password=***"`,
			"Error: the user token is not valid for account e2e-account (401 Unauthorized)",
		},
		"validate-usage": {"Error: account e2e-account reached its limit of 1 clusters (subject: clusters, fail condition: reached)"},
	}
	// The chart's Jobs, failed by kwok's "fail" stage: the Job controller
	// creates each pod, the scheduler binds it, kwok ends it with exit code 1.
	podNames := map[string]string{}
	for _, name := range plan.ValidationJobs() {
		podNames[name] = failedHookJob(t, c, ns, name)
	}

	file := filepath.Join(t.TempDir(), "post.tgz")
	live, liveDoc := post(t, c, "--only=validate-values-job", "--bundle", file)
	wantCode(t, live, cli.ExitFailed)
	vj := wantStatus(t, liveDoc, "validate-values-job", "fail",
		"Job validate-values failed (BackoffLimitExceeded", "last 4 lines of pod "+podNames["validate-values"]+":",
		"Job validate-usage failed (BackoffLimitExceeded", " of pod "+podNames["validate-usage"]+":")
	// Each Job's lines under its own heading (validate-values first).
	values, usage, ok := strings.Cut(vj.Message, "\nJob validate-usage failed")
	if !ok {
		t.Fatalf("validate-values-job message has no validate-usage paragraph:\n%s", vj.Message)
	}
	for job, part := range map[string]string{"validate-values": values, "validate-usage": usage} {
		for _, m := range masked[job] {
			if !strings.Contains(part, "\n  "+m) {
				t.Errorf("validate-values-job message lacks %q under Job %s:\n%s", m, job, vj.Message)
			}
		}
	}

	// The TTL: Kubernetes deletes the Jobs and (the garbage collector) their pods.
	for _, name := range plan.ValidationJobs() {
		if err := c.Kube.BatchV1().Jobs(ns).Delete(bg, name, metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 60*time.Second, "the Jobs' pods deleted", func() bool {
		pods, err := c.Kube.CoreV1().Pods(ns).List(bg, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0
	})

	res := testcluster.Run(t, nil, "replay", file, "--hooks")
	wantCode(t, res, 0)
	t.Logf("replay --hooks:\n%s", res.Stdout)
	for _, name := range plan.ValidationJobs() {
		var want strings.Builder
		want.WriteString("  Pod " + podNames[name] + ": Failed on worker-1\n" +
			"    container " + name + ": terminated: Error, exit code 1\n" +
			"    log:\n")
		for _, m := range masked[name] {
			want.WriteString("      " + m + "\n")
		}
		if !strings.Contains(res.Stdout, "Job codefresh/"+name+": ") || !strings.Contains(res.Stdout, want.String()) {
			t.Errorf("replay --hooks lacks Job %s and\n%s\nin:\n%s", name, want.String(), res.Stdout)
		}
	}
	body := untarred(t, file)
	for _, lines := range masked {
		for _, m := range lines {
			if !strings.Contains(body, m) {
				t.Errorf("the bundle lacks the log line %q", m)
			}
		}
	}
	for _, secret := range []string{jwt, password} {
		if strings.Contains(body, secret) {
			t.Errorf("the bundle holds the planted %q", secret)
		}
		if strings.Contains(res.Stdout+res.Stderr+live.Stdout+live.Stderr, secret) {
			t.Errorf("the planted %q was printed", secret)
		}
	}
	rep := testcluster.Run(t, nil, "replay", file)
	if rep.Code != live.Code {
		t.Errorf("replay exit %d, live %d\n%s", rep.Code, live.Code, rep.Stderr)
	}
	sameReport(t, liveDoc, rep.JSON(t))
}

// failedHookJob creates the chart's hook Job name (backoffLimit 0, one
// container named like the Job) with a pod template kwok fails, waits until
// the Job controller marks it Failed, and returns its pod's name.
func failedHookJob(t *testing.T, c *testcluster.Cluster, ns, name string) string {
	t.Helper()
	_, err := c.Kube.BatchV1().Jobs(ns).Create(bg, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.JobSpec{BackoffLimit: ptr(int32(0)), Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{testcluster.FaultLabel: testcluster.FaultFail}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: name, Image: "quay.io/codefresh/gitops-runtime-installer:0.30.0"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "Job "+name+" Failed", func() bool {
		j, err := c.Kube.BatchV1().Jobs(ns).Get(bg, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, cond := range j.Status.Conditions {
			if cond.Type == batchv1.JobFailed && cond.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	})
	pods, err := c.Kube.CoreV1().Pods(ns).List(bg, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + name})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("the pods of Job %s: %v %v", name, pods, err)
	}
	return pods.Items[0].Name
}

// TestBundleOfANewerFormat: a bundle whose manifest says a format newer than
// the plugin reads is refused in one line, exit 2.
func TestBundleOfANewerFormat(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.StartBare(t)
	file := filepath.Join(t.TempDir(), "run.tgz")
	c.RunJSON(t, nil, "--only=kubernetes-version", "--bundle", file)
	newer := filepath.Join(t.TempDir(), "newer.tgz")
	rewriteManifest(t, file, newer, func(m map[string]any) { m["format"] = 99 })
	res := testcluster.Run(t, nil, "replay", newer)
	wantCode(t, res, cli.ExitUsage)
	if !strings.Contains(res.Stderr, "format version 99 is newer") || strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 {
		t.Errorf("stderr %q", res.Stderr)
	}
}

// rewriteManifest copies the bundle from to to with its manifest.json
// changed by edit (the manifest lists the other entries' sha256, not its
// own: nothing to re-hash).
func rewriteManifest(t *testing.T, from, to string, edit func(map[string]any)) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tarEntries(t, from, func(hdr *tar.Header, b []byte) {
		if hdr.Name == "manifest.json" {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			edit(m)
			var err error
			if b, err = json.Marshal(m); err != nil {
				t.Fatal(err)
			}
			hdr.Size = int64(len(b))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	})
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, buf.String())
}
