package checks

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Before `helm upgrade` (--upgrade) runtime-schedulable places the target's
// pods the way the upgrade starts them, beside the release's own pods that
// still run (docs/checks/runtime-schedulable.md, "Before helm upgrade"):
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
//     rollout is played out (simulateRollouts): every such Deployment
//     places a new pod where one fits beside every pod bound now, and each
//     pod placed frees one of its old pods, which may make room for
//     another Deployment's; when no new pod fits anywhere while some
//     remain, those rollouts stall with the old pods kept. A Deployment that may take
//     pods down first (maxUnavailable ≥ 1), Recreate, and a StatefulSet
//     (RollingUpdate deletes each pod before creating its successor) free
//     room before they need it; a StatefulSet with OnDelete is not rolled.
//   - pre-upgrade hook Jobs run before anything is applied, beside every
//     pod bound now; post-upgrade hook Jobs run with the new pods.
//
// The Deployment controller's fenceposts are Kubernetes' own
// (pkg/controller/deployment/util ResolveFenceposts: maxSurge rounds up,
// maxUnavailable down, both 0 means maxUnavailable 1).

// upgradePods is the target's pods sorted by when the upgrade needs room
// for them.
type upgradePods struct {
	// preHooks run beside every pod bound now; surge are the rollout's first
	// new pods, beside every pod bound now; after are the pods placed once
	// the rollout is done, with the requests of freed's pods released.
	preHooks, surge, after []RuntimePodSpec
	// freed are the workloads (workloadKey) whose current pods go.
	freed map[string]bool
	// kept counts the pods of unchanged workloads left running.
	kept int
}

func workloadKey(kind, ns, name, releaseNS string) string {
	if ns == "" {
		ns = releaseNS
	}
	return kind + "/" + ns + "/" + name
}

// planUpgradePods sorts target's pods (the target's workloads and hooks)
// against current (the workloads of the revision Helm upgrades from).
func planUpgradePods(target, current []RuntimePodSpec, releaseNS string) upgradePods {
	p := upgradePods{freed: map[string]bool{}}
	cur := map[string]RuntimePodSpec{}
	for _, c := range current {
		if c.Hook == "" {
			cur[workloadKey(c.Kind, c.Namespace, c.Name, releaseNS)] = c
		}
	}
	rendered := map[string]bool{}
	for _, t := range target {
		if t.Hook != "" {
			switch {
			case t.Kind != "Job":
			case strings.Contains(t.Hook, "pre-upgrade"):
				p.preHooks = append(p.preHooks, t)
			case strings.Contains(t.Hook, "post-upgrade"):
				p.after = append(p.after, t)
			}
			continue
		}
		key := workloadKey(t.Kind, t.Namespace, t.Name, releaseNS)
		rendered[key] = true
		c, ok := cur[key]
		switch {
		case !ok:
			p.after = append(p.after, t)
		case t.Kind == "Job":
			// An existing Job is not run again (its template is immutable).
		case equality.Semantic.DeepEqual(t.Template, c.Template) || t.StatefulSet != nil && t.StatefulSet.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType:
			p.kept += min(t.Replicas, c.Replicas)
			if t.Replicas > c.Replicas {
				more := t
				more.Replicas = t.Replicas - c.Replicas
				p.after = append(p.after, more)
			}
		default:
			p.freed[key] = true
			p.after = append(p.after, t)
			if n := surgeBesideOld(t); n > 0 {
				s := t
				s.Replicas = n
				p.surge = append(p.surge, s)
			}
		}
	}
	for key := range cur {
		if !rendered[key] {
			p.freed[key] = true
		}
	}
	return p
}

