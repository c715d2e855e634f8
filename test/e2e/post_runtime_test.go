package e2e

import (
	"strings"
	"testing"

	rspb "helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestPostRuntime walks release-deployed, validate-values-job and
// runtime-workloads from a missing runtime, through a failed install with
// broken pods and a failed validation hook, to a healthy runtime.
func TestPostRuntime(t *testing.T) {
	testcluster.Parallel(t)
	// Bare: this scene holds many failure states at once, written by hand, as a
	// regression test of the messages (the failed-release history, a hook Job
	// whose pod log cannot be read, CreateContainerConfigError). The same
	// checks against what Kubernetes itself says are in post_chart_test.go
	// (the real chart installed by real Helm on a full cluster).
	c := testcluster.StartBare(t)
	const ns = "codefresh"
	c.CreateNamespace(t, ns)
	only := "--only=release-deployed,validate-values-job,runtime-workloads"

	// Nothing installed.
	res, doc := postReplayed(t, c, only)
	if res.Code != 1 || doc.Mode != "post" {
		t.Fatalf("exit %d, mode %s; want 1, post\n%s", res.Code, doc.Mode, res.Stderr)
	}
	wantStatus(t, doc, "release-deployed", "fail", "release cf-gitops-runtime is not installed in namespace codefresh")
	wantStatus(t, doc, "validate-values-job", "pass")
	wantStatus(t, doc, "runtime-workloads", "fail", "no Deployment or StatefulSet of release cf-gitops-runtime")

	// A release installed elsewhere is pointed at.
	c.CreateNamespace(t, "other")
	writeRelease(t, c, "other", "cf-gitops-runtime", 1, rspb.StatusDeployed, "Install complete")
	_, doc = postReplayed(t, c, "--only=release-deployed")
	wantStatus(t, doc, "release-deployed", "fail", "exists in namespace other", "-n other")

	// A failed upgrade after a good install: the latest revision decides.
	writeRelease(t, c, ns, "cf-gitops-runtime", 1, rspb.StatusSuperseded, "Install complete")
	writeRelease(t, c, ns, "cf-gitops-runtime", 2, rspb.StatusFailed, `Upgrade "cf-gitops-runtime" failed: pre-upgrade hooks failed: job validate-values failed: BackoffLimitExceeded`)

	// The validation hook failed; its pod ran on node-1, whose kubelet is
	// unreachable (there is none), so its log cannot be read.
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "validate-values"},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr(int32(0)),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "validate-values", Image: "quay.io/codefresh/gitops-runtime-installer:0.30.0"}}}},
		},
	}
	job, err := c.Kube.BatchV1().Jobs(ns).Create(bg, job, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	job.Status = batchv1.JobStatus{
		StartTime: &now, Failed: 1,
		Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
		},
	}
	if _, err := c.Kube.BatchV1().Jobs(ns).UpdateStatus(bg, job, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("setting job status: %v", err)
	}
	podWith(t, c, ns, "validate-values-x7k2p", "validate-values", "node-1", map[string]string{"batch.kubernetes.io/job-name": "validate-values", "job-name": "validate-values"},
		corev1.PodStatus{Phase: corev1.PodFailed})

	// Runtime workloads: one healthy, the others broken in the usual ways.
	deployment(t, c, ns, "cap-app-proxy", 1, 1)
	deployment(t, c, ns, "gitops-operator", 1, 0)
	pod(t, c, ns, "gitops-operator-5d9c7-abcde", map[string]string{"app": "gitops-operator"}, corev1.PodStatus{
		Phase: corev1.PodPending,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "manager", Image: "x", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "CreateContainerConfigError", Message: `secret "codefresh-token" not found`}}}},
	})
	warningEvent(t, c, ns, "Pod", "gitops-operator-5d9c7-abcde", "Failed", `Error: secret "codefresh-token" not found`)
	deployment(t, c, ns, "argo-gateway", 1, 0)
	pod(t, c, ns, "argo-gateway-7f8-xyz12", map[string]string{"app": "argo-gateway"}, corev1.PodStatus{
		Phase: corev1.PodRunning,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "argo-gateway", Image: "x", RestartCount: 6,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s restarting failed container"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2}}}},
	})
	deployment(t, c, ns, "internal-router", 1, 0)
	pod(t, c, ns, "internal-router-66-q9w8e", map[string]string{"app": "internal-router"}, corev1.PodStatus{
		Phase: corev1.PodPending,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
			Message: "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available"}},
	})
	sts := statefulSet(t, c, ns, "argo-cd-application-controller")
	pod(t, c, ns, "argo-cd-application-controller-0", map[string]string{"app": "argo-cd-application-controller"}, corev1.PodStatus{
		Phase: corev1.PodPending,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "main", Image: "x", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "ImagePullBackOff", Message: `Back-off pulling image "quay.io/argoproj/argocd:v9.9.9"`}}}},
	})
	// Unrelated workloads in the namespace are not the runtime's.
	c.Kubectl(t, "create", "deployment", "unrelated", "-n", ns, "--image=nginx")

	res, doc = postReplayed(t, c, only)
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1", res.Code)
	}
	wantStatus(t, doc, "release-deployed", "fail", "revision 2 is failed", "chart gitops-runtime-0.30.0", "app version 0.1.72", "pre-upgrade hooks failed", "helm history cf-gitops-runtime -n codefresh")
	vj := wantStatus(t, doc, "validate-values-job", "fail", "Job validate-values failed (BackoffLimitExceeded", "log of pod validate-values-x7k2p could not be read",
		"kubectl logs jobs/validate-values -n codefresh --tail=50")
	if !hasObject(vj.Objects, "Pod", "validate-values-x7k2p") {
		t.Fatalf("objects %v lack the pod", vj.Objects)
	}
	rw := wantStatus(t, doc, "runtime-workloads", "fail",
		"4 of 5 runtime workloads not available",
		"Deployment/gitops-operator: 0/1 available",
		`container manager: CreateContainerConfigError (secret "codefresh-token" not found)`,
		`event Pod/gitops-operator-5d9c7-abcde Failed (x3): Error: secret "codefresh-token" not found`,
		"container argo-gateway: CrashLoopBackOff (back-off 5m0s restarting failed container), last terminated Error, exit code 2, 6 restarts",
		"Pending, not scheduled: 0/3 nodes are available: 3 Insufficient cpu.",
		"StatefulSet/argo-cd-application-controller: 0/1 available",
		"ImagePullBackOff",
		"Secret codefresh-token is missing",
	)
	if strings.Contains(rw.Message, "cap-app-proxy:") || strings.Contains(rw.Message, "unrelated") {
		t.Fatalf("healthy or unrelated workloads reported: %s", rw.Message)
	}
	// The table says the same, with the same exit code.
	table := testcluster.Run(t, nil, "--kubeconfig", c.AdminKubeconfig(), "--post", only, "--no-color")
	t.Logf("table report:\n%s", table.Stdout)
	if table.Code != 1 || !strings.Contains(table.Stdout, "CrashLoopBackOff") || !strings.Contains(table.Stdout, "kubectl logs jobs/validate-values -n codefresh --tail=50") {
		t.Fatalf("table report: exit %d\n%s", table.Code, table.Stdout)
	}

	// Healthy: the hook Job is gone after its TTL, a new revision deployed,
	// every workload available, the runtime registered.
	if err := c.Kube.BatchV1().Jobs(ns).Delete(bg, "validate-values", metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	writeRelease(t, c, ns, "cf-gitops-runtime", 3, rspb.StatusDeployed, "Upgrade complete")
	for _, name := range []string{"gitops-operator", "argo-gateway", "internal-router"} {
		d, err := c.Kube.AppsV1().Deployments(ns).Get(bg, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		setDeploymentStatus(t, c, d, 1)
	}
	sts.Status = appsv1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, CurrentReplicas: 1, UpdatedReplicas: 1}
	if _, err := c.Kube.AppsV1().StatefulSets(ns).UpdateStatus(bg, sts, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Without codefresh-token everything runs but the runtime has not
	// registered: the first line says that is expected until it does.
	_, doc = postReplayed(t, c, "--only=runtime-workloads")
	wantStatus(t, doc, "runtime-workloads", "warn", "Secret codefresh-token is missing in namespace codefresh: expected until the runtime registers with the platform", "\nall 5 runtime workloads are available", "kubectl logs deploy/cap-app-proxy")
	c.Kubectl(t, "create", "secret", "generic", "codefresh-token", "-n", ns, "--from-literal=token=sup3r-s3cret-t0ken")

	res, doc = postReplayed(t, c, only)
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", res.Code, res.Stdout)
	}
	wantStatus(t, doc, "release-deployed", "pass", "revision 3 is deployed (chart gitops-runtime-0.30.0, app version 0.1.72)")
	wantStatus(t, doc, "validate-values-job", "pass")
	wantStatus(t, doc, "runtime-workloads", "pass", "all 5 runtime workloads")
	if strings.Contains(res.Stdout+res.Stderr, "sup3r-s3cret-t0ken") {
		t.Fatal("a secret value was printed")
	}
}

func hasObject(objs []checks.ObjectRef, kind, name string) bool {
	for _, o := range objs {
		if o.Kind == kind && o.Name == name {
			return true
		}
	}
	return false
}

// statefulSet creates a one-replica StatefulSet with no replica available.
func statefulSet(t *testing.T, c *testcluster.Cluster, ns, name string) *appsv1.StatefulSet {
	t.Helper()
	labels := map[string]string{"app": name}
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{"meta.helm.sh/release-name": "cf-gitops-runtime"}},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr(int32(1)), ServiceName: name,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "quay.io/argoproj/argocd:v3.3.10"}}}},
		},
	}
	created, err := c.Kube.AppsV1().StatefulSets(ns).Create(bg, s, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}
