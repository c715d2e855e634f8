package schedule

import (
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Before `helm upgrade` the target's pods are placed the way the upgrade
// starts them, beside the release's own pods that still run:
//
//   - A workload of the target whose pod template and replicas are those of
//     the revision Helm upgrades from is not rolled: its pods keep running
//     where they are (already counted on their nodes) and are not placed
//     again; more replicas than before are placed as new pods.
//   - A workload the upgrade adds, or whose pod template changes, is placed
//     in full after the rollout, and the requests of its current pods (and
//     of the pods of the workloads the upgrade deletes) are freed then:
//     the release's own running pods are not counted twice.
//   - During the rollout the old pods still run: a changed Deployment with
//     the RollingUpdate strategy whose maxUnavailable resolves to 0 (the
//     default 25% of 1 to 3 replicas) starts a new pod beside all its old
//     ones, and deletes an old pod only once a new one is Ready. The
//     rollout is played out (SimulateRollouts): every such Deployment
//     places a new pod where one fits beside every pod bound now, and each
//     pod placed frees one of its old pods, which may make room for
//     another Deployment's; when no new pod fits anywhere while some
//     remain, those rollouts stall with the old pods kept. A Deployment
//     that may take pods down first (maxUnavailable ≥ 1), Recreate, and a
//     StatefulSet (RollingUpdate deletes each pod before creating its
//     successor) free room before they need it; a StatefulSet with
//     OnDelete is not rolled
//     (https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/#update-strategies).
//   - pre-upgrade hook Jobs run before anything is applied, beside every
//     pod bound now; post-upgrade hook Jobs run with the new pods
//     (https://helm.sh/docs/topics/charts_hooks/#the-available-hooks).
//
// The Deployment controller's fenceposts are Kubernetes' own
// (https://github.com/kubernetes/kubernetes, pkg/controller/deployment/util
// ResolveFenceposts: maxSurge rounds up, maxUnavailable down, both 0 means
// maxUnavailable 1).

// UpgradePlan is the target's pods sorted by when the upgrade needs room
// for them.
type UpgradePlan struct {
	// PreHooks run beside every pod bound now; Surge are the rollout's
	// first new pods, beside every pod bound now; After are the pods placed
	// once the rollout is done, with the requests of Freed's pods released.
	PreHooks, Surge, After []PodSpec
	// Freed are the workloads (WorkloadKey) whose current pods go.
	Freed map[string]bool
	// Kept counts the pods of unchanged workloads left running.
	Kept int
}

// WorkloadKey names a workload as "Kind/namespace/name", an empty
// namespace being releaseNS.
func WorkloadKey(kind, ns, name, releaseNS string) string {
	if ns == "" {
		ns = releaseNS
	}
	return kind + "/" + ns + "/" + name
}

// PlanUpgrade sorts target's pods (the target's workloads and hooks)
// against current (the workloads of the revision Helm upgrades from).
func PlanUpgrade(target, current []PodSpec, releaseNS string) UpgradePlan {
	p := UpgradePlan{Freed: map[string]bool{}}
	cur := map[string]PodSpec{}
	for _, c := range current {
		if c.Hook == "" {
			cur[WorkloadKey(c.Kind, c.Namespace, c.Name, releaseNS)] = c
		}
	}
	rendered := map[string]bool{}
	for _, t := range target {
		if t.Hook != "" {
			switch {
			case t.Kind != "Job":
			case strings.Contains(t.Hook, "pre-upgrade"):
				p.PreHooks = append(p.PreHooks, t)
			case strings.Contains(t.Hook, "post-upgrade"):
				p.After = append(p.After, t)
			}
			continue
		}
		key := WorkloadKey(t.Kind, t.Namespace, t.Name, releaseNS)
		rendered[key] = true
		c, ok := cur[key]
		switch {
		case !ok:
			p.After = append(p.After, t)
		case t.Kind == "Job":
			// An existing Job is not run again (its template is immutable).
		case equality.Semantic.DeepEqual(t.Template, c.Template) || t.StatefulSet != nil && t.StatefulSet.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType:
			p.Kept += min(t.Replicas, c.Replicas)
			if t.Replicas > c.Replicas {
				more := t
				more.Replicas = t.Replicas - c.Replicas
				p.After = append(p.After, more)
			}
		default:
			p.Freed[key] = true
			p.After = append(p.After, t)
			if n := SurgeBesideOld(t); n > 0 {
				s := t
				s.Replicas = n
				p.Surge = append(p.Surge, s)
			}
		}
	}
	for key := range cur {
		if !rendered[key] {
			p.Freed[key] = true
		}
	}
	return p
}

// SurgeBesideOld returns how many new pods a changed Deployment starts
// while all its old pods still run: maxSurge when maxUnavailable resolves
// to 0 (Kubernetes' ResolveFenceposts over spec.replicas, 25% each by
// default), else 0.
func SurgeBesideOld(t PodSpec) int {
	d := t.Deployment
	if d == nil || d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType || t.Replicas == 0 {
		return 0
	}
	quarter := intstr.FromString("25%")
	surge, unavailable := &quarter, &quarter
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		if ru.MaxSurge != nil {
			surge = ru.MaxSurge
		}
		if ru.MaxUnavailable != nil {
			unavailable = ru.MaxUnavailable
		}
	}
	s, err := intstr.GetScaledValueFromIntOrPercent(surge, t.Replicas, true)
	if err != nil {
		return 0
	}
	u, err := intstr.GetScaledValueFromIntOrPercent(unavailable, t.Replicas, false)
	if err != nil || u > 0 || s == 0 {
		return 0
	}
	return min(s, t.Replicas)
}

