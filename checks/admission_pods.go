package checks

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/admission"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/dryrun"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/mapolicy"
)

// AdmissionPods passes when the API server admits the pod each workload's
// controller will create (Deployments, StatefulSets, DaemonSets and Jobs,
// the hook Jobs included), each sent as a server-side dry-run create in
// its namespace as the identity that installs, and no mutating webhook or
// MutatingAdmissionPolicy adds to a Job's pod a container that is not a
// native sidecar (such a pod never completes, so a hook Job never does).
// What admission changed of an admitted pod is one line per pod, naming
// the MutatingAdmissionPolicies (through their bindings, matched by
// k8s.io/apiserver: internal/mapolicy), mutating webhooks and LimitRanger
// that match it (podMutations); a refused pod names the policies whose
// change admission judged. Helm never sends these
// pods itself: their controllers do, after helm has created the workloads
// (docs/checks/admission-pods.md). A refused hook pod stops helm install
// (it waits for the hook until --timeout): install-fails (upgrade-fails).
// A refused runtime pod follows Helm's --wait (--helm-wait, Env.HelmWait):
// with it helm waits for the workloads' pods until --timeout and fails
// (install-fails, upgrade-fails); without it the release is "deployed"
// with no pods there (runtime-breaks); not told, the message says both and
// the impact is runtime-breaks (podless). When the namespace does not exist yet, PodSecurity is
// evaluated here (k8s.io/pod-security-admission) for the labels it will
// get.
func AdmissionPods() Check {
	return Check{
		Meta: Meta{
			ID:         "admission-pods",
			Impact:     ImpactInstallFails,
			ReadsChart: true,
			Category:   CategoryAdmission,
			Modes:      ModePre | ModeUpgrade,
			Title:      "The API server admits the pods the release's workloads and hook Jobs will create (server-side dry run)",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
		},
		Run: runAdmissionPods,
	}
}

func runAdmissionPods(ctx context.Context, env *Env) (Result, error) {
	p, skip, err := admissionSetup(ctx, env)
	if skip != nil || err != nil {
		return derefResult(skip), err
	}
	if len(p.Workloads) == 0 {
		what := "the release starts no pods"
		if env.Upgrading() {
			what = fmt.Sprintf("the upgrade starts no new pods (%d workloads keep theirs)", p.Kept)
		}
		return Pass("%s", what), nil
	}
	runs, err := dryRunPods(ctx, env, p)
	if err != nil {
		return Result{}, err
	}
	who, level, err := identityAndLevel(ctx, env, runs.Pods)
	if err != nil {
		return Result{}, err
	}
	muts, err := podMutations(ctx, env, p, runs)
	if err != nil {
		return Result{}, err
	}
	t, err := tallyPods(ctx, env, p, runs, muts)
	if err != nil {
		return Result{}, err
	}
	return t.result(env, p, runs, muts, who, level), nil
}

// podTally is what the pods' dry runs said, in the check's lines.
type podTally struct {
	changed, refused, rbac, hints, notes []string
	groups                               refusalGroups
	refs                                 []ObjectRef
	// hookFails is whether a hook Job's pod is refused or never
	// completes: helm itself waits for it.
	hookFails bool
	warned    map[string][]string
	sent      int
}

// tallyPods reads the verdict of each workload's pod; when the namespace
// does not exist yet, PodSecurity judges it here for the labels it will
// get.
func tallyPods(ctx context.Context, env *Env, p *admission.Plan, runs *admission.PodRuns, muts *mutationRuns) (*podTally, error) {
	t := &podTally{warned: map[string][]string{}}
	local := !p.NamespaceExists
	nsPolicy := admission.NamespacePolicy(p.NamespaceLabels)
	for i := range p.Workloads {
		w := &p.Workloads[i]
		v := runs.Verdicts[i]
		if local {
			r, warnings, err := admission.EvaluateLocally(runs.Pods[i], nsPolicy)
			if err != nil {
				return nil, err
			}
			v = admission.Verdict{Refused: r, Warnings: warnings}
		} else if v.Unjudged != admission.Judged {
			t.notes = append(t.notes, workloadLabel(*w)+": not judged: "+notJudgedText(v, w.Namespace, "v1", "Pod"))
			continue
		}
		if v.Refused != nil && v.Refused.Layer == admission.LayerRBAC {
			t.rbac = append(t.rbac, v.Refused.Policy)
			continue
		}
		t.sent++
		for _, wn := range v.Warnings {
			t.warned[wn] = append(t.warned[wn], workloadLabel(*w))
		}
		t.judge(ctx, env, p, runs, i, v, muts.pods[i])
	}
	return t, nil
}

