package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/admission"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/dryrun"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/mapolicy"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// The admission checks (admission-objects, admission-pods, resource-quota,
// admission-webhooks) share one plan of what the install or upgrade
// creates (internal/admission), read once from the run's rendering, and
// one set of dry runs, sent once per run through one dry-run engine
// (internal/dryrun) as the identity that installs (docs/admission.md).
// This file gathers their inputs from the Env; each check words what the
// engine found.

// CategoryAdmission groups the checks of the cluster's admission chain.
const CategoryAdmission Category = "admission"

// AdmissionObjects passes when the API server admits every object the
// install (or upgrade) creates, hooks included, each sent as a server-side
// dry-run create (dryRun=All: nothing is stored) as the identity that
// installs, and no admission plugin warns about one (docs/checks/
// admission-objects.md). In an upgrade the objects the target adds and its
// hooks are sent; the objects it changes are upgrade-apply's. A refusal is
// parsed into the layer and the policy that refused (ParseRefusal) and
// the hint names the chart value or the cluster-side exemption that fixes
// it. PodSecurity's warn and audit modes do not refuse: its warnings on a
// workload say what its enforce mode would refuse. The objects whose labels
// or annotations admission changed (the dry run's answer against what
// Helm sends) are listed, each with the MutatingAdmissionPolicies and
// bindings that match its create (internal/mapolicy, the API server's
// matching: https://kubernetes.io/docs/reference/access-authn-authz/mutating-admission-policy/).
func AdmissionObjects() Check {
	return Check{
		Meta: Meta{
			ID:         "admission-objects",
			Impact:     ImpactInstallFails,
			ReadsChart: true,
			Category:   CategoryAdmission,
			Modes:      ModePre | ModeUpgrade,
			Title:      "The API server admits every object the install creates (server-side dry run)",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
		},
		Run: runAdmissionObjects,
	}
}

func runAdmissionObjects(ctx context.Context, env *Env) (Result, error) {
	p, skip, err := admissionSetup(ctx, env)
	if skip != nil || err != nil {
		return derefResult(skip), err
	}
	runs, err := dryRunObjects(ctx, env, p)
	if err != nil {
		return Result{}, err
	}
	who, level, err := identityAndLevel(ctx, env, p.Pods())
	if err != nil {
		return Result{}, err
	}
	t := tallyObjects(p, runs)
	if err := t.mutations(ctx, env, p, runs); err != nil {
		return Result{}, err
	}
	return t.result(env, p, who, level), nil
}

// mutations adds to the tally what admission changed of the objects it
// admitted (labels and annotations) and the MutatingAdmissionPolicies
// that match each of them.
func (t *objectTally) mutations(ctx context.Context, env *Env, p *admission.Plan, runs *admission.ObjectRuns) error {
	in, note, err := mutationInput(ctx, env)
	if err != nil {
		return err
	}
	ms, unevaluated, err := admission.ObjectMutations(ctx, p, runs, in)
	if err != nil {
		return err
	}
	for i, m := range ms {
		if len(m.Changes) == 0 {
			continue
		}
		who := ""
		switch len(m.Policies) {
		case 0:
		case 1:
			who = mapolicy.Describe(m.Policies) + " matches its create; "
		default:
			who = mapolicy.Describe(m.Policies) + " match its create; "
		}
		t.mutated = append(t.mutated, objectLabel(p.Objects[i])+": "+who+"admission: "+strings.Join(m.Changes, ", "))
	}
	t.mutationNote = unevaluatedNote(note, unevaluated)
	return nil
}

// objectTally is what the objects' dry runs said, in the check's lines.
type objectTally struct {
	refused, rbac, notJudged []string
	groups                   refusalGroups
	refs                     []ObjectRef
	warned                   map[string][]string
	sent                     int
	// mutated are the objects admission changed, a line each;
	// mutationNote says what of the policies was not read or decided.
	mutated      []string
	mutationNote string
}

