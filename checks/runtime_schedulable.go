package checks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/schedule"
)

// RuntimeSchedulable passes when every pod the runtime will run fits on a
// Ready, schedulable node, given what the pods already bound there request
// and the pods' nodeSelector, required node affinity and tolerations
// (docs/checks/runtime-schedulable.md). The pods come from RuntimePods; the
// placement is first-fit decreasing (schedule.Fit), which is what the
// scheduler's NodeResourcesFit filter admits, one pod at a time. Before
// `helm upgrade` (--upgrade) it places the target's pods the way the
// upgrade starts them, beside the release's own pods that still run
// (schedule.PlanUpgrade, SimulateRollouts; docs/checks/runtime-schedulable.md,
// "Before helm upgrade").
func RuntimeSchedulable() Check {
	return Check{
		Meta: Meta{
			ID:         "runtime-schedulable",
			Impact:     ImpactRuntimeBreaks,
			ReadsChart: true,
			Category:   CategoryCluster,
			Modes:      ModePre | ModeUpgrade,
			Title:      "Every pod the runtime will run fits on a Ready, schedulable node",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
		},
		Run: runRuntimeSchedulable,
	}
}

// RuntimePodSpec is one kind of pod the runtime runs: Replicas copies of
// Spec (schedule.PodSpec).
type RuntimePodSpec = schedule.PodSpec

// RuntimePods returns the pods the runtime will run and where they were read
// from: the run's rendered release (--chart with the given values), its
// workloads as schedule.InstallPods keeps them, else the chart 0.30.0
// defaults (schedule.DefaultPods), with the reason the rendering was not
// used. The error is a manifest that does not decode.
func RuntimePods(ctx context.Context, env *Env) ([]RuntimePodSpec, string, error) {
	r, err := env.Rendering(ctx)
	if err != nil {
		reason := "no chart rendered"
		var le *chart.LoadError
		switch {
		case env.Chart == nil:
			reason = "no chart given"
		case errors.As(err, &le):
			reason = "the chart could not be loaded: " + strings.Join(strings.Fields(le.Error()), " ")
		default:
			if _, ok := chart.IsRenderError(err); ok {
				reason = "the chart does not render with these values (see chart-renders)"
			}
		}
		return schedule.DefaultPods(), plan.DefaultRuntimePodsSource + "; " + reason, nil
	}
	all, err := renderedWorkloads(env, r)
	if err != nil {
		return nil, "", err
	}
	return schedule.InstallPods(all), fmt.Sprintf("the rendered chart %s %s with the given values", r.ChartName, r.ChartVersion), nil
}

// RuntimePodsFromManifest reads the pods a rendered manifest (`helm template`
// output, or a release's manifest plus its hooks) will run
// (schedule.WorkloadsOf, schedule.InstallPods): Deployments and
// StatefulSets × spec.replicas (1 when unset), and Jobs (× parallelism, 1
// when unset) that are not hooks or are install/upgrade hooks. Documents
// of other kinds are ignored; a document that does not decode is an error.
func RuntimePodsFromManifest(manifest string) ([]RuntimePodSpec, error) {
	all, err := manifestWorkloads(manifest)
	if err != nil {
		return nil, err
	}
	return schedule.InstallPods(all), nil
}

// renderedWorkloads are the workloads of a rendering (its objects and
// hooks), decoded once per run and shared by the checks that read them.
func renderedWorkloads(env *Env, r *chart.Rendering) ([]RuntimePodSpec, error) {
	return cluster.Memo(env.Cluster, fmt.Sprintf("chart/workloads/%p", r), func() ([]RuntimePodSpec, error) {
		return schedule.WorkloadsOf(append(append([]chart.Object(nil), r.Objects...), r.Hooks...))
	})
}

// currentWorkloads are the workloads of the revision an upgrade starts
// from (its stored manifest, read once per run: chart.Upgrade.CurrentObjects).
func currentWorkloads(u *chart.Upgrade) ([]RuntimePodSpec, error) {
	objs, err := u.CurrentObjects()
	if err != nil {
		return nil, err
	}
	return schedule.WorkloadsOf(objs)
}

