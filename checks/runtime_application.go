package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/argocd"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// RuntimeApplicationCheck reads, after the install, the Argo CD
// Application that syncs the runtime (argocd.ManagingApplication: --argocd-app,
// else its inventory, its tracking annotation or its label): the most
// common card of Codefresh's Runtime Status panel is "Runtime application
// OUT_OF_SYNC" (https://codefresh.io/docs/docs/installation/gitops/runtime-status-panel/).
// It fails, listing what Argo CD wrote to the Application's status
// (https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/,
// https://github.com/argoproj/argo-cd/blob/v3.2.6/pkg/apis/application/v1alpha1/types.go):
// a sync status other than Synced with the out-of-sync resources (those
// that require pruning said so), a health other than Healthy with the
// resources that are not and their messages, a sync operation still
// running (its revision, start and the hooks that have not ended: a hook
// that never ends holds it), a last sync operation that
// failed with its message and the hook that failed, and the error
// conditions (ComparisonError, SyncError, InvalidSpecError, ...); each with
// the fix. It warns for warning conditions and when the Helm release
// record's chart version is not the live one (Argo CD renders with helm
// template and never writes release records: the runtime is upgraded by a
// commit to resources/<runtime>/chart in the Shared Configuration
// Repository, https://codefresh.io/docs/docs/installation/gitops/manage-runtimes/).
// The message always says the sync policy (automated, prune, selfHeal).
// With --wait it is re-run until the Application is Synced and Healthy.
// Skipped when no Application manages the runtime.
func RuntimeApplicationCheck() Check {
	return Check{
		Meta: Meta{
			ID:       "runtime-application",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryRuntime,
			Modes:    ModePost,
			Title:    "The runtime's Argo CD Application is Synced and Healthy and its last sync succeeded",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
		},
		Run: runRuntimeApplication,
	}
}

func runRuntimeApplication(_ context.Context, env *Env) (Result, error) {
	ra, err := env.RuntimeApp()
	if err != nil {
		return Result{}, err
	}
	ns := env.Inputs.Namespace
	if ra == nil {
		return Skip("no Argo CD Application manages the runtime in namespace %s (none holds its %s in its inventory, %s carries no tracking annotation, none is labelled %s: %s there): it is upgraded with helm upgrade",
			ns, RuntimeConfigMapName, RuntimeConfigMapName, argocd.RuntimeEntityLabel, argocd.RuntimeEntity), nil
	}
	if ra.App == nil {
		if env.ArgoCDApp != "" {
			return Fail("%s (%s) cannot be read: %s", ra.Name(), ra.Evidence, ra.Unreadable).
				WithHint("name the Application that syncs the runtime: --argocd-app NAMESPACE/NAME (kubectl get applications.argoproj.io -A)"), nil
		}
		return Warn("the runtime is managed by Argo CD (%s, %s), but the Application cannot be read: %s", ra.Name(), ra.Evidence, ra.Unreadable).
			WithHint("read it with credentials that may get applications.argoproj.io, or name it with --argocd-app NAMESPACE/NAME"), nil
	}
	a := ra.App
	ref := ObjectRef{Kind: "Application", Namespace: a.Namespace, Name: a.Name}
	f := &appFindings{refs: []ObjectRef{ref}, cli: a.Name}
	if a.Namespace != "" {
		f.cli = a.Namespace + "/" + a.Name
	}
	f.running(a.Operation, ns)
	f.syncStatus(a)
	f.health(a, ns)
	f.operation(a.Operation, ns)
	f.conditions(a.Conditions)
	stale, err := staleRecord(env, ra)
	if err != nil {
		return Result{}, err
	}
	if stale != "" {
		f.warned = append(f.warned, stale)
		f.hints = append(f.hints, argoUpgradeHint(ra))
	}
	if g := generatorHint(ra); g != "" && len(f.hints) == 0 {
		f.hints = append(f.hints, g)
	}
	where := fmt.Sprintf("%s (%s; %s)", ra.Name(), ra.Evidence, syncPolicy(a))
	switch {
	case len(f.failed) > 0:
		msg := where + ": " + strings.Join(append(f.failed, f.warned...), "; ")
		return Fail("%s", msg).WithHint(strings.Join(dedupe(f.hints), "\n")).WithObjects(f.refs...), nil
	case len(f.warned) > 0:
		return Warn("%s is Synced and Healthy; %s", where, strings.Join(f.warned, "; ")).WithHint(strings.Join(dedupe(f.hints), "\n")).WithObjects(f.refs...), nil
	}
	rev := ""
	if a.Revision != "" {
		rev = " at revision " + a.Revision
	}
	return Pass("%s is Synced and Healthy%s; its last sync succeeded", where, rev).WithObjects(ref), nil
}