// tallyObjects reads the verdicts of the plan's objects and of the release
// namespace's create.
func tallyObjects(p *admission.Plan, runs *admission.ObjectRuns) *objectTally {
	t := &objectTally{warned: map[string][]string{}}
	for i, v := range runs.Verdicts {
		o := p.Objects[i]
		switch {
		case v.Unjudged != admission.Judged && o.Namespaced && !p.NamespaceExists:
			continue // namespaceNotes says so, once
		case v.Unjudged != admission.Judged:
			t.notJudged = append(t.notJudged, objectLabel(o)+": "+notJudgedText(v, o.Namespace, o.Obj.APIVersion, o.Obj.Kind))
			continue
		case v.Refused != nil && v.Refused.Layer == admission.LayerRBAC:
			t.rbac = append(t.rbac, v.Refused.Policy)
			continue
		}
		t.sent++
		if v.Refused != nil {
			t.refused = append(t.refused, fmt.Sprintf("%s: %s: %s", objectLabel(o), v.Refused.Short(), v.Refused.Detail))
			t.refs = append(t.refs, objectRef(o))
			t.groups.add(*v.Refused, o.Obj.Name)
		}
		for _, w := range v.Warnings {
			t.warned[w] = append(t.warned[w], objectLabel(o))
		}
	}
	if v := runs.Namespace; v != nil {
		ns := p.Namespace
		t.sent++
		if v.Refused != nil && v.Refused.Layer == admission.LayerRBAC {
			t.rbac = append(t.rbac, v.Refused.Policy)
		} else if v.Refused != nil {
			t.refused = append(t.refused, fmt.Sprintf("Namespace %s (helm install --create-namespace): %s: %s", ns, v.Refused.Short(), v.Refused.Detail))
			t.refs = append(t.refs, ObjectRef{Kind: "Namespace", Name: ns})
		}
		for _, w := range v.Warnings {
			t.warned[w] = append(t.warned[w], "Namespace "+ns)
		}
	}
	return t
}

// result words the tally: a refusal fails, rights alone skip, warnings
// warn.
func (t *objectTally) result(env *Env, p *admission.Plan, who dryrun.Identity, level string) Result {
	ns := p.Namespace
	notes := namespaceNotes(p)
	if len(t.notJudged) > 0 {
		notes = append(notes, fmt.Sprintf("not judged: %s", strings.Join(first(t.notJudged, 4), "; ")))
	}
	if len(t.mutated) > 0 {
		notes = append(notes, fmt.Sprintf("admission changes %s (what Helm sends is not what the cluster stores):\n%s", plural(len(t.mutated), "object"), strings.Join(first(t.mutated, 6), "\n")))
	}
	if len(t.mutated) > 0 && t.mutationNote != "" {
		notes = append(notes, "MutatingAdmissionPolicies: "+t.mutationNote)
	}
	what := "object the install creates"
	if env.Upgrading() {
		what = "object the upgrade creates (its hooks and the objects the target adds; the objects it changes are upgrade-apply's)"
	}
	switch {
	case len(t.refused) > 0:
		msg := fmt.Sprintf("the API server refuses %d of the %d %s (dry runs as %s); helm stops at the first:\n%s",
			len(t.refused), t.sent, pluralWord(t.sent, what), who, strings.Join(first(t.refused, 8), "\n"))
		return Fail("%s", withNotes(msg, notes)).WithHint(t.groups.hints(false, p, ns, level)).WithObjects(t.refs...).WithEffect(helmFails(env))
	case len(t.rbac) > 0 && t.sent == 0:
		return rbacSkip(env, who, t.rbac)
	}
	if len(t.warned) > 0 {
		lines := warningLines(t.warned)
		hint := fmt.Sprintf("these warnings say what the cluster will refuse once its policy is enforced: a PodSecurity warning is what namespace %s's enforce label would refuse (see admission-pods)", ns)
		if level != "" && level != "restricted" {
			hint += fmt.Sprintf("; every pod of the release meets %s", level)
		}
		msg := fmt.Sprintf("the API server admits the %d %s (dry runs as %s), with %s:\n%s", t.sent, pluralWord(t.sent, what), who, plural(len(t.warned), "warning"), strings.Join(first(lines, 8), "\n"))
		return Warn("%s", withNotes(msg, notes)).WithHint(hint)
	}
	msg := fmt.Sprintf("the API server admits all %d %s (dry runs as %s)", t.sent, pluralWord(t.sent, what), who)
	if len(t.rbac) > 0 {
		msg += fmt.Sprintf("; not judged for lack of rights: %s", strings.Join(first(dedupe(sortedCopy(t.rbac)), 4), ", "))
	}
	return Pass("%s", withNotes(msg, notes))
}

