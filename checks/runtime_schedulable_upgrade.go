package checks

import (
	"context"
	"fmt"
	"maps"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"

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
//     default 25% of 1 to 3 replicas) first starts maxSurge new pods beside
//     all its old ones, and deletes an old pod only once a new one is
//     Ready. If those surge pods fit nowhere the rollout stalls, so they
//     are placed beside every pod bound now. A Deployment that may take
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
	target, err := manifestWorkloads(u.Target.Manifest)
	if err != nil {
		return Result{}, err
	}
	current, err := manifestWorkloads(u.Current.Manifest)
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
		{plan.surge, bound, "during the rollout, beside every old pod still running: %d of %d new pods of Deployments with maxUnavailable 0 would stay Pending, so their rollout stalls with the old pods kept: %s"},
		{plan.after, afterBound, "after the rollout, with the requests of the release's replaced pods freed: %d of %d new or replaced pods would stay Pending: %s"},
	}
	for i, ph := range phases {
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
			res := unfitResult(fmt.Sprintf(ph.when, len(v.Unfit), v.Pods, strings.Join(v.Unfit, ", ")), v, totals)
			if i == 1 {
				res.Hint += "; or set the Deployment's strategy.rollingUpdate.maxUnavailable to 1 (old pods go first) or strategy.type Recreate"
			}
			return res, nil
		}
	}
	return Pass("every pod helm upgrade starts fits on the %d Ready, schedulable nodes: %d new or replaced pods after the rollout (the requests of %d replaced pods of the release freed), %d rollout surge pods beside the old ones, %d pre-upgrade hook pods; %d pods of unchanged workloads keep running (from %s)",
		ready, countPods(plan.after), freedPods, countPods(plan.surge), countPods(plan.preHooks), plan.kept, source), nil
}
