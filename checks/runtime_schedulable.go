package checks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	schedcorev1 "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// RuntimeSchedulable passes when every pod the runtime will run fits on a
// Ready, schedulable node, given what the pods already bound there request
// and the pods' nodeSelector, required node affinity and tolerations
// (docs/checks/runtime-schedulable.md). The pods come from RuntimePods; the
// placement is first-fit decreasing (FitRuntimePods), which is what the
// scheduler's NodeResourcesFit filter admits, one pod at a time.
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

// RuntimePodSpec is one kind of pod the runtime runs: Replicas copies of Spec.
type RuntimePodSpec struct {
	// Name is the workload's name (Deployment, StatefulSet or hook Job).
	Name     string
	Replicas int
	Spec     corev1.PodSpec
	// Kind is Deployment, StatefulSet or Job, Namespace the manifest's ("":
	// the release namespace) and Hook the helm.sh/hook annotation ("": not
	// a hook), when read from a manifest.
	Kind, Namespace, Hook string
	// Template is the pod template as rendered; Deployment and StatefulSet
	// are the workload as rendered (for --upgrade: what changes, and how
	// the rollout replaces the pods).
	Template    corev1.PodTemplateSpec
	Deployment  *appsv1.Deployment
	StatefulSet *appsv1.StatefulSet
}

// RuntimePods returns the pods the runtime will run and where they were read
// from: the run's rendered release (--chart with the given values) through
// RuntimePodsFromManifest, else plan.DefaultRuntimePods, the chart 0.30.0
// defaults, with the reason the rendering was not used. The error is a
// manifest that does not decode.
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
		return defaultRuntimePods(), plan.DefaultRuntimePodsSource + "; " + reason, nil
	}
	all, err := renderedWorkloads(env, r)
	if err != nil {
		return nil, "", err
	}
	return installPods(all), fmt.Sprintf("the rendered chart %s %s with the given values", r.ChartName, r.ChartVersion), nil
}

// defaultRuntimePods are the chart's default pods (plan.DefaultRuntimePods)
// as the runtime's pods.
func defaultRuntimePods() []RuntimePodSpec {
	var out []RuntimePodSpec
	for _, p := range plan.DefaultRuntimePods() {
		out = append(out, RuntimePodSpec{Name: p.Name, Replicas: p.Replicas, Spec: p.Spec})
	}
	return out
}

// RuntimePodsFromManifest reads the pods a rendered manifest (`helm template`
// output, or a release's manifest plus its hooks) will run: Deployments and
// StatefulSets × spec.replicas (1 when unset), and Jobs (× parallelism, 1
// when unset) that are not hooks or are install/upgrade hooks; pre-/post-
// delete and rollback hooks do not run at install. Documents of other kinds
// are ignored; a document that does not decode is an error.
func RuntimePodsFromManifest(manifest string) ([]RuntimePodSpec, error) {
	all, err := manifestWorkloads(manifest)
	if err != nil {
		return nil, err
	}
	return installPods(all), nil
}

// installPods are the workloads of all whose pods run at install: hook
// Jobs only for install and upgrade hooks.
func installPods(all []RuntimePodSpec) []RuntimePodSpec {
	var out []RuntimePodSpec
	for _, w := range all {
		if hook := w.Hook; w.Kind == "Job" && hook != "" {
			if !strings.Contains(hook, "install") && !strings.Contains(hook, "upgrade") {
				continue
			}
			if strings.Contains(hook, "delete") && !strings.Contains(hook, "install") {
				continue
			}
		}
		out = append(out, w)
	}
	return out
}

// renderedWorkloads are the workloads of a rendering (its objects and
// hooks), decoded once per run and shared by the checks that read them.
func renderedWorkloads(env *Env, r *chart.Rendering) ([]RuntimePodSpec, error) {
	return cluster.Memo(env.Cluster, fmt.Sprintf("chart/workloads/%p", r), func() ([]RuntimePodSpec, error) {
		return workloadsOf(append(append([]chart.Object(nil), r.Objects...), r.Hooks...))
	})
}