// appFindings are what runtime-application finds wrong with the
// Application, in the order it says them: failures, warnings, the hints
// that fix them and the objects they name.
type appFindings struct {
	failed, warned, hints []string
	refs                  []ObjectRef
	// cli names the Application for the argocd CLI ("namespace/name").
	cli string
}

// syncStatus fails a sync status other than Synced, naming the resources
// out of sync.
func (f *appFindings) syncStatus(a *argocd.Application) {
	if a.SyncStatus == "Synced" {
		return
	}
	var out []string
	for _, r := range a.OutOfSync() {
		s := resourceName(r)
		if r.RequiresPruning {
			s += " (requires pruning)"
		}
		out = append(out, s)
		f.refs = append(f.refs, ObjectRef{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name})
	}
	msg := "sync status " + orUnknownStatus(a.SyncStatus)
	sortWorkloadsFirst(out)
	if len(out) > 0 {
		msg += fmt.Sprintf(": %s out of sync: %s", plural(len(out), "resource"), strings.Join(first(out, 6), ", "))
	}
	f.failed = append(f.failed, msg)
	hint := fmt.Sprintf("see what differs: argocd app diff %s (or the GitOps Apps dashboard, Current State); then sync: argocd app sync %s", f.cli, f.cli)
	if !a.Automated {
		hint += " (the sync policy is manual: nothing syncs a commit until someone does)"
	} else if !a.SelfHeal {
		hint += " (selfHeal is off: a change made in the cluster stays until the next commit or a manual sync)"
	}
	f.hints = append(f.hints, hint)
}

// health fails a health other than Healthy, naming the resources that are
// not and their messages.
func (f *appFindings) health(a *argocd.Application, ns string) {
	if a.Health == "Healthy" {
		return
	}
	var bad []string
	unhealthy, healthMessage := a.Unhealthy(), a.HealthMessage
	if len(unhealthy) == 0 {
		// Argo CD 3 keeps each resource's health in its resource tree, not
		// in the Application: its health message names the causes.
		if unhealthy = a.HealthCauses(); len(unhealthy) > 0 {
			healthMessage = ""
		}
	}
	for _, r := range unhealthy {
		s := resourceName(r) + " " + r.Health
		if r.HealthMessage != "" {
			s += " (" + oneLineText(r.HealthMessage, 160) + ")"
		}
		bad = append(bad, s)
		f.refs = append(f.refs, ObjectRef{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name})
	}
	msg := "health " + orUnknownStatus(a.Health)
	if healthMessage != "" {
		msg += " (" + oneLineText(healthMessage, 160) + ")"
	}
	if len(bad) > 0 {
		msg += ": " + strings.Join(first(bad, 6), "; ")
	}
	f.failed = append(f.failed, msg)
	f.hints = append(f.hints, fmt.Sprintf("the runtime's own checks say why a workload is not available: %s --post -n %s --only runtime-workloads; a Missing resource is one the sync has not created yet (sync, or see the last operation)", "kubectl gitops-preflight", ns))
}

// running says first a sync operation that is running: until it ends, the
// sync status and health describe a runtime half-way through it, and a
// hook that never ends holds it for good.
func (f *appFindings) running(op *argocd.Operation, ns string) {
	if !op.Running() {
		return
	}
	msg := "a sync is running"
	if op.Revision != "" {
		msg += " to revision " + shortRevision(op.Revision)
	}
	if op.StartedAt != "" {
		msg += " (started " + op.StartedAt + ")"
	}
	if op.Message != "" {
		msg += ": " + clipMiddle(op.Message, 240)
	}
	running := op.RunningHooks()
	// A hook that runs (a Job's or a Pod's) is what holds a sync; Argo CD
	// lists the hooks it has just created (a ServiceAccount, a ConfigMap)
	// as running too, until its next pass.
	sort.SliceStable(running, func(i, j int) bool { return runsWork(running[i].Kind) && !runsWork(running[j].Kind) })
	if hooks := f.hooks(running, 160); len(hooks) > 0 {
		msg += "; " + strings.Join(first(hooks, 3), "; ")
	}
	f.failed = append(f.failed, msg)
	f.hints = append(f.hints, fmt.Sprintf("wait for the sync to end (argocd app wait %s --operation, or this check with --wait 10m); a hook that does not end holds it: read its log (kubectl logs -n %s job/<hook>), then end the sync with argocd app terminate-op %s", f.cli, ns, f.cli))
}

