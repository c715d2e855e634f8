package testcluster

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestServeLogs: on a full cluster, a pod bound to a kwok node has the log
// ServeLogs gave it: GET /api/v1/namespaces/N/pods/P/log (client-go, as
// kubectl logs) goes through the apiserver to kwok's kubelet endpoint;
// tailLines applies; a container ServeLogs did not name has none; the node
// kwok manages has InternalIP 127.0.0.1 and kwok's port as kubelet port.
func TestServeLogs(t *testing.T) {
	c := Start(t)
	c.AddNode(t, NodeSpec{Name: "worker-1", CPU: "4", Memory: "8Gi"})
	ctx := context.Background()
	const ns = "logs"
	c.CreateNamespace(t, ns)
	lines := []string{"starting", "Error: values are invalid", "exit 1"}
	c.ServeLogs(t, LogSource{Namespace: ns, Containers: []string{"main"}}, lines...)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p-1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "main", Image: "busybox"}, {Name: "side", Image: "busybox"},
		}},
	}
	if _, err := c.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := c.Kube.CoreV1().Pods(ns).Get(ctx, "p-1", metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod not Running after 30s: %v %v", err, p.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	node, err := c.Kube.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hasIP := false
	for _, a := range node.Status.Addresses {
		hasIP = hasIP || a.Type == corev1.NodeInternalIP && a.Address == "127.0.0.1"
	}
	if !hasIP || int(node.Status.DaemonEndpoints.KubeletEndpoint.Port) != c.Components.kwokPort {
		t.Errorf("node addresses %v, kubelet port %d; want InternalIP 127.0.0.1, port %d", node.Status.Addresses, node.Status.DaemonEndpoints.KubeletEndpoint.Port, c.Components.kwokPort)
	}

	raw, err := c.Kube.CoreV1().Pods(ns).GetLogs("p-1", &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET pods/p-1/log: %v", err)
	}
	if got, want := string(raw), strings.Join(lines, "\n")+"\n"; got != want {
		t.Errorf("log = %q, want %q", got, want)
	}
	two := int64(2)
	raw, err = c.Kube.CoreV1().Pods(ns).GetLogs("p-1", &corev1.PodLogOptions{Container: "main", TailLines: &two}).DoRaw(ctx)
	if err != nil || string(raw) != "Error: values are invalid\nexit 1\n" {
		t.Errorf("tailLines=2: %q %v", raw, err)
	}
	if raw, err = c.Kube.CoreV1().Pods(ns).GetLogs("p-1", &corev1.PodLogOptions{Container: "side"}).DoRaw(ctx); err == nil {
		t.Errorf("container side has a log: %q", raw)
	} else {
		t.Logf("container side: %v", err)
	}
}
