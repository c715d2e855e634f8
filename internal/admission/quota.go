package admission

import (
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// What a ResourceQuota counts at each moment of the install: a dry run of
// one pod cannot see a sum. The quota controller's evaluators
// (https://github.com/kubernetes/kubernetes/tree/master/pkg/quota/v1/evaluator/core)
// count pods, their requests and limits (k8s.io/component-helpers
// PodRequests and PodLimits) and objects by resource
// (https://kubernetes.io/docs/concepts/policy/resource-quotas/).

// PhaseKind is which moment of the install a Phase is.
type PhaseKind int

// The moments, in the order Helm reaches them.
const (
	// PhasePreHook is one pre hook Job's pod alone (Helm runs hooks one at
	// a time), with the pre hooks' objects.
	PhasePreHook PhaseKind = iota
	// PhasePreHooks is the pre hooks' objects, when no pre hook has pods.
	PhasePreHooks
	// PhaseRelease is the release's pods with its objects.
	PhaseRelease
	// PhasePostHook is the release's pods with one post hook Job's pod.
	PhasePostHook
)

// QuotaPod is Count copies of one workload's pod.
type QuotaPod struct {
	// Pod is the pod as its dry run came back (PodRuns.Answered).
	Pod      *corev1.Pod
	Count    int
	Workload *Workload
}

// Phase is one moment of the install: the pods that run together and the
// objects that exist then.
type Phase struct {
	Kind PhaseKind
	// Hook is the hook Job of a PhasePreHook or PhasePostHook.
	Hook *Workload
	Pods []QuotaPod
	// Objects counts the release's objects by resource ("group/resource"
	// as schema.GroupResource prints it: "configmaps", "jobs.batch").
	Objects map[string]int
	// Helm says whether helm itself meets a refusal here (its hooks, its
	// objects) rather than a controller (the runtime's pods).
	Helm bool
}

// QuotaPhases are the moments of the install (upgrade) that need room:
// each pre hook alone, then the release's pods with the objects, then with
// each post hook. A pre hook's object is counted with the release's unless
// its delete policy removes it when it succeeds (hook-succeeded).
func QuotaPhases(p *Plan, runs *PodRuns) []Phase {
	var pre, post, main []QuotaPod
	for i := range p.Workloads {
		w := &p.Workloads[i]
		qp := QuotaPod{Pod: runs.Answered(i), Count: w.Pods, Workload: w}
		switch {
		case !w.IsHook():
			main = append(main, qp)
		case w.Hook.Pre:
			pre = append(pre, qp)
		default:
			post = append(post, qp)
		}
	}
	objects, preObjects := map[string]int{}, map[string]int{}
	for _, o := range p.Objects {
		if !o.Served {
			continue
		}
		key := o.Resource.GroupResource().String()
		switch {
		case o.Hook == nil:
			objects[key]++
		case o.Hook.Pre:
			preObjects[key]++
			if !chart.HasHookPolicy(o.Obj.DeletePolicies, release.HookSucceeded) {
				objects[key]++
			}
		}
	}
	var out []Phase
	for _, h := range pre {
		out = append(out, Phase{Kind: PhasePreHook, Hook: h.Workload, Pods: []QuotaPod{h}, Objects: preObjects, Helm: true})
	}
	if len(pre) == 0 && len(preObjects) > 0 {
		out = append(out, Phase{Kind: PhasePreHooks, Objects: preObjects, Helm: true})
	}
	out = append(out, Phase{Kind: PhaseRelease, Pods: main, Objects: objects})
	for _, h := range post {
		out = append(out, Phase{Kind: PhasePostHook, Hook: h.Workload, Pods: append(append([]QuotaPod(nil), main...), h), Objects: objects, Helm: true})
	}
	return out
}

// Excess is one resource of a quota a phase needs more of than the quota
// has room for (room: hard minus the quota controller's used).
type Excess struct {
	Phase                  *Phase
	Resource               corev1.ResourceName
	Need, Room, Hard, Used resource.Quantity
	// HelmMeets says helm itself meets the refusal: a hook's phase, or an
	// object count (Helm creates the objects; the controllers create the
	// workloads' pods).
	HelmMeets bool
}

// Exceeded returns, phase by phase and resource by resource (sorted),
// what of q the phases need beyond its room.
func Exceeded(q cluster.Quota, phases []Phase) []Excess {
	var out []Excess
	for i := range phases {
		ph := &phases[i]
		need := quotaNeed(q, *ph)
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
				out = append(out, Excess{Phase: ph, Resource: name, Need: n, Room: room, Hard: hard, Used: used, HelmMeets: ph.Helm || objectResource(name)})
			}
		}
	}
	return out
}

// quotaNeed sums what phase ph needs of each resource quota q tracks.
func quotaNeed(q cluster.Quota, ph Phase) map[corev1.ResourceName]resource.Quantity {
	need := map[corev1.ResourceName]resource.Quantity{}
	add := func(name corev1.ResourceName, v resource.Quantity) {
		if _, tracked := q.Hard[name]; !tracked {
			return
		}
		cur := need[name]
		cur.Add(v)
		need[name] = cur
	}
	for _, qp := range ph.Pods {
		if !quotaSelects(q, qp.Pod) || qp.Count == 0 {
			continue
		}
		req := resourcehelper.PodRequests(qp.Pod, resourcehelper.PodResourcesOptions{})
		lim := resourcehelper.PodLimits(qp.Pod, resourcehelper.PodResourcesOptions{})
		for i := 0; i < qp.Count; i++ {
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
	for gr, n := range ph.Objects {
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
	for _, s := range q.Scopes {
		if !scopeSelects(pod, s, corev1.ScopeSelectorOpExists, nil) {
			return false
		}
	}
	for _, e := range q.Selector {
		if !scopeSelects(pod, e.Scope, e.Operator, e.Names) {
			return false
		}
	}
	return true
}

// scopeSelects reports whether one scope (with its selector's operator
// and values) selects pod.
func scopeSelects(pod *corev1.Pod, s corev1.ResourceQuotaScope, op corev1.ScopeSelectorOperator, values []string) bool {
	terminating := pod.Spec.ActiveDeadlineSeconds != nil
	bestEffort := func() bool {
		req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
		lim := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
		return len(req) == 0 && len(lim) == 0
	}
	switch s {
	case corev1.ResourceQuotaScopeTerminating:
		return terminating
	case corev1.ResourceQuotaScopeNotTerminating:
		return !terminating
	case corev1.ResourceQuotaScopeBestEffort:
		return bestEffort()
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !bestEffort()
	case corev1.ResourceQuotaScopePriorityClass:
		pc := pod.Spec.PriorityClassName
		switch op {
		case corev1.ScopeSelectorOpExists:
			return pc != ""
		case corev1.ScopeSelectorOpDoesNotExist:
			return pc == ""
		case corev1.ScopeSelectorOpNotIn:
			return !contains(values, pc)
		default:
			return contains(values, pc)
		}
	}
	return true
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
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