// hooks words each hook of a sync's result ("PreSync hook Job ns/name
// Running: message", the message clipped to clip bytes) and names it among
// the findings' objects.
func (f *appFindings) hooks(results []argocd.ResourceResult, clip int) []string {
	var out []string
	for _, r := range results {
		h := fmt.Sprintf("%s hook %s %s", r.HookType, r.Kind, qualified(r.Namespace, r.Name))
		if r.HookPhase != "" {
			h += " " + r.HookPhase
		}
		if r.Message != "" {
			h += ": " + clipMiddle(r.Message, clip)
		}
		out = append(out, h)
		f.refs = append(f.refs, ObjectRef{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name})
	}
	return out
}

// runsWork reports whether a hook of kind runs until its work ends (a Job,
// a Pod, an Argo Workflow) rather than being created and done.
func runsWork(kind string) bool {
	return kind == "Job" || kind == "Pod" || kind == "Workflow"
}

// shortRevision is a Git revision as Argo CD's UI shows it: its first 8
// characters.
func shortRevision(rev string) string {
	if len(rev) > 8 {
		return rev[:8]
	}
	return rev
}

// operation fails a last sync operation that failed, with its message and
// the hooks that failed.
func (f *appFindings) operation(op *argocd.Operation, ns string) {
	if !op.Failed() {
		return
	}
	msg := "last sync " + op.Phase
	if op.Message != "" {
		msg += ": " + clipMiddle(op.Message, 240)
	}
	if hooks := f.hooks(op.FailedHooks(), 240); len(hooks) > 0 {
		msg += "; " + strings.Join(first(hooks, 3), "; ")
		f.hints = append(f.hints, fmt.Sprintf("read the failed hook's log (kubectl logs -n %s job/<hook>; the chart's validate-values hook runs as PreSync on every sync), fix its cause in the values of resources/<runtime>/chart in the Shared Configuration Repository, commit, and sync again", ns))
	} else {
		f.hints = append(f.hints, "fix the cause the message names, commit to the Shared Configuration Repository, and sync again (argocd app sync "+f.cli+")")
	}
	f.failed = append(f.failed, msg)
}

// conditions fails the error conditions and warns the others.
func (f *appFindings) conditions(conds []argocd.Condition) {
	for _, c := range conds {
		s := c.Type + ": " + clipMiddle(c.Message, 240)
		if c.IsError() {
			f.failed = append(f.failed, "condition "+s)
			if c.Type == "SyncError" && strings.HasPrefix(c.Message, "Failed last sync attempt") {
				// Argo CD's autoSync: "Skipping auto-sync: failed previous
				// sync attempt to [...] and will not retry".
				f.hints = append(f.hints, "the automated sync does not try a failed sync again, and may leave the next commit alone too: once a commit fixes the cause, sync it by hand (argocd app sync "+f.cli+")")
				continue
			}
			f.hints = append(f.hints, "an error condition stops Argo CD from comparing or syncing the runtime: fix the Application or the chart it points to (argocd app get "+f.cli+")")
		} else {
			f.warned = append(f.warned, "condition "+s)
		}
	}
}

// syncPolicy says how the Application syncs: "sync policy automated
// (prune, selfHeal)", "... manual".
func syncPolicy(a *argocd.Application) string {
	if !a.Automated {
		return "sync policy manual"
	}
	var sw []string
	if a.Prune {
		sw = append(sw, "prune")
	}
	if a.SelfHeal {
		sw = append(sw, "selfHeal")
	}
	if len(sw) == 0 {
		return "sync policy automated, no prune, no selfHeal"
	}
	return "sync policy automated (" + strings.Join(sw, ", ") + ")"
}