// judge words one admitted or refused pod: refused, a Job's pod that
// never completes, or what admission changed of it.
func (t *podTally) judge(ctx context.Context, env *Env, p *admission.Plan, runs *admission.PodRuns, i int, v admission.Verdict, m admission.PodMutation) {
	w := &p.Workloads[i]
	if v.Refused != nil {
		line := fmt.Sprintf("%s: %s: %s", workloadLabel(*w), v.Refused.Short(), v.Refused.Detail)
		if len(m.Policies) > 0 {
			// Validation judges the pod the mutating policies made.
			matches := "matches"
			if len(m.Policies) > 1 {
				matches = "match"
			}
			line += "; " + mapolicy.Describe(m.Policies) + " " + matches + " this pod: admission judged the pod as changed"
		}
		t.refused = append(t.refused, line)
		t.refs = append(t.refs, plannedWorkloadRef(*w))
		t.groups.add(*v.Refused, w.Name)
		t.hookFails = t.hookFails || w.IsHook()
		return
	}
	if w.Kind == "Job" && v.Object != nil {
		if added := admission.AddedContainers(runs.Pods[i], runs.Answered(i)); len(added) > 0 {
			t.neverCompletes(ctx, env, p, w, runs.Pods[i], m, added)
			return
		}
	}
	if len(m.Changes) > 0 {
		t.changed = append(t.changed, workloadLabel(*w)+": "+mutationLine(m, mutatingWebhooksFor(ctx, env, p, w, runs.Pods[i]), w.Namespace))
	}
}

// neverCompletes words a Job's pod to which admission adds a container
// that is not a native sidecar, naming who may have added it.
func (t *podTally) neverCompletes(ctx context.Context, env *Env, p *admission.Plan, w *admission.Workload, pod *corev1.Pod, m admission.PodMutation, added []string) {
	hooks := mutatingWebhooksFor(ctx, env, p, w, pod)
	by, matches := mutators(m, hooks, w.Namespace)
	if by == "" {
		by, matches = "a mutating webhook or MutatingAdmissionPolicy", "matches"
	}
	t.refused = append(t.refused, fmt.Sprintf("%s: %s %s this pod and admission adds container %s, which is not a native sidecar: the Job's pod never completes (its own container exits, %s does not)",
		workloadLabel(*w), by, matches, strings.Join(added, ", "), strings.Join(added, ", ")))
	t.refs = append(t.refs, plannedWorkloadRef(*w))
	if len(m.Policies) == 0 || strings.HasPrefix(hooks, "mutating webhook ") {
		t.hints = appendUnique(t.hints, fmt.Sprintf("exclude the release's Jobs from %s (its namespaceSelector or objectSelector; for Istio the pod label sidecar.istio.io/inject=false), or have it inject a native sidecar (an init container with restartPolicy: Always, Kubernetes 1.29+)", hooks))
	}
	for _, pm := range m.Policies {
		t.hints = appendUnique(t.hints, fmt.Sprintf("exclude the release's Jobs from MutatingAdmissionPolicy %s (binding %s's matchResources: namespaceSelector, objectSelector or excludeResourceRules; or a matchCondition of the policy), or have it add a native sidecar (an init container with restartPolicy: Always, Kubernetes 1.29+)", pm.Policy, pm.Binding))
	}
	t.hookFails = t.hookFails || w.IsHook()
}

// result words the tally: a refused pod fails, rights alone skip,
// warnings warn.
func (t *podTally) result(env *Env, p *admission.Plan, runs *admission.PodRuns, muts *mutationRuns, who dryrun.Identity, level string) Result {
	ns := p.Namespace
	notes := t.notesOf(p, runs, muts)
	if len(t.refused) > 0 {
		lack := "these workloads have no pods"
		if env.Upgrading() {
			lack = "these workloads get no new pods (a Deployment's rollout stalls beside its old pods)"
		}
		effect, tail := podless(env, lack)
		if t.hookFails {
			effect = helmFails(env)
			tail = "helm waits for the hook Jobs until --timeout and fails (the Job controller's FailedCreate events repeat the refusal)"
		}
		msg := fmt.Sprintf("%s of the %d workloads will not run as %s: %s:\n%s", plural(len(t.refused), "pod"), t.sent, who, tail, strings.Join(first(t.refused, 8), "\n"))
		hints := t.hints
		if h := t.groups.hints(true, p, ns, level); h != "" {
			hints = append([]string{h}, hints...)
		}
		return Fail("%s", withNotes(msg, notes)).WithHint(strings.Join(hints, " | ")).WithObjects(t.refs...).WithEffect(effect)
	}
	if len(t.rbac) > 0 && t.sent == 0 {
		return rbacSkip(env, who, t.rbac)
	}
	if len(t.warned) > 0 {
		lines := warningLines(t.warned)
		msg := fmt.Sprintf("the API server admits the pods of all %d workloads as %s, with %s:\n%s", t.sent, who, plural(len(t.warned), "warning"), strings.Join(first(lines, 8), "\n"))
		hint := fmt.Sprintf("a PodSecurity warning is what namespace %s's enforce label would refuse", ns)
		if level != "restricted" {
			hint += fmt.Sprintf("; every pod of the release meets %s", level)
		}
		return Warn("%s", withNotes(msg, notes)).WithHint(hint)
	}
	msg := fmt.Sprintf("the API server admits the pods of all %d workloads (dry runs as %s)", t.sent, who)
	if len(t.rbac) > 0 {
		msg += fmt.Sprintf("; not judged for lack of rights: %s", strings.Join(first(dedupe(sortedCopy(t.rbac)), 4), ", "))
	}
	return Pass("%s", withNotes(msg, notes))
}

