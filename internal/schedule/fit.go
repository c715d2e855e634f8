package schedule

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	schedcorev1 "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Need is one pod to place: its name ("app", or "app (2 of 3)" for one of
// several replicas) and its effective requests (millicores, bytes).
type Need struct {
	Name                                  string
	MilliCPU, MemoryBytes, EphemeralBytes int64
	spec                                  *corev1.PodSpec
}

// NodeRoom is a node with what is left of its allocatable resources.
type NodeRoom struct {
	Node cluster.Node
	// Free cpu (millicores), memory and ephemeral-storage (bytes) and pod slots.
	MilliCPU, MemoryBytes, EphemeralBytes, Pods int64
}

// Verdict is the outcome of placing pods.
type Verdict struct {
	// Pods is the number of pods; Unfit are those that fit nowhere, with
	// their requests.
	Pods  int
	Unfit []Need
	// Closest is the eligible node that comes closest to holding the first
	// pod that does not fit (ClosestFound false when no node matches its
	// nodeSelector, affinity and tolerations).
	Closest      NodeRoom
	ClosestFound bool
	// Total requests of the pods.
	MilliCPU, MemoryBytes int64
	// Nodes is the number of Ready, schedulable nodes considered.
	Nodes int
}

// Fit places pods on nodes first-fit decreasing (largest memory, then cpu,
// first; nodes in name order): a node is eligible when Ready and not
// cordoned; a pod fits on it when the node matches the pod's nodeSelector
// and required node affinity (k8s.io/component-helpers nodeaffinity), the
// pod tolerates every NoSchedule/NoExecute taint of the node
// (component-helpers FindMatchingUntoleratedTaint), and the node's free
// cpu, memory, ephemeral-storage and pod slots (allocatable minus what
// bound pods request, see cluster.BoundPodRequests) cover the pod's
// effective requests (component-helpers resource.PodRequests). Requests are
// those the scheduler's NodeResourcesFit filter compares
// (https://kubernetes.io/docs/concepts/scheduling-eviction/resource-bin-packing/).
func Fit(specs []PodSpec, nodes []cluster.Node, bound map[string]cluster.NodeUsage) Verdict {
	rooms := freeRooms(nodes, bound)
	v := Verdict{Nodes: len(rooms)}
	pods := needs(specs)
	for _, p := range pods {
		v.MilliCPU += p.MilliCPU
		v.MemoryBytes += p.MemoryBytes
	}
	v.Pods = len(pods)
	sort.SliceStable(pods, func(i, j int) bool {
		if pods[i].MemoryBytes != pods[j].MemoryBytes {
			return pods[i].MemoryBytes > pods[j].MemoryBytes
		}
		return pods[i].MilliCPU > pods[j].MilliCPU
	})
	nodeObjs := map[string]*corev1.Node{}
	for _, r := range rooms {
		nodeObjs[r.Node.Name] = nodeObject(r.Node)
	}
	for _, p := range pods {
		closest, placed := place(p, rooms, nodeObjs)
		if placed {
			continue
		}
		v.Unfit = append(v.Unfit, p)
		if !v.ClosestFound && closest != nil {
			v.Closest, v.ClosestFound = *closest, true
		}
	}
	return v
}

// freeRooms are the Ready, schedulable nodes with what bound leaves free,
// in name order.
func freeRooms(nodes []cluster.Node, bound map[string]cluster.NodeUsage) []*NodeRoom {
	var rooms []*NodeRoom
	for _, n := range nodes {
		if !n.Ready || n.Unschedulable {
			continue
		}
		u := bound[n.Name]
		rooms = append(rooms, &NodeRoom{Node: n, MilliCPU: n.AllocatableMilliCPU - u.MilliCPU, MemoryBytes: n.AllocatableMemoryBytes - u.MemoryBytes,
			EphemeralBytes: n.AllocatableEphemeralBytes - u.EphemeralBytes, Pods: n.AllocatablePods - u.Pods})
	}
	sort.Slice(rooms, func(i, j int) bool { return rooms[i].Node.Name < rooms[j].Node.Name })
	return rooms
}