// rollout is one Deployment's rollout being played out: its new pods left
// to place and its old pods left to free.
type rollout struct {
	spec PodSpec
	old  []cluster.BoundPod
	left int
}

// SimulateRollouts plays out the rollouts of surge (changed Deployments
// with maxUnavailable 0) beside bound: a new pod is placed first fit (as
// Fit does), then one old pod of its Deployment (own, matched by
// WorkloadKey) is freed, until every new pod is placed or none fits. It
// returns the Deployments left with pods to place (one replica each) and
// the usage at that point.
func SimulateRollouts(surge []PodSpec, nodes []cluster.Node, bound map[string]cluster.NodeUsage, own []cluster.BoundPod, releaseNS string) ([]PodSpec, map[string]cluster.NodeUsage) {
	cur := maps.Clone(bound)
	rolls := make([]*rollout, len(surge))
	for i, s := range surge {
		r := &rollout{spec: s, left: s.Replicas}
		key := WorkloadKey(s.Kind, s.Namespace, s.Name, releaseNS)
		for _, p := range own {
			if WorkloadKey(p.OwnerKind, p.Namespace, p.OwnerName, releaseNS) == key {
				r.old = append(r.old, p)
			}
		}
		rolls[i] = r
	}
	for progress := true; progress; {
		progress = false
		for _, r := range rolls {
			if r.left > 0 && r.step(nodes, cur) {
				progress = true
			}
		}
	}
	var stuck []PodSpec
	for _, r := range rolls {
		if r.left > 0 {
			one := r.spec
			one.Replicas = 1
			stuck = append(stuck, one)
		}
	}
	return stuck, cur
}

// step places one new pod of r where it fits beside cur and frees one of
// its old pods, updating cur; false when the new pod fits nowhere.
func (r *rollout) step(nodes []cluster.Node, cur map[string]cluster.NodeUsage) bool {
	one := r.spec
	one.Replicas = 1
	node, ok := placeOne(one, nodes, cur)
	if !ok {
		return false
	}
	req := resourcehelper.PodRequests(&corev1.Pod{Spec: one.Spec}, resourcehelper.PodResourcesOptions{})
	u := cur[node]
	u.MilliCPU += req.Cpu().MilliValue()
	u.MemoryBytes += req.Memory().Value()
	u.EphemeralBytes += req.StorageEphemeral().Value()
	u.Pods++
	cur[node] = u
	r.left--
	if len(r.old) > 0 {
		o := r.old[0]
		r.old = r.old[1:]
		release(cur, o)
	}
	return true
}

// release takes the requests of bound pod p off its node in usage.
func release(usage map[string]cluster.NodeUsage, p cluster.BoundPod) {
	u := usage[p.Node]
	u.MilliCPU -= p.MilliCPU
	u.MemoryBytes -= p.MemoryBytes
	u.EphemeralBytes -= p.EphemeralBytes
	u.Pods--
	usage[p.Node] = u
}

// placeOne returns the node Fit would place the single pod of spec on.
func placeOne(spec PodSpec, nodes []cluster.Node, bound map[string]cluster.NodeUsage) (string, bool) {
	for _, n := range sortedNodes(nodes) {
		v := Fit([]PodSpec{spec}, []cluster.Node{n}, bound)
		if v.Nodes == 1 && len(v.Unfit) == 0 {
			return n.Name, true
		}
	}
	return "", false
}

func sortedNodes(nodes []cluster.Node) []cluster.Node {
	out := slices.Clone(nodes)
	slices.SortFunc(out, func(a, b cluster.Node) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// FreeOwnPods returns bound with the requests of the pods (own) of the
// freed workloads taken off their nodes, and how many pods that is.
func FreeOwnPods(bound map[string]cluster.NodeUsage, own []cluster.BoundPod, freed map[string]bool, releaseNS string) (map[string]cluster.NodeUsage, int) {
	out := maps.Clone(bound)
	n := 0
	for _, p := range own {
		if !freed[WorkloadKey(p.OwnerKind, p.Namespace, p.OwnerName, releaseNS)] {
			continue
		}
		release(out, p)
		n++
	}
	return out, n
}