// surgeBesideOld returns how many new pods a changed Deployment starts
// while all its old pods still run: maxSurge when maxUnavailable resolves
// to 0 (Kubernetes' ResolveFenceposts over spec.replicas), else 0.
func surgeBesideOld(t RuntimePodSpec) int {
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

// simulateRollouts plays out the rollouts of surge (changed Deployments
// with maxUnavailable 0) beside bound: a new pod is placed first fit (as
// FitRuntimePods does), then one old pod of its Deployment (own, matched by
// workloadKey) is freed, until every new pod is placed or none fits. It
// returns the Deployments left with pods to place (one replica each, for
// the message) and the usage at that point.
func simulateRollouts(surge []RuntimePodSpec, nodes []cluster.Node, bound map[string]cluster.NodeUsage, own []cluster.BoundPod, releaseNS string) ([]RuntimePodSpec, map[string]cluster.NodeUsage) {
	cur := maps.Clone(bound)
	type roll struct {
		spec RuntimePodSpec
		old  []cluster.BoundPod
		left int
	}
	rolls := make([]*roll, len(surge))
	for i, s := range surge {
		r := &roll{spec: s, left: s.Replicas}
		key := workloadKey(s.Kind, s.Namespace, s.Name, releaseNS)
		for _, p := range own {
			if workloadKey(p.OwnerKind, p.Namespace, p.OwnerName, releaseNS) == key {
				r.old = append(r.old, p)
			}
		}
		rolls[i] = r
	}
	for progress := true; progress; {
		progress = false
		for _, r := range rolls {
			if r.left == 0 {
				continue
			}
			one := r.spec
			one.Replicas = 1
			node, ok := placeOne(one, nodes, cur)
			if !ok {
				continue
			}
			req := resourcehelper.PodRequests(&corev1.Pod{Spec: one.Spec}, resourcehelper.PodResourcesOptions{})
			u := cur[node]
			u.MilliCPU += req.Cpu().MilliValue()
			u.MemoryBytes += req.Memory().Value()
			u.EphemeralBytes += req.StorageEphemeral().Value()
			u.Pods++
			cur[node] = u
			r.left--
			progress = true
			if len(r.old) > 0 {
				o := r.old[0]
				r.old = r.old[1:]
				u := cur[o.Node]
				u.MilliCPU -= o.MilliCPU
				u.MemoryBytes -= o.MemoryBytes
				u.EphemeralBytes -= o.EphemeralBytes
				u.Pods--
				cur[o.Node] = u
			}
		}
	}
	var stuck []RuntimePodSpec
	for _, r := range rolls {
		if r.left > 0 {
			one := r.spec
			one.Replicas = 1
			stuck = append(stuck, one)
		}
	}
	return stuck, cur
}

// placeOne returns the node FitRuntimePods would place the single pod of
// spec on.
func placeOne(spec RuntimePodSpec, nodes []cluster.Node, bound map[string]cluster.NodeUsage) (string, bool) {
	for _, n := range sortedNodes(nodes) {
		v := FitRuntimePods([]RuntimePodSpec{spec}, []cluster.Node{n}, bound)
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

// freeOwnPods returns bound with the requests of the pods of the freed
// workloads taken off their nodes.
func freeOwnPods(bound map[string]cluster.NodeUsage, own []cluster.BoundPod, freed map[string]bool, releaseNS string) (map[string]cluster.NodeUsage, int) {
	out := maps.Clone(bound)
	n := 0
	for _, p := range own {
		if !freed[workloadKey(p.OwnerKind, p.Namespace, p.OwnerName, releaseNS)] {
			continue
		}
		u := out[p.Node]
		u.MilliCPU -= p.MilliCPU
		u.MemoryBytes -= p.MemoryBytes
		u.EphemeralBytes -= p.EphemeralBytes
		u.Pods--
		out[p.Node] = u
		n++
	}
	return out, n
}

func countPods(specs []RuntimePodSpec) int {
	n := 0
	for _, s := range specs {
		n += s.Replicas
	}
	return n
}

func runUpgradeSchedulable(ctx context.Context, env *Env) (Result, error) {
	if _, skip, err := renderingForChecks(ctx, env); skip != nil || err != nil {
		return derefResult(skip), err
	}
	u, err := env.Upgrade(ctx)
	if err != nil {
		return Result{}, err
	}
	target, err := renderedWorkloads(env, u.Target)
	if err != nil {
		return Result{}, err
	}
	current, err := currentWorkloads(u)
	if err != nil {
		return Result{}, fmt.Errorf("manifest of revision %d: %w", u.Current.Version, err)
	}
	nodes, err := env.Cluster.Nodes()
	if err != nil {
		return Result{}, err
	}
	bound, err := env.Cluster.BoundPodRequests()
	if err != nil {
		return Result{}, err
	}
	ns := env.Inputs.Namespace
	own, err := env.Cluster.BoundPodsIn(ns)
	if err != nil {
		return Result{}, err
	}
	plan := planUpgradePods(target, current, ns)
	afterBound, freedPods := freeOwnPods(bound, own, plan.freed, ns)

	from := fmt.Sprintf("revision %d", u.Current.Version)
	if c := u.Current.Chart; c != nil && c.Metadata != nil {
		from += " (chart " + c.Metadata.Version + ")"
	}
	source := fmt.Sprintf("the target %s %s rendered by helm upgrade, against %s", u.Target.ChartName, u.Target.ChartVersion, from)
	who := "helm upgrade"
	if u.Sync != nil {
		who = "Argo CD's sync"
		source = fmt.Sprintf("the target %s %s rendered as Argo CD's sync renders it, against what Argo CD deployed (Application %s, chart %s)", u.Target.ChartName, u.Target.ChartVersion, u.Sync.App, u.Sync.ChartVersion)
	}
	ready := 0
	for _, n := range nodes {
		if n.Ready && !n.Unschedulable {
			ready++
		}
	}
	phases := []struct {
		pods  []RuntimePodSpec
		bound map[string]cluster.NodeUsage
		when  string
	}{
		{plan.preHooks, bound, "before the upgrade applies anything, beside every pod bound now: %d of %d pre-upgrade hook pods would stay Pending (helm upgrade waits for them): %s"},
		{nil, nil, "during the rollout, beside the old pods still running: the new pods of %d of %d Deployments with maxUnavailable 0 fit nowhere, so their rollout stalls with the old pods kept: %s"},
		{plan.after, afterBound, "after the rollout, with the requests of the release's replaced pods freed: %d of %d new or replaced pods would stay Pending: %s"},
	}
	for i, ph := range phases {
		if i == 1 {
			// The rollout, played out: the stuck Deployments' next pods
			// beside what runs when it stalls.
			stuck, at := simulateRollouts(plan.surge, nodes, bound, own, ns)
			if len(stuck) == 0 {
				continue
			}
			ph.pods, ph.bound = stuck, at
		}
		if len(ph.pods) == 0 {
			continue
		}
		v := FitRuntimePods(ph.pods, nodes, ph.bound)
		totals := fmt.Sprintf("%d pods requesting cpu %s, memory %s in this step, from %s", v.Pods, FormatMilliCPU(v.MilliCPU), formatMi(v.MemoryBytes), source)
		if v.Nodes == 0 {
			return Fail("no Ready, schedulable node for the upgraded runtime's %s", totals).
				WithHint("add a node, or uncordon one (kubectl uncordon NODE)"), nil
		}
		if len(v.Unfit) > 0 {
			n := v.Pods
			if i == 1 {
				n = len(plan.surge)
			}
			res := unfitResult(fmt.Sprintf(ph.when, len(v.Unfit), n, strings.Join(v.Unfit, ", ")), v, totals)
			if i == 1 {
				res.Hint += "; or set the Deployment's strategy.rollingUpdate.maxUnavailable to 1 (old pods go first) or strategy.type Recreate"
			}
			return res, nil
		}
	}
	return Pass("every pod %s starts fits on the %d Ready, schedulable nodes: %s after the rollout (the requests of %s of the release freed), %s rolled one new pod at a time beside the old ones, %s; unchanged workloads keep %s running (from %s)",
		who, ready, plural(countPods(plan.after), "new or replaced pod"), plural(freedPods, "replaced pod"), plural(len(plan.surge), "Deployment"),
		plural(countPods(plan.preHooks), "pre-upgrade hook pod"), plural(plan.kept, "pod"), source), nil
}

// currentWorkloads are the workloads of the revision an upgrade starts
// from (its stored manifest, read once per run: chart.Upgrade.CurrentObjects).
func currentWorkloads(u *chart.Upgrade) ([]RuntimePodSpec, error) {
	objs, err := u.CurrentObjects()
	if err != nil {
		return nil, err
	}
	return workloadsOf(objs)
}
