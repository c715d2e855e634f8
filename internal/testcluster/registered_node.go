package testcluster

import (
	"context"
	"fmt"
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// RegisteredNode is s as a kubelet registers it: its first create carries the
// status (capacity and allocatable from s.CPU and s.Memory, the Ready and
// pressure conditions, the addresses, node info and a few images), so one
// request makes a node whose list items weigh what a real node's do.
// s.InternalIP is its InternalIP address (none when empty).
func RegisteredNode(s NodeSpec) *corev1.Node {
	res := nodeResources(s)
	h := fnv.New64a()
	_, _ = h.Write([]byte(s.Name))
	id := h.Sum64() // stable per name, as a machine's IDs are
	now := metav1.Now()
	cond := func(t corev1.NodeConditionType, st corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: st, Reason: reason, Message: "kubelet reports " + reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	ready, reason := corev1.ConditionTrue, "KubeletReady"
	if s.NotReady {
		ready, reason = corev1.ConditionFalse, "KubeletNotReady"
	}
	var images []corev1.ContainerImage
	for j := 0; j < 8; j++ {
		images = append(images, corev1.ContainerImage{
			Names:     []string{fmt.Sprintf("registry.example.com/platform/image-%d@sha256:%064d", j, j), fmt.Sprintf("registry.example.com/platform/image-%d:v1.%d.0", j, j)},
			SizeBytes: int64(50_000_000 + j*1_000_000),
		})
	}
	addrs := []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: s.Name}}
	if s.InternalIP != "" {
		addrs = append([]corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: s.InternalIP}}, addrs...)
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: s.Labels},
		Spec:       corev1.NodeSpec{Unschedulable: s.Unschedulable, Taints: s.Taints, ProviderID: s.ProviderID},
		Status: corev1.NodeStatus{
			Capacity: res, Allocatable: res,
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
				cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
				cond(corev1.NodeReady, ready, reason),
			},
			Addresses: addrs,
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: fmt.Sprintf("%032x", id), SystemUUID: fmt.Sprintf("ec2%029x", id), BootID: fmt.Sprintf("%032x", id+1),
				KernelVersion: "6.1.119-129.201.amzn2023.x86_64", OSImage: "Amazon Linux 2023", ContainerRuntimeVersion: "containerd://1.7.23",
				KubeletVersion: "v1.31.3-eks-59bf375", KubeProxyVersion: "v1.31.3-eks-59bf375", OperatingSystem: "linux", Architecture: "amd64",
			},
			Images: images,
		},
	}
}

// RegisterNode creates RegisteredNode(s) in one request, for a bare cluster
// (StartBareLive) whose apiserver runs without the TaintNodesByCondition
// admission plugin (make bench): nothing there would remove the not-ready
// taint that plugin adds, and nothing rewrites the status. An apiserver that
// drops the status of a create gets it again through the status subresource.
func RegisterNode(ctx context.Context, kube kubernetes.Interface, s NodeSpec) error {
	n := RegisteredNode(s)
	created, err := kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating node %s: %w", s.Name, err)
	}
	if len(created.Status.Conditions) == 0 {
		created.Status = n.Status
		if _, err := kube.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("setting status of node %s: %w", s.Name, err)
		}
	}
	return nil
}