// --- The plan and the dry runs, gathered from the Env once per run. ---

// admissionSetup is what every admission check starts with: the plan, or
// the skip.
func admissionSetup(ctx context.Context, env *Env) (*admission.Plan, *Result, error) {
	p, skip, err := planAdmission(ctx, env)
	if skip != nil || err != nil {
		return nil, skip, err
	}
	if env.Cluster.Clients().Config == nil {
		r := Skip("%v", errNoREST)
		return nil, &r, nil
	}
	return p, nil, nil
}

// planAdmission reads the plan from the run's rendering once per run. A
// non-nil Result is the checks' skip (no chart, the chart does not render,
// Helm refuses the upgrade).
func planAdmission(ctx context.Context, env *Env) (*admission.Plan, *Result, error) {
	if env.Upgrading() {
		u, err := env.Upgrade(ctx)
		if r, ok := upgradeSkip(err); ok {
			return nil, &r, nil
		}
		if err != nil {
			return nil, nil, err
		}
		p, err := cluster.Memo(env.Cluster, "admission/plan", func() (*admission.Plan, error) { return gatherPlan(env, u.Target, u) })
		return p, nil, err
	}
	r, skip, err := renderingForChecks(ctx, env)
	if skip != nil || err != nil {
		return nil, skip, err
	}
	p, err := cluster.Memo(env.Cluster, "admission/plan", func() (*admission.Plan, error) { return gatherPlan(env, r, nil) })
	return p, nil, err
}

// gatherPlan reads what the plan needs of the cluster (the release
// namespace, discovery, an upgrade's current revision) and builds it.
func gatherPlan(env *Env, r *chart.Rendering, u *chart.Upgrade) (*admission.Plan, error) {
	ns := env.Inputs.Namespace
	in := admission.Input{Rendering: r, Release: env.Inputs.ReleaseName, Namespace: ns, Upgrade: u != nil}
	live, err := env.Cluster.Namespace(ns)
	switch {
	case err == nil:
		in.NamespaceExists, in.NamespaceLabels = live.Exists, live.Labels
	case cluster.IsForbidden(err):
		// No right to read it: assume it exists; the dry runs say
		// otherwise if it does not.
		in.NamespaceExists = true
	default:
		return nil, err
	}
	if in.API, err = env.Cluster.APIResources(); err != nil {
		return nil, err
	}
	if u != nil {
		if in.InCurrent, err = u.InCurrent(); err != nil {
			return nil, err
		}
	}
	if in.Workloads, in.Kept, err = plannedWorkloads(env, r, u); err != nil {
		return nil, err
	}
	return admission.NewPlan(in)
}

// plannedWorkloads are the workloads whose pods the install (upgrade)
// starts, with how many run at its peak (admission.InstallWorkloads,
// admission.UpgradeWorkloads), and how many pods the upgrade keeps.
func plannedWorkloads(env *Env, r *chart.Rendering, u *chart.Upgrade) ([]admission.Workload, int, error) {
	ns := env.Inputs.Namespace
	target, err := renderedWorkloads(env, r)
	if err != nil {
		return nil, 0, err
	}
	if u == nil {
		return admission.InstallWorkloads(target, ns), 0, nil
	}
	current, err := currentWorkloads(u)
	if err != nil {
		return nil, 0, err
	}
	ws, kept := admission.UpgradeWorkloads(target, current, ns)
	return ws, kept, nil
}

// dryRunObjects dry-runs the plan's objects once per run.
func dryRunObjects(ctx context.Context, env *Env, p *admission.Plan) (*admission.ObjectRuns, error) {
	return cluster.Memo(env.Cluster, "admission/objects", func() (*admission.ObjectRuns, error) {
		e, err := dryRunEngine(ctx, env)
		if err != nil {
			return nil, err
		}
		return admission.DryRunObjects(env.Cluster.Context(), e, p, existingObjects(ctx, env, p))
	})
}

