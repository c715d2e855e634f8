package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
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

// quotaPhase is one moment of the install: the pods that run together and
// the objects that exist then.
type quotaPhase struct {
	name string
	pods []quotaPod
	// objects counts the release's objects by resource (group/resource).
	objects map[string]int
	// helm says whether helm itself meets a refusal here (its hooks, its
	// objects) rather than a controller (the runtime's pods).
	helm bool
}

type quotaPod struct {
	pod   *corev1.Pod
	count int
	label string
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
	phases := quotaPhases(p, runs)
	muts, err := podMutations(ctx, env, p, runs)
	if err != nil {
		return Result{}, err
	}
	// What admission changed of what is counted: one line per pod whose
	// requests or limits the API server's answer changed.
	var mutated []string
	for i, w := range p.Workloads {
		if m := muts.pods[i]; m.Resources {
			mutated = append(mutated, w.label()+": "+m.line(mutatingWebhooksFor(ctx, env, p, w, runs.pods[i]), w.Namespace))
		}
	}
	said := countedAsChanged(mutated)
	if muts.note != "" {
		said = append(said, muts.note)
	}
	var over []string
	var refs []ObjectRef
	helmMeets := false
	checked := 0
	for _, q := range quotas {
		refs0 := len(over)
		for _, ph := range phases {
			need := quotaNeed(q, ph)
			for _, name := range sortedResources(q.Hard) {
				n, ok := need[name]
				if !ok || n.IsZero() {
					continue
				}
				hard := q.Hard[name]
				used := q.Used[name]
				room := hard.DeepCopy()
				room.Sub(used)
				if n.Cmp(room) > 0 {
					over = append(over, fmt.Sprintf("ResourceQuota %s: %s needs %s %s, room %s (hard %s, used %s)", q.Name, ph.name, name, n.String(), room.String(), hard.String(), used.String()))
					// Helm creates the objects and runs the hooks; the
					// controllers create the workloads' pods.
					helmMeets = helmMeets || ph.helm || objectResource(name)
				}
			}
		}
		if len(over) > refs0 {
			refs = append(refs, ObjectRef{Kind: "ResourceQuota", Namespace: ns, Name: q.Name})
		}
		checked++
	}
	if len(over) > 0 {
		effect, what := helmFails(env), "helm meets the refusal itself (a hook's pod, an object it creates) and fails"
		if !helmMeets {
			// Only the workloads' pods, which their controllers create.
			effect, what = podless(env, "the release's workloads run without the pods beyond the room")
			what = "the pods beyond the room are refused: " + what
		}
		return Fail("the release does not fit %s of namespace %s: %s:\n%s", plural(len(refs), "ResourceQuota"), ns, what, withNotes(strings.Join(first(over, 8), "\n"), said)).
			WithHint(fmt.Sprintf("raise the quota's hard limits (kubectl edit resourcequota -n %s), or lower the release's replicas and requests in the values", ns)).
			WithObjects(refs...).WithEffect(effect), nil
	}
	return Pass("the release fits all %s of namespace %s (%s)%s", plural(checked, "ResourceQuota"), ns, phaseSummary(phases), prefixLines("\n", said)), nil
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

// quotaPhases are the moments of the install (upgrade) that need room: each
// pre hook alone, then the release's pods with the objects, then with each
// post hook.
func quotaPhases(p *admissionPlan, runs *podRuns) []quotaPhase {
	var pre, post, main []quotaPod
	for i, w := range p.Workloads {
		qp := quotaPod{pod: answeredPod(runs, i), count: w.Pods, label: w.label()}
		before, _ := hookPhase(w.Spec.Hook)
		switch {
		case !w.isHook():
			main = append(main, qp)
		case before:
			pre = append(pre, qp)
		default:
			post = append(post, qp)
		}
	}
	objects := map[string]int{}
	preObjects := map[string]int{}
	for _, o := range p.Objects {
		if !o.Served {
			continue
		}
		key := o.Resource.GroupResource().String()
		if o.Hook == "" {
			objects[key]++
			continue
		}
		if before, _ := hookPhase(o.Hook); before {
			preObjects[key]++
			if !chart.HasHookPolicy(o.Obj.DeletePolicies, "hook-succeeded") {
				objects[key]++
			}
		}
	}
	var out []quotaPhase
	for _, h := range pre {
		out = append(out, quotaPhase{name: "pre hook " + h.label, pods: []quotaPod{h}, objects: preObjects, helm: true})
	}
	if len(pre) == 0 && len(preObjects) > 0 {
		out = append(out, quotaPhase{name: "the pre hooks", objects: preObjects, helm: true})
	}
	out = append(out, quotaPhase{name: "the release's pods", pods: main, objects: objects, helm: false})
	for _, h := range post {
		out = append(out, quotaPhase{name: "the release's pods with " + h.label, pods: append(append([]quotaPod(nil), main...), h), objects: objects, helm: true})
	}
	return out
}

// hookPhase reports whether hook events run before the release's objects.
func hookPhase(events string) (before bool, runs bool) {
	for _, e := range strings.Split(events, ",") {
		switch strings.TrimSpace(e) {
		case "pre-install", "pre-upgrade":
			return true, true
		case "post-install", "post-upgrade":
			runs = true
		}
	}
	return false, runs
}

// quotaNeed sums what phase ph needs of each resource quota q tracks.
func quotaNeed(q cluster.Quota, ph quotaPhase) map[corev1.ResourceName]resource.Quantity {
	need := map[corev1.ResourceName]resource.Quantity{}
	add := func(name corev1.ResourceName, v resource.Quantity) {
		if _, tracked := q.Hard[name]; !tracked {
			return
		}
		cur := need[name]
		cur.Add(v)
		need[name] = cur
	}
	for _, qp := range ph.pods {
		if !quotaSelects(q, qp.pod) || qp.count == 0 {
			continue
		}
		req := resourcehelper.PodRequests(qp.pod, resourcehelper.PodResourcesOptions{})
		lim := resourcehelper.PodLimits(qp.pod, resourcehelper.PodResourcesOptions{})
		for i := 0; i < qp.count; i++ {
			add(corev1.ResourcePods, resource.MustParse("1"))
			add("count/pods", resource.MustParse("1"))
			for name, v := range req {
				add(name, v)
				add(corev1.ResourceName("requests."+string(name)), v)
			}
			for name, v := range lim {
				add(corev1.ResourceName("limits."+string(name)), v)
			}
		}
	}
	core := map[string]corev1.ResourceName{"services": corev1.ResourceServices, "secrets": corev1.ResourceSecrets, "configmaps": corev1.ResourceConfigMaps,
		"persistentvolumeclaims": corev1.ResourcePersistentVolumeClaims, "replicationcontrollers": corev1.ResourceReplicationControllers, "resourcequotas": corev1.ResourceQuotas}
	for gr, n := range ph.objects {
		v := *resource.NewQuantity(int64(n), resource.DecimalSI)
		add(corev1.ResourceName("count/"+gr), v)
		if name, ok := core[gr]; ok {
			add(name, v)
		}
	}
	return need
}

// quotaSelects reports whether q's scopes count pod (the quota
// controller's pod scopes; CrossNamespacePodAffinity is taken to match).
func quotaSelects(q cluster.Quota, pod *corev1.Pod) bool {
	terminating := pod.Spec.ActiveDeadlineSeconds != nil
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	lim := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
	bestEffort := len(req) == 0 && len(lim) == 0
	scope := func(s corev1.ResourceQuotaScope, op corev1.ScopeSelectorOperator, values []string) bool {
		switch s {
		case corev1.ResourceQuotaScopeTerminating:
			return terminating
		case corev1.ResourceQuotaScopeNotTerminating:
			return !terminating
		case corev1.ResourceQuotaScopeBestEffort:
			return bestEffort
		case corev1.ResourceQuotaScopeNotBestEffort:
			return !bestEffort
		case corev1.ResourceQuotaScopePriorityClass:
			pc := pod.Spec.PriorityClassName
			switch op {
			case corev1.ScopeSelectorOpExists:
				return pc != ""
			case corev1.ScopeSelectorOpDoesNotExist:
				return pc == ""
			case corev1.ScopeSelectorOpNotIn:
				for _, v := range values {
					if v == pc {
						return false
					}
				}
				return true
			default:
				for _, v := range values {
					if v == pc {
						return true
					}
				}
				return false
			}
		}
		return true
	}
	for _, s := range q.Scopes {
		if !scope(s, corev1.ScopeSelectorOpExists, nil) {
			return false
		}
	}
	for _, e := range q.Selector {
		if !scope(e.Scope, e.Operator, e.Names) {
			return false
		}
	}
	return true
}

// objectResource reports whether a quota's resource name counts objects
// the release creates (count/configmaps, services, secrets, ...) rather
// than pods or their requests and limits: Helm's own create meets it.
func objectResource(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceServices, corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceReplicationControllers, corev1.ResourceQuotas:
		return true
	}
	return strings.HasPrefix(string(name), "count/") && name != "count/pods"
}

func sortedResources(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func phaseSummary(phases []quotaPhase) string {
	pods := 0
	for _, ph := range phases {
		if ph.name == "the release's pods" {
			for _, qp := range ph.pods {
				pods += qp.count
			}
		}
	}
	return fmt.Sprintf("%s of the release and each hook Job's pod, with the requests and limits their dry runs came back with", plural(pods, "pod"))
}