// notesOf are the lines under the check's message: what admission
// changed, what was not judged, what the policies' reading left open, the
// ServiceAccounts replaced, the namespace to come.
func (t *podTally) notesOf(p *admission.Plan, runs *admission.PodRuns, muts *mutationRuns) []string {
	notes := append(append([]string(nil), t.changed...), t.notes...)
	if muts.note != "" {
		notes = append(notes, muts.note)
	}
	if len(runs.DefaultSA) > 0 {
		var sas []string
		for i, sa := range runs.DefaultSA {
			sas = append(sas, fmt.Sprintf("%s (ServiceAccount %s)", p.Workloads[i].Name, sa))
		}
		sort.Strings(sas)
		notes = append(notes, fmt.Sprintf("the release creates the ServiceAccount of %s: their pods were sent with ServiceAccount default (the pull secrets and token settings of theirs are not modelled)", strings.Join(first(sas, 4), ", ")))
	}
	notes = append(notes, namespaceNotes(p)...)
	if !p.NamespaceExists {
		notes = append(notes, fmt.Sprintf("PodSecurity for namespace %s was evaluated here with k8s.io/pod-security-admission for its labels; a cluster-wide default set in the API server's admission configuration is invisible to a client", p.Namespace))
	}
	return notes
}

// dryRunPods dry-runs the pod each workload's controller will create, once
// per run.
func dryRunPods(ctx context.Context, env *Env, p *admission.Plan) (*admission.PodRuns, error) {
	return cluster.Memo(env.Cluster, "admission/pods", func() (*admission.PodRuns, error) {
		e, err := dryRunEngine(ctx, env)
		if err != nil {
			return nil, err
		}
		return admission.DryRunPods(env.Cluster.Context(), e, p)
	})
}

// mutationRuns are the pods' mutations, in plan order, and what the run
// could not read.
type mutationRuns struct {
	pods []admission.PodMutation
	// note says why the MutatingAdmissionPolicies were not read, or
	// which could not be decided ("" when all were).
	note string
}

// podMutations reads the mutations of the plan's pods once per run: what
// admission changed (admission.PodMutations) and the
// MutatingAdmissionPolicies that match each pod, matched as the identity
// that installs.
func podMutations(ctx context.Context, env *Env, p *admission.Plan, runs *admission.PodRuns) (*mutationRuns, error) {
	return cluster.Memo(env.Cluster, "admission/mutations", func() (*mutationRuns, error) {
		in, note, err := mutationInput(ctx, env)
		if err != nil {
			return nil, err
		}
		m, err := admission.PodMutations(ctx, p, runs, in)
		if err != nil {
			return nil, err
		}
		return &mutationRuns{pods: m.Pods, note: unevaluatedNote(note, m.Unevaluated)}, nil
	})
}

// mutationInput is what the mutations of a run are matched with: the
// cluster's MutatingAdmissionPolicies, the namespaces' labels, and the
// identity that installs (read only when a policy is bound). note says why
// the policies were not read.
func mutationInput(ctx context.Context, env *Env) (admission.MutationInput, string, error) {
	matcher, note, err := policyMatcher(env)
	if err != nil {
		return admission.MutationInput{}, "", err
	}
	in := admission.MutationInput{Matcher: matcher, NamespaceLabels: func(ns string) (map[string]string, bool) {
		live, err := env.Cluster.Namespace(ns)
		if err != nil {
			return nil, false
		}
		return live.Labels, true
	}}
	if matcher != nil && matcher.Pairs() > 0 {
		if e, err := dryRunEngine(ctx, env); err == nil {
			id := e.Identity(ctx)
			in.User, in.Groups = id.User, id.Groups
		}
	}
	return in, note, nil
}