func runRuntimeSchedulable(ctx context.Context, env *Env) (Result, error) {
	// The cluster reads do not wait for the chart's rendering: both start
	// now (the snapshot shares them with every other check).
	go func() { _, _ = env.Cluster.BoundPodRequests() }()
	go func() { _, _ = env.Cluster.Nodes() }()
	if env.Upgrading() {
		return runUpgradeSchedulable(ctx, env)
	}
	specs, source, err := RuntimePods(ctx, env)
	if err != nil {
		return Result{}, err
	}
	nodes, err := env.Cluster.Nodes()
	if err != nil {
		return Result{}, err
	}
	bound, err := env.Cluster.BoundPodRequests()
	if err != nil {
		return Result{}, err
	}
	v := schedule.Fit(specs, nodes, bound)
	totals := fmt.Sprintf("%d pods requesting cpu %s, memory %s in all, from %s", v.Pods, FormatMilliCPU(v.MilliCPU), formatMi(v.MemoryBytes), source)
	if len(v.Unfit) == 0 {
		return Pass("every runtime pod fits on the %d Ready, schedulable nodes beside the pods already bound there (%s)", v.Nodes, totals), nil
	}
	if v.Nodes == 0 {
		return Fail("no Ready, schedulable node for the runtime's %s", totals).
			WithHint("add a node, or uncordon one (kubectl uncordon NODE)"), nil
	}
	return unfitResult(fmt.Sprintf("%d of %d runtime pods would stay Pending: %s", len(v.Unfit), v.Pods, unfitList(v)), v, totals), nil
}

// schedStep is one step of an upgrade whose pods need room: its pods,
// the usage they are placed beside, and the failure's words (a format of
// the pods left over, of all and the list of those left).
type schedStep struct {
	pods  []RuntimePodSpec
	bound map[string]cluster.NodeUsage
	when  string
}

// schedUpgrade is what runUpgradeSchedulable reads before it places
// anything: the plan of the target's pods, the cluster's nodes and usage,
// the release's own bound pods, and the words for where the pods come from
// and who starts them.
type schedUpgrade struct {
	plan        schedule.UpgradePlan
	nodes       []cluster.Node
	bound       map[string]cluster.NodeUsage
	own         []cluster.BoundPod
	source, who string
}

// readSchedUpgrade reads what an --upgrade placement needs; skip is set when the
// target does not render (renderingForChecks).
func readSchedUpgrade(ctx context.Context, env *Env) (s schedUpgrade, skip *Result, err error) {
	if _, skip, err := renderingForChecks(ctx, env); skip != nil || err != nil {
		return s, skip, err
	}
	u, err := env.Upgrade(ctx)
	if err != nil {
		return s, nil, err
	}
	target, err := renderedWorkloads(env, u.Target)
	if err != nil {
		return s, nil, err
	}
	current, err := currentWorkloads(u)
	if err != nil {
		return s, nil, fmt.Errorf("manifest of revision %d: %w", u.Current.Version, err)
	}
	if s.nodes, err = env.Cluster.Nodes(); err != nil {
		return s, nil, err
	}
	if s.bound, err = env.Cluster.BoundPodRequests(); err != nil {
		return s, nil, err
	}
	ns := env.Inputs.Namespace
	if s.own, err = env.Cluster.BoundPodsIn(ns); err != nil {
		return s, nil, err
	}
	s.plan = schedule.PlanUpgrade(target, current, ns)
	from := fmt.Sprintf("revision %d", u.Current.Version)
	if c := u.Current.Chart; c != nil && c.Metadata != nil {
		from += " (chart " + c.Metadata.Version + ")"
	}
	s.source = fmt.Sprintf("the target %s %s rendered by helm upgrade, against %s", u.Target.ChartName, u.Target.ChartVersion, from)
	s.who = "helm upgrade"
	if u.Sync != nil {
		s.who = "Argo CD's sync"
		s.source = fmt.Sprintf("the target %s %s rendered as Argo CD's sync renders it, against what Argo CD deployed (Application %s, chart %s)", u.Target.ChartName, u.Target.ChartVersion, u.Sync.App, u.Sync.ChartVersion)
	}
	return s, nil, nil
}

