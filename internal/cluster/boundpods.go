package cluster

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	resourcehelper "k8s.io/component-helpers/resource"
)

// NodeUsage is what the pods bound to one node request, summed as the
// scheduler's NodeResourcesFit plugin sums them.
type NodeUsage struct {
	// MilliCPU, MemoryBytes and EphemeralBytes are the summed effective
	// requests (k8s.io/component-helpers/resource.PodRequests: containers
	// summed, the largest init container if larger, pod overhead and
	// pod-level resources included).
	MilliCPU, MemoryBytes, EphemeralBytes int64
	// Pods is the number of pods bound to the node.
	Pods int64
}

// ActivePodsSelector selects the pods that still hold their node's
// resources: those not Succeeded or Failed (the field selector the
// kubelet's and the scheduler's accounting amounts to).
const ActivePodsSelector = "status.phase!=Succeeded,status.phase!=Failed"

// BoundPodRequests lists the pods of all namespaces once per snapshot
// (paginated, protobuf, field selector ActivePodsSelector) and folds each
// page into per-node sums as it arrives, so memory stays proportional to the
// number of nodes, not pods. Pods not yet bound (no spec.nodeName) are not
// counted. Keys are node names.
func (s *Snapshot) BoundPodRequests() (map[string]NodeUsage, error) {
	return Memo(s, "pods/bound-requests", func() (map[string]NodeUsage, error) {
		out := map[string]NodeUsage{}
		reuse := corev1.ResourceList{}
		err := s.eachStreamed("pods", "", metav1.ListOptions{FieldSelector: ActivePodsSelector},
			podStream(s.clients.Kube.CoreV1().RESTClient()),
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Kube.CoreV1().Pods("").List(ctx, o)
			},
			func(obj runtime.Object) error {
				p, ok := obj.(*corev1.Pod)
				if !ok {
					return fmt.Errorf("unexpected %T in pod list", obj)
				}
				addPodRequests(out, p, reuse)
				return nil
			}, func() { clear(out) })
		return out, err
	})
}

// addPodRequests adds p's effective requests to its node's sum in out,
// unless p is not bound or has terminated. reuse is scratch space for
// PodRequests, reused from pod to pod.
func addPodRequests(out map[string]NodeUsage, p *corev1.Pod, reuse corev1.ResourceList) {
	if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return
	}
	req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{Reuse: reuse})
	u := out[p.Spec.NodeName]
	u.MilliCPU += req.Cpu().MilliValue()
	u.MemoryBytes += req.Memory().Value()
	u.EphemeralBytes += req.StorageEphemeral().Value()
	u.Pods++
	out[p.Spec.NodeName] = u
}

// BoundPod is one pod bound to a node, with its effective requests (as
// NodeUsage sums them) and the workload that controls it.
type BoundPod struct {
	Namespace, Name, Node string
	// OwnerKind and OwnerName are the controlling workload: Deployment (the
	// pod's ReplicaSet name without its pod-template-hash suffix),
	// StatefulSet, DaemonSet or Job; "" when the pod has no controller.
	OwnerKind, OwnerName                  string
	MilliCPU, MemoryBytes, EphemeralBytes int64
}

// BoundPodsIn lists the active (ActivePodsSelector), bound pods of one
// namespace once per snapshot (paginated), with their requests and
// controlling workload: a --upgrade run reads the release namespace's to
// know which requests the rollout frees.
func (s *Snapshot) BoundPodsIn(namespace string) ([]BoundPod, error) {
	return Memo(s, "pods/bound-in/"+namespace, func() ([]BoundPod, error) {
		all, err := listAll(s.ctx, "pods", namespace, metav1.ListOptions{FieldSelector: ActivePodsSelector},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Kube.CoreV1().Pods(namespace).List(ctx, o)
			}, boundPodFrom)
		var out []BoundPod
		for _, p := range all {
			if p.Node != "" {
				out = append(out, p)
			}
		}
		return out, err
	})
}

func boundPodFrom(p *corev1.Pod) BoundPod {
	b := BoundPod{Namespace: p.Namespace, Name: p.Name, Node: p.Spec.NodeName}
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		b.Node = ""
		return b
	}
	req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	b.MilliCPU, b.MemoryBytes, b.EphemeralBytes = req.Cpu().MilliValue(), req.Memory().Value(), req.StorageEphemeral().Value()
	if c := metav1.GetControllerOf(p); c != nil {
		b.OwnerKind, b.OwnerName = c.Kind, c.Name
		if c.Kind == "ReplicaSet" {
			if h := p.Labels["pod-template-hash"]; h != "" && strings.HasSuffix(c.Name, "-"+h) {
				b.OwnerKind, b.OwnerName = "Deployment", strings.TrimSuffix(c.Name, "-"+h)
			}
		}
	}
	return b
}