// existingObjects returns whether a planned object exists in the cluster,
// from the run's shared lists of its kinds (the lists helm-ownership
// reads, metadata only; CRDs from the run's one list of them), read at
// once (Snapshot.ReadObjectLists), for the objects whose existence decides
// whether Helm sends them (Plan.ExistenceDecides; for a CRD of megabytes a
// dry-run create is the API server's costliest). An object whose kind
// cannot be listed counts as not existing: it is sent.
func existingObjects(ctx context.Context, env *Env, p *admission.Plan) func(admission.Object) bool {
	seen := map[cluster.ObjectList]bool{}
	var lists []cluster.ObjectList
	for _, o := range p.Objects {
		if l := (cluster.ObjectList{Resource: o.Resource, Namespace: o.RequestNamespace()}); p.ExistenceDecides(o) && !seen[l] {
			seen[l] = true
			lists = append(lists, l)
		}
	}
	env.Cluster.ReadObjectLists(ctx, lists)
	return func(o admission.Object) bool {
		objs, err := env.Cluster.Objects(o.Resource, o.RequestNamespace())
		_, ok := objs[o.RequestNamespace()+"/"+o.Obj.Name]
		return err == nil && ok
	}
}

// identityAndLevel are what the admission checks' messages and hints name:
// who the dry runs were judged as, and the strictest Pod Security Standard
// every planned pod meets.
func identityAndLevel(ctx context.Context, env *Env, pods []*corev1.Pod) (dryrun.Identity, string, error) {
	e, err := dryRunEngine(ctx, env)
	if err != nil {
		return dryrun.Identity{}, "", err
	}
	level, err := admission.StrictestLevel(pods)
	return e.Identity(ctx), level, err
}

// --- The words the admission checks share. ---

// objectLabel is "Kind name" or "Kind name (hook pre-install,pre-upgrade)".
func objectLabel(o admission.Object) string {
	if o.Hook != nil {
		return fmt.Sprintf("%s %s (hook %s)", o.Obj.Kind, o.Obj.Name, o.Hook)
	}
	return o.Obj.Kind + " " + o.Obj.Name
}

func objectRef(o admission.Object) ObjectRef {
	return ObjectRef{Kind: o.Obj.Kind, Namespace: o.Namespace, Name: o.Obj.Name}
}

// notJudgedText says why no dry run judged an object or pod (of namespace
// ns; apiVersion and kind: the object's).
func notJudgedText(v admission.Verdict, ns, apiVersion, kind string) string {
	switch v.Unjudged {
	case admission.KindOfPlannedCRD:
		return "its kind is defined by a CRD the install creates"
	case admission.KindNotServed:
		return "the cluster does not serve " + apiVersion + " " + kind
	case admission.NamespaceToCome:
		return "namespace " + ns + " does not exist yet"
	case admission.Exists:
		return "it exists already, and Helm does not create an object that exists (helm-ownership judges whether Helm may take it over)"
	case admission.KindNotFound:
		return "the API server does not serve its kind"
	case admission.NotSent:
		return "the dry run could not be sent: " + firstLine(v.Err.Error())
	}
	return ""
}

// helmFails is the impact of a refusal Helm meets: install-fails before an
// install, upgrade-fails before an upgrade.
func helmFails(env *Env) Impact {
	if env.Upgrading() {
		return ImpactUpgradeFails
	}
	return ImpactInstallFails
}

// rbacSkip is the result when the only refusals are the identity's missing
// rights: dry runs are authorized like the writes they stand for, so the
// check cannot judge, and names what is missing.
func rbacSkip(_ *Env, who dryrun.Identity, missing []string) Result {
	sort.Strings(missing)
	missing = dedupe(missing)
	return Result{Status: StatusSkip, Cause: SkipForbidden,
		Message: fmt.Sprintf("no permission to %s as %s: dry runs are authorized like the writes they stand for, so admission could not be judged", strings.Join(first(missing, 4), ", "), who),
		Hint:    "run as the identity that installs, with the rights helm install needs (cluster-admin); see cluster-admin"}
}

