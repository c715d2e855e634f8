package e2e

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestClusterBehaves holds what the other end-to-end tests rely on: on
// testcluster.Start the controllers, the scheduler and kwok do what a cluster
// does, and the fault stages fail pods the way real ones fail.
func TestClusterBehaves(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.Start(t)
	c.AddNode(t, testcluster.NodeSpec{Name: "n1", CPU: "2", Memory: "4Gi"})
	n, err := c.Kube.CoreV1().Nodes().Get(bg, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range n.Spec.Taints {
		t.Errorf("node n1 keeps taint %s", tt.Key)
	}
	if got := n.Status.Allocatable.Memory().String(); got != "4Gi" {
		t.Errorf("allocatable memory %s, want 4Gi", got)
	}
	const ns = "behave"
	c.CreateNamespace(t, ns)

	// A Deployment becomes Available through the real controllers.
	d := testDeployment(ns, "web", 2, "100m", "")
	if _, err := c.Kube.AppsV1().Deployments(ns).Create(bg, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "deployment web available", func() bool {
		d, err := c.Kube.AppsV1().Deployments(ns).Get(bg, "web", metav1.GetOptions{})
		return err == nil && d.Status.AvailableReplicas == 2
	})

	// A Job completes; one whose pod fails is Failed with the Job controller's reason.
	c.Kubectl(t, "create", "job", "ok", "-n", ns, "--image=busybox")
	waitFor(t, 30*time.Second, "job ok complete", func() bool {
		j, err := c.Kube.BatchV1().Jobs(ns).Get(bg, "ok", metav1.GetOptions{})
		return err == nil && jobCondition(j, batchv1.JobComplete)
	})
	bad := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"},
		Spec: batchv1.JobSpec{BackoffLimit: ptr(int32(0)), Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{testcluster.FaultLabel: testcluster.FaultFail}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}},
	}
	if _, err := c.Kube.BatchV1().Jobs(ns).Create(bg, bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "job bad failed", func() bool {
		j, err := c.Kube.BatchV1().Jobs(ns).Get(bg, "bad", metav1.GetOptions{})
		return err == nil && jobCondition(j, batchv1.JobFailed)
	})

	// A crash-looping pod and one that cannot pull its image.
	cl := testDeployment(ns, "crash", 1, "10m", testcluster.FaultCrashLoop)
	ip := testDeployment(ns, "pull", 1, "10m", testcluster.FaultImagePull)
	for _, d := range []*appsv1.Deployment{cl, ip} {
		if _, err := c.Kube.AppsV1().Deployments(ns).Create(bg, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 30*time.Second, "pods crash-looping and in ImagePullBackOff", func() bool {
		return waitingReason(t, c, ns, "app=crash") == "CrashLoopBackOff" && waitingReason(t, c, ns, "app=pull") == "ImagePullBackOff"
	})

	// A pod too big for any node stays Pending with the scheduler's event.
	big := testDeployment(ns, "big", 1, "3", "")
	if _, err := c.Kube.AppsV1().Deployments(ns).Create(bg, big, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "FailedScheduling for big", func() bool {
		evs, err := c.Kube.CoreV1().Events(ns).List(bg, metav1.ListOptions{FieldSelector: "reason=FailedScheduling"})
		return err == nil && len(evs.Items) > 0 && strings.Contains(evs.Items[0].Message, "Insufficient cpu")
	})
}

func jobCondition(j *batchv1.Job, typ batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// TestServeLogs: on testcluster.Start, a pod bound to a kwok node has the log
// ServeLogs gave it: GET /api/v1/namespaces/N/pods/P/log (client-go, as
// kubectl logs) goes through the apiserver to kwok's kubelet endpoint;
// tailLines applies; a container ServeLogs did not name has none; the node
// kwok manages has InternalIP 127.0.0.1 and kwok's port as kubelet port.
func TestServeLogs(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.Start(t)
	c.AddNode(t, testcluster.NodeSpec{Name: "worker-1", CPU: "4", Memory: "8Gi"})
	const ns = "logs"
	c.CreateNamespace(t, ns)
	lines := []string{"starting", "Error: values are invalid", "exit 1"}
	c.ServeLogs(t, testcluster.LogSource{Namespace: ns, Containers: []string{"main"}}, lines...)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p-1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "main", Image: "busybox"}, {Name: "side", Image: "busybox"},
		}},
	}
	if _, err := c.Kube.CoreV1().Pods(ns).Create(bg, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "pod p-1 Running", func() bool {
		p, err := c.Kube.CoreV1().Pods(ns).Get(bg, "p-1", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning
	})
	node, err := c.Kube.CoreV1().Nodes().Get(bg, "worker-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hasIP := false
	for _, a := range node.Status.Addresses {
		hasIP = hasIP || a.Type == corev1.NodeInternalIP && a.Address == "127.0.0.1"
	}
	if port := c.Components.KubeletPort(); !hasIP || int(node.Status.DaemonEndpoints.KubeletEndpoint.Port) != port {
		t.Errorf("node addresses %v, kubelet port %d; want InternalIP 127.0.0.1, port %d", node.Status.Addresses, node.Status.DaemonEndpoints.KubeletEndpoint.Port, port)
	}

	raw, err := c.Kube.CoreV1().Pods(ns).GetLogs("p-1", &corev1.PodLogOptions{Container: "main"}).DoRaw(bg)
	if err != nil {
		t.Fatalf("GET pods/p-1/log: %v", err)
	}
	if got, want := string(raw), strings.Join(lines, "\n")+"\n"; got != want {
		t.Errorf("log = %q, want %q", got, want)
	}
	raw, err = c.Kube.CoreV1().Pods(ns).GetLogs("p-1", &corev1.PodLogOptions{Container: "main", TailLines: ptr(int64(2))}).DoRaw(bg)
	if err != nil || string(raw) != "Error: values are invalid\nexit 1\n" {
		t.Errorf("tailLines=2: %q %v", raw, err)
	}
	if raw, err = c.Kube.CoreV1().Pods(ns).GetLogs("p-1", &corev1.PodLogOptions{Container: "side"}).DoRaw(bg); err == nil {
		t.Errorf("container side has a log: %q", raw)
	}
}