// needs are the pods of specs, one per replica, with their effective
// requests.
func needs(specs []PodSpec) []Need {
	var pods []Need
	for i := range specs {
		s := &specs[i]
		req := resourcehelper.PodRequests(&corev1.Pod{Spec: s.Spec}, resourcehelper.PodResourcesOptions{})
		for r := 0; r < s.Replicas; r++ {
			name := s.Name
			if s.Replicas > 1 {
				name = fmt.Sprintf("%s (%d of %d)", s.Name, r+1, s.Replicas)
			}
			pods = append(pods, Need{Name: name, MilliCPU: req.Cpu().MilliValue(), MemoryBytes: req.Memory().Value(),
				EphemeralBytes: req.StorageEphemeral().Value(), spec: &s.Spec})
		}
	}
	return pods
}

// place puts p on the first room that admits and holds it, taking its
// requests off that room; else it returns the admitting room that comes
// closest (nil when none admits it).
func place(p Need, rooms []*NodeRoom, nodeObjs map[string]*corev1.Node) (closest *NodeRoom, placed bool) {
	best := -1.0
	for _, r := range rooms {
		if !NodeAdmits(p.spec, nodeObjs[r.Node.Name]) {
			continue
		}
		if r.MilliCPU >= p.MilliCPU && r.MemoryBytes >= p.MemoryBytes && r.EphemeralBytes >= p.EphemeralBytes && r.Pods >= 1 {
			r.MilliCPU -= p.MilliCPU
			r.MemoryBytes -= p.MemoryBytes
			r.EphemeralBytes -= p.EphemeralBytes
			r.Pods--
			return nil, true
		}
		if s := closeness(p, r); s > best {
			best, closest = s, r
		}
	}
	return closest, false
}

// nodeObject is the part of a Node NodeAdmits reads: its name, labels and
// taints.
func nodeObject(n cluster.Node) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}, Spec: corev1.NodeSpec{Taints: n.TaintList}}
}

// NodeAdmits reports whether the node matches the pod's nodeSelector and
// required node affinity and carries no NoSchedule/NoExecute taint the pod
// does not tolerate.
func NodeAdmits(spec *corev1.PodSpec, node *corev1.Node) bool {
	if ok, err := nodeaffinity.NewRequiredNodeAffinity(spec.NodeSelector, spec.Affinity).Match(node); err != nil || !ok {
		return false
	}
	_, untolerated := schedcorev1.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, false)
	return !untolerated
}

// closeness scores how nearly a node holds a pod: the smaller of its free
// cpu, memory and ephemeral-storage ratios to the pod's requests (1 or
// more means it has room for those).
func closeness(p Need, r *NodeRoom) float64 {
	ratio := func(free, need int64) float64 {
		if need <= 0 {
			return 1e9
		}
		return float64(max(free, 0)) / float64(need)
	}
	return min(ratio(r.MilliCPU, p.MilliCPU), ratio(r.MemoryBytes, p.MemoryBytes), ratio(r.EphemeralBytes, p.EphemeralBytes))
}

// NodePlatforms returns the platforms ("linux/amd64": kubernetes.io/os,
// linux when unlabelled, and kubernetes.io/arch) of the Ready, schedulable
// nodes a pod with spec can land on (NodeAdmits), sorted; nodes without an
// architecture label are left out.
func NodePlatforms(spec corev1.PodSpec, nodes []cluster.Node) []string {
	set := map[string]bool{}
	for _, n := range nodes {
		if !n.Ready || n.Unschedulable || !NodeAdmits(&spec, nodeObject(n)) {
			continue
		}
		arch := n.Labels[corev1.LabelArchStable]
		if arch == "" {
			continue
		}
		os := n.Labels[corev1.LabelOSStable]
		if os == "" {
			os = "linux"
		}
		set[os+"/"+arch] = true
	}
	out := make([]string, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}
