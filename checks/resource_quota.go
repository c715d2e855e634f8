package checks

import (
	"context"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/admission"
)

// ResourceQuota passes when what the install (or upgrade) starts fits the
// room every ResourceQuota of the release namespace has left (spec.hard
// minus status.used, the quota controller's figure): at its peak, the pods
// of the release's workloads × replicas (an upgrade: the new workloads, the
// changed Deployments' rollout surge beside their old pods), with the
// requests and limits the pods' dry runs came back with (LimitRange
// defaults applied, sidecars a webhook or MutatingAdmissionPolicy adds
// included, and the pods whose requests or limits admission changed named
// with the policies that match them: podMutations); before them each
// pre-install hook Job's pod alone (Helm runs hooks one at a time); after
// them the post-install hooks; and the objects the release creates, counted
// (count/<resource>, services, secrets, configmaps, ...). A dry run of one
// pod cannot see a sum (docs/checks/resource-quota.md). A quota's scopes
// (Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass)
// select the pods it counts. What Helm meets itself (a hook's pod, an
// object it creates) fails the install: install-fails (upgrade-fails). The
// workloads' pods beyond the room follow Helm's --wait (--helm-wait,
// Env.HelmWait; podless): with it the install fails after its --timeout
// (install-fails, upgrade-fails), without it Helm reports success and the
// workloads run short of pods (runtime-breaks); not told, the message says
// both and the impact is runtime-breaks.
func ResourceQuota() Check {
	return Check{
		Meta: Meta{
			ID:         "resource-quota",
			Impact:     ImpactRuntimeBreaks,
			ReadsChart: true,
			Category:   CategoryAdmission,
			Modes:      ModePre | ModeUpgrade,
			Title:      "The release's pods and objects fit every ResourceQuota of its namespace",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
		},
		Run: runResourceQuota,
	}
}

func runResourceQuota(ctx context.Context, env *Env) (Result, error) {
	p, skip, err := admissionSetup(ctx, env)
	if skip != nil || err != nil {
		return derefResult(skip), err
	}
	ns := p.Namespace
	if !p.NamespaceExists {
		return Pass("namespace %s does not exist yet, so it has no ResourceQuota (a policy engine that adds quotas to new namespaces, a Kyverno generate rule say, is not visible before it exists)", ns), nil
	}
	quotas, err := env.Cluster.ResourceQuotas(ns)
	if err != nil {
		return Result{}, err
	}
	if len(quotas) == 0 {
		return Pass("namespace %s has no ResourceQuota", ns), nil
	}
	runs, err := dryRunPods(ctx, env, p)
	if err != nil {
		return Result{}, err
	}
	phases := admission.QuotaPhases(p, runs)
	said, err := quotaMutations(ctx, env, p, runs)
	if err != nil {
		return Result{}, err
	}
	var over []string
	var refs []ObjectRef
	helmMeets := false
	for _, q := range quotas {
		excess := admission.Exceeded(q, phases)
		for _, e := range excess {
			over = append(over, fmt.Sprintf("ResourceQuota %s: %s needs %s %s, room %s (hard %s, used %s)", q.Name, phaseName(*e.Phase), e.Resource, e.Need.String(), e.Room.String(), e.Hard.String(), e.Used.String()))
			helmMeets = helmMeets || e.HelmMeets
		}
		if len(excess) > 0 {
			refs = append(refs, ObjectRef{Kind: "ResourceQuota", Namespace: ns, Name: q.Name})
		}
	}
	if len(over) > 0 {
		return quotaFail(env, ns, over, refs, said, helmMeets), nil
	}
	return Pass("the release fits all %s of namespace %s (%s)%s", plural(len(quotas), "ResourceQuota"), ns, phaseSummary(phases), prefixLines("\n", said)), nil
}

// quotaMutations are the lines of what admission changed of what is
// counted: one line per pod whose requests or limits the API server's
// answer changed, and what the policies' reading left open.
func quotaMutations(ctx context.Context, env *Env, p *admission.Plan, runs *admission.PodRuns) ([]string, error) {
	muts, err := podMutations(ctx, env, p, runs)
	if err != nil {
		return nil, err
	}
	var mutated []string
	for i := range p.Workloads {
		w := &p.Workloads[i]
		if m := muts.pods[i]; m.Resources {
			mutated = append(mutated, workloadLabel(*w)+": "+mutationLine(m, mutatingWebhooksFor(ctx, env, p, w, runs.Pods[i]), w.Namespace))
		}
	}
	said := countedAsChanged(mutated)
	if muts.note != "" {
		said = append(said, muts.note)
	}
	return said, nil
}

// quotaFail words the quotas the release does not fit: helm fails when it
// meets the refusal itself (a hook's pod, an object it creates), else the
// workloads' pods beyond the room follow --wait (podless).
func quotaFail(env *Env, ns string, over []string, refs []ObjectRef, said []string, helmMeets bool) Result {
	effect, what := helmFails(env), "helm meets the refusal itself (a hook's pod, an object it creates) and fails"
	if !helmMeets {
		// Only the workloads' pods, which their controllers create.
		effect, what = podless(env, "the release's workloads run without the pods beyond the room")
		what = "the pods beyond the room are refused: " + what
	}
	return Fail("the release does not fit %s of namespace %s: %s:\n%s", plural(len(refs), "ResourceQuota"), ns, what, withNotes(strings.Join(first(over, 8), "\n"), said)).
		WithHint(fmt.Sprintf("raise the quota's hard limits (kubectl edit resourcequota -n %s), or lower the release's replicas and requests in the values", ns)).
		WithObjects(refs...).WithEffect(effect)
}

// countedAsChanged introduces the pods whose requests and limits admission
// changed: the quota counts them as changed.
func countedAsChanged(lines []string) []string {
	if len(lines) == 0 {
		return nil
	}
	return append([]string{"counted as admission changed them:"}, first(lines, 6)...)
}

func prefixLines(sep string, lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return sep + strings.Join(lines, sep)
}

// phaseName names a moment of the install: "pre hook hook Job x (...)",
// "the pre hooks", "the release's pods", "the release's pods with ...".
func phaseName(ph admission.Phase) string {
	switch ph.Kind {
	case admission.PhasePreHook:
		return "pre hook " + workloadLabel(*ph.Hook)
	case admission.PhasePreHooks:
		return "the pre hooks"
	case admission.PhasePostHook:
		return "the release's pods with " + workloadLabel(*ph.Hook)
	}
	return "the release's pods"
}

func phaseSummary(phases []admission.Phase) string {
	pods := 0
	for _, ph := range phases {
		if ph.Kind == admission.PhaseRelease {
			for _, qp := range ph.Pods {
				pods += qp.Count
			}
		}
	}
	return fmt.Sprintf("%s of the release and each hook Job's pod, with the requests and limits their dry runs came back with", plural(pods, "pod"))
}
