package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/admission"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// RuntimeComponents are the workload names the gitops-runtime chart renders
// (https://github.com/codefresh-io/gitops-runtime-helm/tree/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_components); names starting with "argo-cd-" are the Argo CD
// subchart's. Workloads of the release are found by Helm's
// meta.helm.sh/release-name annotation; these names also catch a runtime
// installed without it (e.g. rendered by Argo CD).
var RuntimeComponents = plan.RuntimeComponents()

// Bounds of the per-workload detail, so a report stays readable.
const (
	maxPodsShown   = 3
	maxEventsShown = 3
	maxDetailChars = 240
)

// RuntimeWorkloads passes when every Deployment and StatefulSet of the
// runtime in its namespace has all its replicas available (the Deployments
// of https://github.com/codefresh-io/gitops-runtime-helm/tree/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_components). For each one that does not,
// it shows its pods' waiting or terminated reasons (CrashLoopBackOff,
// ImagePullBackOff, CreateContainerConfigError, Pending with the scheduler's
// message), restart counts and the latest Warning events; Pods and Events of
// the runtime namespace are listed only then. It also warns when Secret
// codefresh-token is missing: cap-app-proxy creates it when the runtime
// registers, and gitops-operator, argo-gateway and the event reporters cannot
// start without it (https://github.com/codefresh-io/gitops-runtime-helm/tree/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_components, https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_components/gitops-operator/_env.yaml).
func RuntimeWorkloads() Check {
	return Check{
		Meta: Meta{
			ID:       "runtime-workloads",
			Impact:   ImpactRuntimeBreaks,
			Core:     true,
			Category: CategoryRuntime,
			Modes:    ModePost,
			Title:    "Every runtime Deployment and StatefulSet has its replicas available",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
		},
		Run: scopedRun(runRuntimeWorkloads, "deployments", "statefulsets"),
	}
}

func runRuntimeWorkloads(_ context.Context, env *Env) (Result, error) {
	ns := env.Inputs.Namespace
	mine, err := runtimeWorkloads(env)
	if err != nil {
		return Result{}, err
	}
	if len(mine) == 0 {
		return Fail("no Deployment or StatefulSet of release %s in namespace %s", env.Inputs.ReleaseName, ns).
			WithHint(fmt.Sprintf("check that the runtime is installed there (helm list -n %s) or pass its namespace (-n) and release name (--release-name)", ns)), nil
	}
	var down []cluster.Workload
	for _, w := range mine {
		if w.Desired > 0 && w.Available < w.Desired {
			down = append(down, w)
		}
	}
	hasToken, err := env.Cluster.SecretExists(ns, plan.TokenSecretName)
	if err != nil && !cluster.IsForbidden(err) {
		return Result{}, err
	}
	tokenKnown := err == nil
	tokenNote := fmt.Sprintf("Secret %s is missing in namespace %s: cap-app-proxy creates it when the runtime registers with the platform, and gitops-operator, argo-gateway and the event reporters wait for it", plan.TokenSecretName, ns)
	tokenHint := fmt.Sprintf("read why cap-app-proxy has not registered: kubectl logs deploy/cap-app-proxy -n %s --tail=50", ns)

	if len(down) == 0 {
		if tokenKnown && !hasToken {
			// The first line says that this is expected until the runtime
			// registers (a fresh install, a demo without a platform).
			return Warn("Secret %s is missing in namespace %s: expected until the runtime registers with the platform (cap-app-proxy creates it then)\nall %d runtime workloads are available; gitops-operator, argo-gateway and the event reporters wait for the Secret",
				plan.TokenSecretName, ns, len(mine)).WithHint(tokenHint), nil
		}
		return Pass("all %d runtime workloads in namespace %s have their replicas available", len(mine), ns), nil
	}

	d, err := describeDown(env, down, ns)
	if err != nil {
		return Result{}, err
	}
	lines := append([]string{fmt.Sprintf("%d of %d runtime workloads not available:", len(down), len(mine))}, d.lines...)
	if tokenKnown && !hasToken {
		lines = append(lines, tokenNote)
	}
	hint := fmt.Sprintf("see the pods and events: kubectl get pods -n %s ; kubectl get events -n %s --field-selector type=Warning --sort-by=.lastTimestamp", ns, ns)
	if d.firstPod != "" {
		hint = fmt.Sprintf("kubectl describe pod %s -n %s ; kubectl logs %s -n %s --all-containers --previous ; ", d.firstPod, ns, d.firstPod, ns) + hint
	}
	if tokenKnown && !hasToken {
		hint += " ; " + tokenHint
	}
	if len(d.admissionHint) > 0 {
		hint = strings.Join(d.admissionHint, " | ") + " ; " + hint
	}
	return Fail("%s", strings.Join(lines, "\n")).WithHint(hint).WithObjects(d.refs...), nil
}