// warningLines are the admission warnings of a run, one line each with the
// objects (up to three) it was given for, sorted.
func warningLines(warned map[string][]string) []string {
	var lines []string
	for w, objs := range warned {
		lines = append(lines, fmt.Sprintf("%s: %s", strings.Join(first(objs, 3), ", "), w))
	}
	sort.Strings(lines)
	return lines
}

// namespaceNotes says what a run cannot judge when the release namespace
// does not exist yet (helm install --create-namespace creates it).
func namespaceNotes(p *admission.Plan) []string {
	if p.NamespaceExists {
		return nil
	}
	return []string{fmt.Sprintf("namespace %s does not exist yet: its Namespace and the cluster-scoped objects were dry-run; the namespaced objects and pods could not be (ResourceQuotas, LimitRanges, namespaced policies and webhooks' answers judged there are unknown); PodSecurity was evaluated here for the labels it will get; kubectl create namespace %s first gives the exact answer", p.Namespace, p.Namespace)}
}

func withNotes(msg string, notes []string) string {
	if len(notes) == 0 {
		return msg
	}
	return msg + "\n" + strings.Join(notes, "\n")
}

// pluralWord is "object the install creates" or "objects the install
// creates": the first word made plural for n other than 1.
func pluralWord(n int, phrase string) string {
	if n == 1 {
		return phrase
	}
	word, rest, _ := strings.Cut(phrase, " ")
	if rest != "" {
		rest = " " + rest
	}
	return word + "s" + rest
}