// unevaluatedNote is note, or, when some policy and binding pairs were
// taken to match without being decided, the first of them with why.
func unevaluatedNote(note string, unevaluated map[string]string) string {
	if len(unevaluated) == 0 {
		return note
	}
	var lines []string
	for k, v := range unevaluated {
		lines = append(lines, k+": "+v)
	}
	sort.Strings(lines)
	return "taken to match, not decided here: " + strings.Join(first(lines, 3), "; ")
}

// policyMatcher builds the matcher of the cluster's MutatingAdmissionPolicies.
// nil with a note: the API is not served, or may not be listed.
func policyMatcher(env *Env) (*mapolicy.Matcher, string, error) {
	mp, err := env.Cluster.MutatingAdmissionPolicies()
	var le *cluster.ListError
	switch {
	case err != nil && cluster.IsForbidden(err) && errors.As(err, &le):
		return nil, "MutatingAdmissionPolicies not read (" + le.Reason() + "): a policy that changes the pods cannot be named", nil
	case err != nil:
		return nil, "", err
	case !mp.Served:
		return nil, "", nil
	}
	api, err := env.Cluster.APIResources()
	if err != nil {
		return nil, "", err
	}
	return mapolicy.New(mp.Policies, mp.Bindings, api.Resources), "", nil
}

// workloadLabel is "Deployment name" or "hook Job name (pre-install,pre-upgrade)".
func workloadLabel(w admission.Workload) string {
	if w.IsHook() {
		return fmt.Sprintf("hook Job %s (%s)", w.Name, w.Hook)
	}
	return w.Kind + " " + w.Name
}

func plannedWorkloadRef(w admission.Workload) ObjectRef {
	return ObjectRef{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name}
}

// mutators names who may have changed a pod: the MutatingAdmissionPolicies
// that match it, the mutating webhooks that match its create (hooks, as
// mutatingWebhooksFor names them), LimitRanger when it says it set
// resources. "" when none is known. matches is "matches" or "match", by
// how many they are.
func mutators(m admission.PodMutation, hooks, ns string) (who, matches string) {
	var names []string
	n := len(m.Policies)
	if n > 0 {
		names = append(names, mapolicy.Describe(m.Policies))
	}
	if strings.HasPrefix(hooks, "mutating webhook ") {
		names = append(names, hooks)
		n += 1 + strings.Count(hooks, ", ")
	}
	if m.LimitRanger {
		names = append(names, "LimitRanger (a LimitRange of namespace "+ns+")")
		n++
	}
	matches = "matches"
	if n > 1 {
		matches = "match"
	}
	return strings.Join(names, "; "), matches
}

// mutationLine is one pod's mutation in one line: "MutatingAdmissionPolicy
// x (binding y) matches this pod; admission: added container sleeper".
func mutationLine(m admission.PodMutation, hooks, ns string) string {
	s := "admission: " + strings.Join(first(m.Changes, 4), ", ")
	if who, matches := mutators(m, hooks, ns); who != "" {
		return who + " " + matches + " this pod; " + s
	}
	return s
}

// podless is what happens to workloads whose pods the API server refuses
// (pods their controllers create, not Helm), by whether Helm waits
// (Env.HelmWait): with --wait the install (upgrade) fails after its
// --timeout, Helm waiting for pods that are never created; without it Helm
// reports success and the runtime runs without them. Unknown, the message
// says both and the impact is runtime-breaks: install-fails says that helm
// install will fail (docs/json.md, impact), which only --wait makes it do. pods is
// what the runtime lacks without --wait ("these workloads have no pods").
func podless(env *Env, pods string) (Impact, string) {
	op := "install"
	if env.Upgrading() {
		op = "upgrade"
	}
	events := "their controllers' FailedCreate events repeat the refusal"
	switch env.HelmWait {
	case HelmWaitOn:
		return helmFails(env), fmt.Sprintf("helm %s --wait fails after its --timeout: Helm waits for the release's Deployments, StatefulSets and DaemonSets to have their pods ready, and the refused pods are never created (%s)", op, events)
	case HelmWaitOff:
		return ImpactRuntimeBreaks, fmt.Sprintf("helm reports success and %s (%s)", pods, events)
	}
	return ImpactRuntimeBreaks, fmt.Sprintf("without --wait Helm reports success and %s (%s); with --wait the %s fails after its --timeout (--helm-wait=true|false says which Helm will run)", pods, events, op)
}