// downDetail is what runtime-workloads shows of the workloads that are not
// available: a few lines each (its pods, their states, its latest Warning
// events), the workloads, the first pod named, and the fixes of the
// admission refusals its events quote.
type downDetail struct {
	lines         []string
	refs          []ObjectRef
	firstPod      string
	admissionHint []string
}

// describeDown reads the pods and Warning events of namespace ns (and
// which nodes stopped reporting) and describes the workloads of down.
func describeDown(env *Env, down []cluster.Workload, ns string) (downDetail, error) {
	var d downDetail
	pods, err := env.Cluster.Pods(ns)
	if err != nil {
		return d, err
	}
	events, err := env.Cluster.WarningEvents(ns)
	if err != nil && !cluster.IsForbidden(err) {
		return d, err
	}
	// Nodes whose Ready is Unknown: their pods may still say Running and
	// ready, but nothing has reported on them since the kubelet went silent.
	silent := map[string]bool{}
	if nodes, err := env.Cluster.Nodes(); err == nil {
		for _, n := range nodes {
			if n.ReadyUnknown {
				silent[n.Name] = true
			}
		}
	} else if !cluster.IsForbidden(err) {
		return d, err
	}
	for _, w := range down {
		d.lines = append(d.lines, fmt.Sprintf("%s/%s: %d/%d available", w.Kind, w.Name, w.Available, w.Desired))
		d.refs = append(d.refs, ObjectRef{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name})
		wpods := podsOf(pods, w)
		d.describePods(wpods, silent)
		d.describeEvents(eventsOf(events, w, wpods, maxEventsShown), w, ns)
	}
	return d, nil
}

// describePods adds a line per pod of a workload (up to maxPodsShown),
// or says it has none.
func (d *downDetail) describePods(wpods []cluster.Pod, silent map[string]bool) {
	if len(wpods) == 0 {
		d.lines = append(d.lines, "  no pods (the controller could not create them: see the events below)")
	}
	for i, p := range wpods {
		if i == maxPodsShown {
			d.lines = append(d.lines, fmt.Sprintf("  and %d more pods", len(wpods)-maxPodsShown))
			break
		}
		if d.firstPod == "" {
			d.firstPod = p.Name
		}
		desc := DescribePod(p)
		if silent[p.Node] {
			desc = fmt.Sprintf("not ready, node %s stopped reporting (Ready Unknown); last reported: %s", p.Node, desc)
		}
		d.lines = append(d.lines, "  pod "+p.Name+": "+desc)
	}
}

// describeEvents adds a line per event of workload w, and the refusal and
// its fix when admission refused to create its pods (FailedCreate).
func (d *downDetail) describeEvents(events []cluster.Event, w cluster.Workload, ns string) {
	for _, e := range events {
		times := ""
		if e.Count > 1 {
			times = fmt.Sprintf(" (x%d)", e.Count)
		}
		d.lines = append(d.lines, fmt.Sprintf("  event %s/%s %s%s: %s", e.Kind, e.Name, e.Reason, times, clip(e.Message)))
		if e.Reason == "FailedCreate" {
			if r := admission.ParseRefusal(e.Message); r.Layer != admission.LayerOther {
				d.lines = append(d.lines, "    refused by "+r.Short())
				d.admissionHint = appendUnique(d.admissionHint, fixFor(r, []string{w.Name}, true, &admission.Plan{Chart: "gitops-runtime"}, ns, ""))
			}
		}
	}
}