func appendUnique(list []string, s string) []string {
	if s == "" {
		return list
	}
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// fixFor says what fixes a refusal of the workloads or objects names (as
// the chart renders them): the chart value that changes what the API server
// refused, where the chart has one, "chart X has no value for this" where
// it does not (its hooks), and the cluster-side choices (the namespace's
// PodSecurity label, a LimitRange, the policy's own exclusions,
// Gatekeeper's excluded namespaces, a Kyverno PolicyException). level is
// the strictest Pod Security Standard all the planned pods meet ("" unknown).
func fixFor(r admission.Refusal, names []string, isPod bool, p *admission.Plan, ns, level string) string {
	chartName := "chart " + p.Chart
	var parts []string
	switch r.Layer {
	case admission.LayerPodSecurity:
		parts = chartValues(names, chartName, "securityContext", "a securityContext that meets "+r.Policy, func(v plan.WorkloadValues) string {
			return strings.Trim(v.PodSecurityContext+", "+v.ContainerSecurityContext, ", ")
		})
		switch level {
		case "baseline", "privileged":
			parts = append(parts, fmt.Sprintf("let namespace %s enforce a level every pod of the release meets: kubectl label namespace %s pod-security.kubernetes.io/enforce=%s --overwrite", ns, ns, level))
		}
		parts = append(parts, "exempt the namespace in the API server's PodSecurity admission configuration (exemptions.namespaces)")
	case admission.LayerResourceQuota:
		if strings.Contains(r.Detail, "must specify") {
			parts = chartValues(names, chartName, "resources", "requests and limits", func(v plan.WorkloadValues) string { return v.Resources })
			parts = append(parts, fmt.Sprintf("give namespace %s a LimitRange whose default and defaultRequest cover %s (kubectl apply -n %s -f a LimitRange with spec.limits[].type: Container)", ns, strings.Join(r.Resources, ", "), ns))
		} else {
			parts = append(parts, fmt.Sprintf("raise ResourceQuota %s (kubectl edit resourcequota %s -n %s) or lower the release's replicas and requests", r.Quota, r.Quota, ns))
		}
	case admission.LayerLimitRanger:
		parts = append(parts, fmt.Sprintf("set the requests and limits of %s within namespace %s's LimitRange (kubectl describe limitrange -n %s)", strings.Join(names, ", "), ns, ns))
	case admission.LayerPolicy, admission.LayerWebhook:
		parts = policyFixes(r, names, isPod, chartName, ns)
	case admission.LayerWebhookDown:
		parts = append(parts, fmt.Sprintf("webhook %s cannot be called: bring its service's endpoints back (see admission-webhooks), or delete its configuration if its controller is gone", r.Webhook))
	case admission.LayerServiceAccount:
		parts = append(parts, "create the ServiceAccount, or set the chart's serviceAccount.create for it")
	case admission.LayerNamespace:
		parts = append(parts, fmt.Sprintf("create namespace %s (kubectl create namespace %s), or wait until it is deleted", ns, ns))
	}
	if len(parts) == 0 {
		return ""
	}
	return r.Short() + ": " + strings.Join(parts, "; or ")
}

// chartValues names the chart's values for what of names (pick: the
// value's path; set: what to set there), the workloads the chart has no
// such value for, and the values that leave a workload out.
func chartValues(names []string, chartName, what, set string, pick func(plan.WorkloadValues) string) []string {
	var parts, without, removable []string
	for _, name := range names {
		vals, known := plan.ChartWorkloadValues(name)
		switch v := pick(vals); {
		case known && v != "":
			parts = append(parts, fmt.Sprintf("set %s for %s in the values (%s)", set, name, v))
		case known:
			without = append(without, name)
		}
		if known && vals.Remove != "" {
			removable = append(removable, fmt.Sprintf("--set %s leaves %s out (%s)", vals.Remove, name, vals.RemoveCost))
		}
	}
	if len(without) > 0 {
		parts = append(parts, fmt.Sprintf("%s has no value for the %s of %s", chartName, what, strings.Join(without, ", ")))
	}
	return append(parts, removable...)
}

// policyFixes are the fixes of a ValidatingAdmissionPolicy's or a
// webhook's refusal: the value that leaves an object out, and the policy's
// own exclusions.
func policyFixes(r admission.Refusal, names []string, isPod bool, chartName, ns string) []string {
	var parts []string
	if !isPod {
		for _, name := range names {
			if v, cost, ok := plan.ChartObjectRemoval(name); ok {
				parts = append(parts, fmt.Sprintf("%s has no value that changes %s; --set %s leaves it out (%s)", chartName, name, v, cost))
			}
		}
	}
	switch {
	case r.Layer == admission.LayerPolicy:
		parts = append(parts, fmt.Sprintf("exclude the release from binding %s (its matchResources: namespaceSelector, objectSelector or excludeResourceRules), or set its validationActions to [Warn, Audit]", r.Binding))
	case strings.HasPrefix(r.Policy, "Gatekeeper"):
		parts = append(parts, fmt.Sprintf("exclude namespace %s for the constraint (spec.match.excludedNamespaces) or in Gatekeeper's Config (spec.match[].excludedNamespaces, processes [webhook])", ns))
	case strings.HasPrefix(r.Policy, "Kyverno"):
		parts = append(parts, fmt.Sprintf("add a Kyverno PolicyException for the policy and rule, matching namespace %s", ns))
	default:
		parts = append(parts, fmt.Sprintf("ask the owner of webhook %s to admit the release, or exclude namespace %s with its namespaceSelector", r.Webhook, ns))
	}
	return parts
}

// refusalGroups gathers refusals by layer and policy, keeping the names
// each refused, in first-seen order.
type refusalGroups struct {
	order []string
	by    map[string]*refusalGroup
}

type refusalGroup struct {
	r     admission.Refusal
	names []string
}

func (g *refusalGroups) add(r admission.Refusal, name string) {
	if g.by == nil {
		g.by = map[string]*refusalGroup{}
	}
	k := r.Short()
	if _, ok := g.by[k]; !ok {
		g.order = append(g.order, k)
		g.by[k] = &refusalGroup{r: r}
	}
	g.by[k].names = append(g.by[k].names, name)
}

// hints is one fixFor per group, joined.
func (g *refusalGroups) hints(isPod bool, p *admission.Plan, ns, level string) string {
	var out []string
	for _, k := range g.order {
		out = appendUnique(out, fixFor(g.by[k].r, g.by[k].names, isPod, p, ns, level))
	}
	return strings.Join(out, " | ")
}
