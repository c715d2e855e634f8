package cluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Node is the part of a Node the checks read.
type Node struct {
	Name string
	// Ready is true when the NodeReady condition is True.
	Ready bool
	// ReadyUnknown is true when the NodeReady condition is Unknown: the node
	// lifecycle controller set it because the kubelet stopped posting status
	// ("Kubelet stopped posting node status").
	ReadyUnknown bool
	// Labels are the node's labels (for nodeSelector matching).
	Labels map[string]string
	// TaintList holds the node's NoSchedule and NoExecute taints (for
	// toleration matching); Taints is their printed form.
	TaintList []corev1.Taint
	// AllocatablePods is status.allocatable.pods.
	AllocatablePods int64
	// AllocatableEphemeralBytes is status.allocatable.ephemeral-storage in
	// bytes (0 when the node does not report it).
	AllocatableEphemeralBytes int64
	// Unschedulable is spec.unschedulable (the node is cordoned).
	Unschedulable bool
	// Taints lists the node's NoSchedule and NoExecute taints as key[=value]:Effect.
	Taints []string
	// AllocatableMilliCPU is status.allocatable.cpu in millicores.
	AllocatableMilliCPU int64
	// AllocatableMemoryBytes is status.allocatable.memory in bytes.
	AllocatableMemoryBytes int64
	// ProviderID is spec.providerID, e.g. "aws:///eu-west-1a/i-0abc".
	ProviderID string
}

// Schedulable reports whether new pods can land on the node: Ready, not
// cordoned, and without NoSchedule/NoExecute taints.
func (n Node) Schedulable() bool { return n.Ready && !n.Unschedulable && len(n.Taints) == 0 }

// NodeFrom summarises a Node object.
func NodeFrom(n *corev1.Node) Node {
	out := Node{
		Name:                      n.Name,
		Unschedulable:             n.Spec.Unschedulable,
		ProviderID:                n.Spec.ProviderID,
		AllocatableMilliCPU:       n.Status.Allocatable.Cpu().MilliValue(),
		AllocatableMemoryBytes:    n.Status.Allocatable.Memory().Value(),
		AllocatablePods:           n.Status.Allocatable.Pods().Value(),
		AllocatableEphemeralBytes: n.Status.Allocatable.StorageEphemeral().Value(),
		Labels:                    copyMap(n.Labels),
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Ready = c.Status == corev1.ConditionTrue
			out.ReadyUnknown = c.Status == corev1.ConditionUnknown
		}
	}
	for _, t := range n.Spec.Taints {
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		out.TaintList = append(out.TaintList, t)
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		out.Taints = append(out.Taints, s+":"+string(t.Effect))
	}
	return out
}

// Nodes lists all nodes once per snapshot.
func (s *Snapshot) Nodes() ([]Node, error) {
	return s.nodes.get(func() ([]Node, error) {
		return listAllStreamed(s, "nodes", "", metav1.ListOptions{},
			protoStream(s.clients.Kube.CoreV1().RESTClient(), "nodes", "", "Node", slimNode),
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Kube.CoreV1().Nodes().List(ctx, o)
			}, NodeFrom)
	})
}