// workloadsOf reads every Deployment, StatefulSet and Job of objs (their
// JSON, converted once when they were rendered or read), hooks of every
// kind included.
func workloadsOf(objs []chart.Object) ([]RuntimePodSpec, error) {
	var out []RuntimePodSpec
	for _, o := range objs {
		var spec RuntimePodSpec
		switch o.Kind {
		case "Deployment":
			var d appsv1.Deployment
			if err := json.Unmarshal(o.JSON, &d); err != nil {
				return nil, fmt.Errorf("decoding Deployment %s: %w", o.Name, err)
			}
			spec = RuntimePodSpec{Name: d.Name, Replicas: replicas(d.Spec.Replicas), Spec: d.Spec.Template.Spec,
				Namespace: d.Namespace, Hook: d.Annotations["helm.sh/hook"], Template: d.Spec.Template, Deployment: &d}
		case "StatefulSet":
			var st appsv1.StatefulSet
			if err := json.Unmarshal(o.JSON, &st); err != nil {
				return nil, fmt.Errorf("decoding StatefulSet %s: %w", o.Name, err)
			}
			spec = RuntimePodSpec{Name: st.Name, Replicas: replicas(st.Spec.Replicas), Spec: st.Spec.Template.Spec,
				Namespace: st.Namespace, Hook: st.Annotations["helm.sh/hook"], Template: st.Spec.Template, StatefulSet: &st}
		case "Job":
			var j batchv1.Job
			if err := json.Unmarshal(o.JSON, &j); err != nil {
				return nil, fmt.Errorf("decoding Job %s: %w", o.Name, err)
			}
			spec = RuntimePodSpec{Name: j.Name, Replicas: replicas(j.Spec.Parallelism), Spec: j.Spec.Template.Spec,
				Namespace: j.Namespace, Hook: j.Annotations["helm.sh/hook"], Template: j.Spec.Template}
		default:
			continue
		}
		spec.Kind = o.Kind
		out = append(out, spec)
	}
	return out, nil
}

func replicas(r *int32) int {
	if r == nil {
		return 1
	}
	return int(*r)
}

// podNeed is one pod to place: its effective requests.
type podNeed struct {
	Name                                  string
	MilliCPU, MemoryBytes, EphemeralBytes int64
	spec                                  *corev1.PodSpec
}

// NodeRoom is a node with what is left of its allocatable resources.
type NodeRoom struct {
	Node cluster.Node
	// Free cpu (millicores), memory and ephemeral-storage (bytes) and pod slots.
	MilliCPU, MemoryBytes, EphemeralBytes, Pods int64
}

// FitVerdict is the outcome of placing the runtime's pods.
type FitVerdict struct {
	// Pods is the number of runtime pods; Unfit names those that fit nowhere,
	// with their requests.
	Pods  int
	Unfit []string
	// Closest is the eligible node that comes closest to holding the first
	// pod that does not fit (Found false when no node matches its
	// nodeSelector, affinity and tolerations).
	Closest      NodeRoom
	ClosestFound bool
	// Total requests of the runtime's pods.
	MilliCPU, MemoryBytes int64
	// Nodes is the number of Ready, schedulable nodes considered.
	Nodes int
}