// staleRecord says, for a runtime Argo CD syncs, that the Helm release
// record is stale: its chart version is not the live one. "" when there
// is no record, the live version is unknown, or they agree.
func staleRecord(env *Env, ra *RuntimeApp) (string, error) {
	if ra.LiveChartVersion == "" {
		return "", nil
	}
	in := env.Inputs
	history, err := env.Cluster.HelmHistory(in.Namespace, in.ReleaseName)
	if err != nil {
		if cluster.IsForbidden(err) {
			return "", nil
		}
		return "", err
	}
	if len(history) == 0 {
		return "", nil
	}
	last := history[len(history)-1]
	v := ""
	if last.Chart != nil && last.Chart.Metadata != nil {
		v = last.Chart.Metadata.Version
	}
	if v == ra.LiveChartVersion {
		return "", nil
	}
	return fmt.Sprintf("the Helm release record is stale: release %s revision %d says chart %s, the live objects run chart %s (Argo CD renders with helm template and never writes release records)",
		in.ReleaseName, last.Version, orUnknownStatus(v), ra.LiveChartVersion), nil
}

// argoUpgradeHint says how a runtime Argo CD syncs is upgraded.
func argoUpgradeHint(ra *RuntimeApp) string {
	if g := generatorHint(ra); g != "" {
		return g + "; " + argoCommitHint(ra)
	}
	return argoCommitHint(ra)
}

// argoCommitHint says how a runtime Argo CD syncs is upgraded: by a
// commit.
func argoCommitHint(ra *RuntimeApp) string {
	return fmt.Sprintf("this runtime is upgraded by a commit, not helm upgrade (%s would revert it, and the release record would mislead the next helm command): in the Shared Configuration Repository change the version in resources/<runtime-name>/chart/Chart.yaml (.version and .dependencies[].version) and push; check the commit first with kubectl gitops-preflight --upgrade --chart <checkout>/resources/<runtime-name>/chart (https://codefresh.io/docs/docs/installation/gitops/manage-runtimes/)", ra.Name())
}

func resourceName(r argocd.Resource) string {
	return r.Kind + " " + qualified(r.Namespace, r.Name)
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func orUnknownStatus(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func dedupe(l []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range l {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// RuntimeApp is the Argo CD Application that manages the runtime, and how
// the plugin knows (argocd.ManagingApplication; Env.RuntimeApp).
type RuntimeApp = argocd.RuntimeApp

// generatorHint says, for an Application an ApplicationSet generates,
// where a change to it is made: its ApplicationSet's template (or the
// generator's parameters), since that ApplicationSet's controller
// overwrites a change made to the Application itself
// (https://argo-cd.readthedocs.io/en/stable/operator-manual/applicationset/Controlling-Resource-Modification/);
// "" otherwise.
func generatorHint(r *RuntimeApp) string {
	g := r.GeneratedBy()
	if g == "" {
		return ""
	}
	return "Application " + r.Named + " is generated by ApplicationSet " + g + ": change its source, values or sync policy in that ApplicationSet's template or its generator's parameters (kubectl get applicationsets.argoproj.io -n " + strings.SplitN(g, "/", 2)[0] + " " + strings.SplitN(g, "/", 2)[1] + " -o yaml); a change to the Application itself is overwritten by the ApplicationSet controller"
}

// argoSyncSkip is the skip of a check of Helm's ownership rule in an
// --upgrade that Argo CD performs: Argo CD applies every object of the
// commit without Helm's ownership check (it takes over what exists).
func argoSyncSkip(ctx context.Context, env *Env) (Result, bool) {
	s := syncOf(ctx, env)
	if s == nil {
		return Result{}, false
	}
	return Skip("Argo CD syncs the runtime (Application %s): it applies the commit's objects without Helm's ownership check, taking over those that exist", s.App), true
}

// syncOf returns, in an --upgrade that Argo CD performs, its sync (the
// prediction's chart.Upgrade.Sync); nil for helm upgrade, another mode, or
// a prediction that failed.
func syncOf(ctx context.Context, env *Env) *argocd.Sync {
	if !env.Upgrading() || env.Chart == nil {
		return nil
	}
	up, err := env.Upgrade(ctx)
	if err != nil {
		return nil
	}
	return up.Sync
}

// clipMiddle is s on one line, at most n runes (n >= 20): a longer one
// keeps its start and its end around " … ". Argo CD's sync and condition
// messages name what failed first and the API server's reason last
// ("one or more synchronization tasks completed unsuccessfully, reason:
// CustomResourceDefinition ... is invalid: metadata.annotations: Too long:
// must have at most 262144 bytes"): both are kept.
func clipMiddle(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := (n - 3) / 2
	tail := n - 3 - head
	return string(r[:head]) + " … " + string(r[len(r)-tail:])
}
