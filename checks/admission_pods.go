package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

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

// plannedPods are the pods of the plan's workloads, as podOf builds them.
func plannedPods(_ *Env, p *admissionPlan) []*corev1.Pod {
	out := make([]*corev1.Pod, len(p.Workloads))
	for i, w := range p.Workloads {
		out[i], _ = podOf(w, p)
	}
	return out
}

// answeredPod is the pod as the API server would store it (mutated,
// LimitRange defaults applied) when the dry run was admitted, else the pod
// sent.
func answeredPod(runs *podRuns, i int) *corev1.Pod {
	if v := runs.verdicts[i]; v.Object != nil {
		var pod corev1.Pod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(v.Object.Object, &pod); err == nil {
			return &pod
		}
	}
	return runs.pods[i]
}

// addedContainers returns the containers of got that sent does not have:
// what a mutating webhook added. Native sidecars (init containers with
// restartPolicy Always) end with the pod and are not returned.
func addedContainers(sent, got *corev1.Pod) []string {
	have := map[string]bool{}
	for _, c := range sent.Spec.Containers {
		have[c.Name] = true
	}
	var out []string
	for _, c := range got.Spec.Containers {
		if !have[c.Name] {
			out = append(out, c.Name)
		}
	}
	return out
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
	who, level, err := identityAndLevel(ctx, env, runs.pods)
	ns := p.Namespace
	if err != nil {
		return Result{}, err
	}
	muts, err := podMutations(ctx, env, p, runs)
	if err != nil {
		return Result{}, err
	}
	var changed []string
	var refused, rbac, hints, notes []string
	var groups refusalGroups
	var refs []ObjectRef
	hookFails := false
	warned := map[string][]string{}
	local := !p.NamespaceExists
	nsPolicy := namespacePolicy(p.NamespaceLabels)
	sent := 0
	for i, w := range p.Workloads {
		v := runs.verdicts[i]
		if local {
			r, warnings, err := evaluateLocally(runs.pods[i], nsPolicy)
			if err != nil {
				return Result{}, err
			}
			v = verdict{Refused: r, Warnings: warnings}
		} else if v.NotJudged != "" {
			notes = append(notes, w.label()+": not judged: "+v.NotJudged)
			continue
		}
		if v.Refused != nil && v.Refused.Layer == LayerRBAC {
			rbac = append(rbac, v.Refused.Policy)
			continue
		}
		sent++
		for _, wn := range v.Warnings {
			warned[wn] = append(warned[wn], w.label())
		}
		m := muts.pods[i]
		if v.Refused != nil {
			line := fmt.Sprintf("%s: %s: %s", w.label(), v.Refused.Short(), v.Refused.Detail)
			if len(m.Policies) > 0 {
				// Validation judges the pod the mutating policies made.
				matches := "matches"
				if len(m.Policies) > 1 {
					matches = "match"
				}
				line += "; " + mapolicy.Describe(m.Policies) + " " + matches + " this pod: admission judged the pod as changed"
			}
			refused = append(refused, line)
			refs = append(refs, w.ref())
			groups.add(*v.Refused, w.Spec.Name)
			hookFails = hookFails || w.isHook()
			continue
		}
		if w.Spec.Kind == "Job" && v.Object != nil {
			if added := addedContainers(runs.pods[i], answeredPod(runs, i)); len(added) > 0 {
				hooks := mutatingWebhooksFor(ctx, env, p, w, runs.pods[i])
				by, matches := m.mutators(hooks, w.Namespace)
				if by == "" {
					by, matches = "a mutating webhook or MutatingAdmissionPolicy", "matches"
				}
				refused = append(refused, fmt.Sprintf("%s: %s %s this pod and admission adds container %s, which is not a native sidecar: the Job's pod never completes (its own container exits, %s does not)",
					w.label(), by, matches, strings.Join(added, ", "), strings.Join(added, ", ")))
				refs = append(refs, w.ref())
				if len(m.Policies) == 0 || strings.HasPrefix(hooks, "mutating webhook ") {
					hints = appendUnique(hints, fmt.Sprintf("exclude the release's Jobs from %s (its namespaceSelector or objectSelector; for Istio the pod label sidecar.istio.io/inject=false), or have it inject a native sidecar (an init container with restartPolicy: Always, Kubernetes 1.29+)", hooks))
				}
				for _, pm := range m.Policies {
					hints = appendUnique(hints, fmt.Sprintf("exclude the release's Jobs from MutatingAdmissionPolicy %s (binding %s's matchResources: namespaceSelector, objectSelector or excludeResourceRules; or a matchCondition of the policy), or have it add a native sidecar (an init container with restartPolicy: Always, Kubernetes 1.29+)", pm.Policy, pm.Binding))
				}
				hookFails = hookFails || w.isHook()
				continue
			}
		}
		if len(m.Changes) > 0 {
			changed = append(changed, w.label()+": "+m.line(mutatingWebhooksFor(ctx, env, p, w, runs.pods[i]), w.Namespace))
		}
	}
	notes = append(changed, notes...)
	if muts.note != "" {
		notes = append(notes, muts.note)
	}
	if len(runs.defaultSA) > 0 {
		var sas []string
		for i, sa := range runs.defaultSA {
			sas = append(sas, fmt.Sprintf("%s (ServiceAccount %s)", p.Workloads[i].Spec.Name, sa))
		}
		sort.Strings(sas)
		notes = append(notes, fmt.Sprintf("the release creates the ServiceAccount of %s: their pods were sent with ServiceAccount default (the pull secrets and token settings of theirs are not modelled)", strings.Join(first(sas, 4), ", ")))
	}
	notes = append(notes, namespaceNotes(p)...)
	if local {
		notes = append(notes, fmt.Sprintf("PodSecurity for namespace %s was evaluated here with k8s.io/pod-security-admission for its labels; a cluster-wide default set in the API server's admission configuration is invisible to a client", ns))
	}
	if len(refused) > 0 {
		lack := "these workloads have no pods"
		if env.Upgrading() {
			lack = "these workloads get no new pods (a Deployment's rollout stalls beside its old pods)"
		}
		effect, tail := podless(env, lack)
		if hookFails {
			effect = helmFails(env)
			tail = "helm waits for the hook Jobs until --timeout and fails (the Job controller's FailedCreate events repeat the refusal)"
		}
		msg := fmt.Sprintf("%s of the %d workloads will not run as %s: %s:\n%s", plural(len(refused), "pod"), sent, who, tail, strings.Join(first(refused, 8), "\n"))
		if h := groups.hints(true, p, ns, level); h != "" {
			hints = append([]string{h}, hints...)
		}
		return Fail("%s", withNotes(msg, notes)).WithHint(strings.Join(hints, " | ")).WithObjects(refs...).WithEffect(effect), nil
	}
	if len(rbac) > 0 && sent == 0 {
		return rbacSkip(env, who, rbac), nil
	}
	if len(warned) > 0 {
		lines := warningLines(warned)
		msg := fmt.Sprintf("the API server admits the pods of all %d workloads as %s, with %s:\n%s", sent, who, plural(len(warned), "warning"), strings.Join(first(lines, 8), "\n"))
		hint := fmt.Sprintf("a PodSecurity warning is what namespace %s's enforce label would refuse", ns)
		if level != "restricted" {
			hint += fmt.Sprintf("; every pod of the release meets %s", level)
		}
		return Warn("%s", withNotes(msg, notes)).WithHint(hint), nil
	}
	msg := fmt.Sprintf("the API server admits the pods of all %d workloads (dry runs as %s)", sent, who)
	if len(rbac) > 0 {
		msg += fmt.Sprintf("; not judged for lack of rights: %s", strings.Join(first(dedupe(sortedCopy(rbac)), 4), ", "))
	}
	return Pass("%s", withNotes(msg, notes)), nil
}