// FitRuntimePods places pods on nodes first-fit decreasing (largest memory,
// then cpu, first; nodes in name order): a node is eligible when Ready and
// not cordoned; a pod fits on it when the node matches the pod's nodeSelector
// and required node affinity (k8s.io/component-helpers nodeaffinity), the
// pod tolerates every NoSchedule/NoExecute taint of the node
// (component-helpers FindMatchingUntoleratedTaint), and the node's free cpu,
// memory, ephemeral-storage and pod slots (allocatable minus what bound
// pods request, see cluster.BoundPodRequests) cover the pod's effective
// requests (component-helpers resource.PodRequests). Requests are those the
// scheduler's NodeResourcesFit filter compares
// (https://kubernetes.io/docs/concepts/scheduling-eviction/resource-bin-packing/).
func FitRuntimePods(specs []RuntimePodSpec, nodes []cluster.Node, bound map[string]cluster.NodeUsage) FitVerdict {
	var rooms []*NodeRoom
	for _, n := range nodes {
		if !n.Ready || n.Unschedulable {
			continue
		}
		u := bound[n.Name]
		rooms = append(rooms, &NodeRoom{Node: n, MilliCPU: n.AllocatableMilliCPU - u.MilliCPU, MemoryBytes: n.AllocatableMemoryBytes - u.MemoryBytes,
			EphemeralBytes: n.AllocatableEphemeralBytes - u.EphemeralBytes, Pods: n.AllocatablePods - u.Pods})
	}
	sort.Slice(rooms, func(i, j int) bool { return rooms[i].Node.Name < rooms[j].Node.Name })
	v := FitVerdict{Nodes: len(rooms)}
	var pods []podNeed
	for i := range specs {
		s := &specs[i]
		req := resourcehelper.PodRequests(&corev1.Pod{Spec: s.Spec}, resourcehelper.PodResourcesOptions{})
		for r := 0; r < s.Replicas; r++ {
			name := s.Name
			if s.Replicas > 1 {
				name = fmt.Sprintf("%s (%d of %d)", s.Name, r+1, s.Replicas)
			}
			pods = append(pods, podNeed{Name: name, MilliCPU: req.Cpu().MilliValue(), MemoryBytes: req.Memory().Value(),
				EphemeralBytes: req.StorageEphemeral().Value(), spec: &s.Spec})
			v.MilliCPU += req.Cpu().MilliValue()
			v.MemoryBytes += req.Memory().Value()
		}
	}
	v.Pods = len(pods)
	sort.SliceStable(pods, func(i, j int) bool {
		if pods[i].MemoryBytes != pods[j].MemoryBytes {
			return pods[i].MemoryBytes > pods[j].MemoryBytes
		}
		return pods[i].MilliCPU > pods[j].MilliCPU
	})
	nodeObjs := map[string]*corev1.Node{}
	for _, r := range rooms {
		nodeObjs[r.Node.Name] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: r.Node.Name, Labels: r.Node.Labels}, Spec: corev1.NodeSpec{Taints: r.Node.TaintList}}
	}
	for _, p := range pods {
		placed := false
		var closest *NodeRoom
		best := -1.0
		for _, r := range rooms {
			if !nodeAdmits(p.spec, nodeObjs[r.Node.Name]) {
				continue
			}
			if r.MilliCPU >= p.MilliCPU && r.MemoryBytes >= p.MemoryBytes && r.EphemeralBytes >= p.EphemeralBytes && r.Pods >= 1 {
				r.MilliCPU -= p.MilliCPU
				r.MemoryBytes -= p.MemoryBytes
				r.EphemeralBytes -= p.EphemeralBytes
				r.Pods--
				placed = true
				break
			}
			if s := closeness(p, r); s > best {
				best, closest = s, r
			}
		}
		if placed {
			continue
		}
		v.Unfit = append(v.Unfit, fmt.Sprintf("%s (%s)", p.Name, needFigures(p)))
		if !v.ClosestFound && closest != nil {
			v.Closest, v.ClosestFound = *closest, true
		}
	}
	return v
}

// nodeAdmits reports whether the node matches the pod's nodeSelector and
// required node affinity and carries no NoSchedule/NoExecute taint the pod
// does not tolerate.
func nodeAdmits(spec *corev1.PodSpec, node *corev1.Node) bool {
	if ok, err := nodeaffinity.NewRequiredNodeAffinity(spec.NodeSelector, spec.Affinity).Match(node); err != nil || !ok {
		return false
	}
	_, untolerated := schedcorev1.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, false)
	return !untolerated
}

// closeness scores how nearly a node holds a pod: the smaller of its free
// cpu and memory ratios to the pod's requests (1 or more means it has room
// for those two).
func closeness(p podNeed, r *NodeRoom) float64 {
	ratio := func(free, need int64) float64 {
		if need <= 0 {
			return 1e9
		}
		return float64(max(free, 0)) / float64(need)
	}
	return min(ratio(r.MilliCPU, p.MilliCPU), ratio(r.MemoryBytes, p.MemoryBytes), ratio(r.EphemeralBytes, p.EphemeralBytes))
}

func needFigures(p podNeed) string {
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
	v := FitRuntimePods(specs, nodes, bound)
	totals := fmt.Sprintf("%d pods requesting cpu %s, memory %s in all, from %s", v.Pods, FormatMilliCPU(v.MilliCPU), formatMi(v.MemoryBytes), source)
	if len(v.Unfit) == 0 {
		return Pass("every runtime pod fits on the %d Ready, schedulable nodes beside the pods already bound there (%s)", v.Nodes, totals), nil
	}
	if v.Nodes == 0 {
		return Fail("no Ready, schedulable node for the runtime's %s", totals).
			WithHint("add a node, or uncordon one (kubectl uncordon NODE)"), nil
	}
	return unfitResult(fmt.Sprintf("%d of %d runtime pods would stay Pending: %s", len(v.Unfit), v.Pods, strings.Join(v.Unfit, ", ")), v, totals), nil
}

// unfitResult is the failure of a placement with pods left over: msg, the
// closest node, totals.
func unfitResult(msg string, v FitVerdict, totals string) Result {
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