// runUpgradeSchedulable is runtime-schedulable before `helm upgrade`:
// the pre-upgrade hooks beside every pod bound now, the rollout played out
// (schedule.SimulateRollouts), then the new and replaced pods with the
// requests of the release's replaced pods freed (schedule.FreeOwnPods).
func runUpgradeSchedulable(ctx context.Context, env *Env) (Result, error) {
	s, skip, err := readSchedUpgrade(ctx, env)
	if skip != nil || err != nil {
		return derefResult(skip), err
	}
	ns := env.Inputs.Namespace
	afterBound, freedPods := schedule.FreeOwnPods(s.bound, s.own, s.plan.Freed, ns)
	steps := []schedStep{
		{s.plan.PreHooks, s.bound, "before the upgrade applies anything, beside every pod bound now: %d of %d pre-upgrade hook pods would stay Pending (helm upgrade waits for them): %s"},
		{nil, nil, "during the rollout, beside the old pods still running: the new pods of %d of %d Deployments with maxUnavailable 0 fit nowhere, so their rollout stalls with the old pods kept: %s"},
		{s.plan.After, afterBound, "after the rollout, with the requests of the release's replaced pods freed: %d of %d new or replaced pods would stay Pending: %s"},
	}
	for i, st := range steps {
		if i == 1 {
			// The rollout, played out: the stuck Deployments' next pods
			// beside what runs when it stalls.
			st.pods, st.bound = schedule.SimulateRollouts(s.plan.Surge, s.nodes, s.bound, s.own, ns)
		}
		if len(st.pods) == 0 {
			continue
		}
		v := schedule.Fit(st.pods, s.nodes, st.bound)
		totals := fmt.Sprintf("%d pods requesting cpu %s, memory %s in this step, from %s", v.Pods, FormatMilliCPU(v.MilliCPU), formatMi(v.MemoryBytes), s.source)
		if v.Nodes == 0 {
			return Fail("no Ready, schedulable node for the upgraded runtime's %s", totals).
				WithHint("add a node, or uncordon one (kubectl uncordon NODE)"), nil
		}
		if len(v.Unfit) == 0 {
			continue
		}
		n := v.Pods
		if i == 1 {
			n = len(s.plan.Surge)
		}
		res := unfitResult(fmt.Sprintf(st.when, len(v.Unfit), n, unfitList(v)), v, totals)
		if i == 1 {
			res.Hint += "; or set the Deployment's strategy.rollingUpdate.maxUnavailable to 1 (old pods go first) or strategy.type Recreate"
		}
		return res, nil
	}
	ready := 0
	for _, n := range s.nodes {
		if n.Ready && !n.Unschedulable {
			ready++
		}
	}
	return Pass("every pod %s starts fits on the %d Ready, schedulable nodes: %s after the rollout (the requests of %s of the release freed), %s rolled one new pod at a time beside the old ones, %s; unchanged workloads keep %s running (from %s)",
		s.who, ready, plural(schedule.CountPods(s.plan.After), "new or replaced pod"), plural(freedPods, "replaced pod"), plural(len(s.plan.Surge), "Deployment"),
		plural(schedule.CountPods(s.plan.PreHooks), "pre-upgrade hook pod"), plural(s.plan.Kept, "pod"), s.source), nil
}

// unfitList names the pods of v that fit nowhere, each with its requests:
// "app (cpu 1500m, memory 256Mi), ...".
func unfitList(v schedule.Verdict) string {
	names := make([]string, len(v.Unfit))
	for i, p := range v.Unfit {
		names[i] = fmt.Sprintf("%s (%s)", p.Name, needFigures(p))
	}
	return strings.Join(names, ", ")
}

func needFigures(p schedule.Need) string {
	s := fmt.Sprintf("cpu %s, memory %s", FormatMilliCPU(p.MilliCPU), formatMi(p.MemoryBytes))
	if p.EphemeralBytes > 0 {
		s += ", ephemeral-storage " + formatMi(p.EphemeralBytes)
	}
	return s
}

// formatMi renders bytes as Kubernetes quantities do in binary units ("512Mi", "2Gi").
func formatMi(b int64) string {
	return resource.NewQuantity(b, resource.BinarySI).String()
}

// unfitResult is the failure of a placement with pods left over: msg, the
// closest node, totals.
func unfitResult(msg string, v schedule.Verdict, totals string) Result {
	var refs []ObjectRef
	if v.ClosestFound {
		c := v.Closest
		msg += fmt.Sprintf("; closest node %s has free cpu %s, memory %s", c.Node.Name, FormatMilliCPU(max(c.MilliCPU, 0)), formatMi(max(c.MemoryBytes, 0)))
		if c.Node.AllocatableEphemeralBytes == 0 {
			msg += ", and reports no ephemeral-storage"
		}
		refs = append(refs, ObjectRef{Kind: "Node", Name: c.Node.Name})
	} else {
		msg += "; no Ready, schedulable node matches their nodeSelector, node affinity and tolerations"
	}
	msg += " (" + totals + ")"
	return Fail("%s", msg).
		WithHint("add a node (or a larger one) with the room above free, or free requests on an existing one (kubectl describe node NODE lists what its pods request)").
		WithObjects(refs...)
}