// runtimeWorkloads returns the Deployments and StatefulSets of the runtime
// namespace that belong to the release (Helm annotation) or carry a known
// component name, sorted by kind and name.
func runtimeWorkloads(env *Env) ([]cluster.Workload, error) {
	ns, rel := env.Inputs.Namespace, env.Inputs.ReleaseName
	known := map[string]bool{}
	for _, n := range RuntimeComponents {
		known[n] = true
	}
	var out []cluster.Workload
	for _, list := range []func() ([]cluster.Workload, error){env.Cluster.Deployments, env.Cluster.StatefulSets} {
		ws, err := list()
		if err != nil {
			return nil, err
		}
		for _, w := range ws {
			if w.Namespace != ns {
				continue
			}
			if w.Annotations["meta.helm.sh/release-name"] == rel || known[w.Name] || strings.HasPrefix(w.Name, "argo-cd-") {
				out = append(out, w)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// podsOf returns the pods matched by the workload's selector, newest first.
func podsOf(pods []cluster.Pod, w cluster.Workload) []cluster.Pod {
	if len(w.Selector) == 0 {
		return nil
	}
	var out []cluster.Pod
	for _, p := range pods {
		if p.Namespace == w.Namespace && selects(w.Selector, p.Labels) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out
}

func selects(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// eventsOf returns up to n of the newest Warning events about the workload,
// its ReplicaSets (named <workload>-<hash>) or its pods. Events with the same
// object, reason and message are one, their counts summed, as `kubectl
// describe` shows them (the scheduler records a new FailedScheduling event
// for each attempt).
func eventsOf(events []cluster.Event, w cluster.Workload, pods []cluster.Pod, n int) []cluster.Event {
	podNames := map[string]bool{}
	for _, p := range pods {
		podNames[p.Name] = true
	}
	var out []cluster.Event
	seen := map[[4]string]int{}
	for _, e := range events { // newest first
		ok := (e.Kind == w.Kind && e.Name == w.Name) ||
			(e.Kind == "ReplicaSet" && strings.HasPrefix(e.Name, w.Name+"-")) ||
			(e.Kind == "Pod" && (podNames[e.Name] || strings.HasPrefix(e.Name, w.Name+"-")))
		if !ok {
			continue
		}
		if e.Count < 1 {
			e.Count = 1
		}
		key := [4]string{e.Kind, e.Name, e.Reason, e.Message}
		if i, dup := seen[key]; dup {
			out[i].Count += e.Count
			continue
		}
		if len(out) == n {
			continue // still fold later duplicates of the ones shown
		}
		seen[key] = len(out)
		out = append(out, e)
	}
	return out
}

// DescribePod renders why a pod is not running in one line: "Pending:
// <scheduler message>", or per container its waiting reason (with message),
// the reason and exit code of its last termination, and its restart count.
func DescribePod(p cluster.Pod) string {
	var parts []string
	if p.Unschedulable {
		parts = append(parts, "Pending, not scheduled: "+clip(p.SchedulerMessage))
	}
	for _, c := range p.Containers {
		if c.Ready && c.Waiting == "" {
			continue
		}
		var s []string
		if c.Waiting != "" {
			w := c.Waiting
			if c.WaitingMessage != "" {
				w += " (" + clip(c.WaitingMessage) + ")"
			}
			s = append(s, w)
		}
		if c.Terminated != "" {
			s = append(s, fmt.Sprintf("last terminated %s, exit code %d", c.Terminated, c.ExitCode))
		}
		if c.RestartCount > 0 {
			s = append(s, fmt.Sprintf("%d restarts", c.RestartCount))
		}
		if len(s) == 0 {
			s = append(s, "not ready")
		}
		kind := "container"
		if c.Init {
			kind = "init container"
		}
		parts = append(parts, fmt.Sprintf("%s %s: %s", kind, c.Name, strings.Join(s, ", ")))
	}
	if len(parts) == 0 {
		return string(p.Phase)
	}
	return strings.Join(parts, "; ")
}

// clip shortens s to maxDetailChars runes on one line.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxDetailChars {
		return string(r[:maxDetailChars-1]) + "…"
	}
	return s
}
