package admission

import (
	"fmt"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/schedule"
)

// Object is one object the install or upgrade creates (or, in
// Plan.Changed, patches).
type Object struct {
	Obj chart.Object
	// U is the object as Helm sends it: the release's labels and
	// annotations set (not on hooks, as Helm does), the namespace filled in.
	U *unstructured.Unstructured
	// Resource and Namespaced are the kind's, when the cluster serves it
	// (Served).
	Resource   schema.GroupVersionResource
	Namespaced bool
	Served     bool
	// Namespace is where it goes ("" for a cluster-scoped object).
	Namespace string
	// Hook is when Helm runs it (nil for a release object).
	Hook *Hook
}

// RequestNamespace is the namespace of the object's API request: its
// Namespace when its kind is namespaced, else "".
func (o Object) RequestNamespace() string {
	if o.Namespaced {
		return o.Namespace
	}
	return ""
}

// Hook is when Helm runs a hook in the operation planned, from its events
// as Helm parsed them (chart.Object.Events: release.Hook.Events).
type Hook struct {
	Events []release.HookEvent
	// Pre is true when it runs before the release's objects (a
	// pre-install hook of an install, a pre-upgrade hook of an upgrade).
	Pre bool
}

// String is the hook's events as its helm.sh/hook annotation lists them:
// "pre-install,pre-upgrade".
func (h *Hook) String() string {
	events := make([]string, len(h.Events))
	for i, e := range h.Events {
		events[i] = string(e)
	}
	return strings.Join(events, ",")
}

// Workload is one workload whose pods the install or upgrade starts.
type Workload struct {
	// Kind is Deployment, StatefulSet or Job.
	Kind, Name string
	// Namespace is where its pods go.
	Namespace string
	// Template is its pod template as rendered.
	Template corev1.PodTemplateSpec
	// Pods is how many of its pods run at once at the peak of the install
	// or upgrade (replicas; for a changed Deployment in an upgrade, its
	// rollout's surge beside the old pods; a hook Job's parallelism).
	Pods int
	// Hook is when Helm runs it, for a hook Job (nil otherwise); NewPlan
	// sets it from the rendering's hooks.
	Hook *Hook
}

// IsHook reports whether the workload is a hook Job.
func (w Workload) IsHook() bool { return w.Hook != nil }

// Plan is what the install (or upgrade) will create.
type Plan struct {
	// Chart names the rendering: "gitops-runtime 0.30.0".
	Chart string
	// Namespace is the release namespace; NamespaceExists whether it
	// exists, NamespaceLabels its labels (those it will get when it does
	// not: createdNamespaceLabels).
	Namespace       string
	NamespaceExists bool
	NamespaceLabels map[string]string
	// Objects are created, in Helm's order: pre-install (or pre-upgrade)
	// hooks by weight, the release's objects in Helm's install order
	// (cluster-scoped kinds such as CRDs and ClusterRoles first), then the
	// post-install (post-upgrade) hooks.
	Objects []Object
	// Changed are, in an upgrade, the objects of the release the target
	// changes (Helm patches them; internal/apply dry-runs those).
	Changed []Object
	// Workloads are those whose pods the install (upgrade) starts, hook
	// Jobs first.
	Workloads []Workload
	// Kept counts, in an upgrade, the workloads whose pods keep running
	// (their template does not change).
	Kept int
	// ServiceAccounts are the release's own ServiceAccounts
	// ("namespace/name"): they do not exist before the install.
	ServiceAccounts map[string]bool
}

// Input is what a plan is read from.
type Input struct {
	// Rendering is the chart rendered (an upgrade's target).
	Rendering *chart.Rendering
	// Release and Namespace are the release's name and namespace.
	Release, Namespace string
	// Upgrade is true for helm upgrade (its pre-upgrade and post-upgrade
	// hooks run), false for helm install; InCurrent, in an upgrade, says
	// whether the revision it starts from has an object (Helm patches it
	// rather than creating it).
	Upgrade   bool
	InCurrent func(chart.Object) bool
	// NamespaceExists and NamespaceLabels are the release namespace as the
	// cluster has it (exists when it could not be read: the dry runs say
	// otherwise if it does not).
	NamespaceExists bool
	NamespaceLabels map[string]string
	// API is the cluster's discovery document.
	API *cluster.APIResources
	// Workloads are the workloads whose pods start, with their peak pod
	// counts, hook Jobs included (every workload the rendering's hooks
	// hold: NewPlan keeps the Jobs among them that run in this operation).
	Workloads []Workload
	// Kept counts the pods an upgrade leaves running.
	Kept int
}

// NewPlan reads the plan of an install or upgrade.
func NewPlan(in Input) (*Plan, error) {
	r := in.Rendering
	p := &Plan{Chart: r.ChartName + " " + r.ChartVersion, Namespace: in.Namespace, NamespaceExists: in.NamespaceExists,
		NamespaceLabels: in.NamespaceLabels, Kept: in.Kept, ServiceAccounts: map[string]bool{}}
	if !p.NamespaceExists {
		p.NamespaceLabels = createdNamespaceLabels(in.Namespace)
	}
	if err := p.addObjects(in); err != nil {
		return nil, err
	}
	p.addWorkloads(in)
	return p, nil
}

// createdNamespaceLabels are the labels of a release namespace helm
// install --create-namespace creates: name=<ns> (Helm 3 and 4, pkg/action
// install.go, https://github.com/helm/helm/blob/main/pkg/action/install.go)
// and the API server's kubernetes.io/metadata.name
// (https://kubernetes.io/docs/reference/labels-annotations-taints/#kubernetes-io-metadata-name).
func createdNamespaceLabels(ns string) map[string]string {
	return map[string]string{"name": ns, "kubernetes.io/metadata.name": ns}
}

// hookOf is when Helm runs a hook object in the operation (upgrade or
// install); runs is false when it does not run there.
func hookOf(o chart.Object, upgrade bool) (h *Hook, runs bool) {
	runs, pre := hookRuns(o.Events, upgrade)
	return &Hook{Events: o.Events, Pre: pre}, runs
}

// hookRuns reports whether a hook of these events runs in the
// operation's Helm action, and before the release's objects
// (https://helm.sh/docs/topics/charts_hooks/#the-available-hooks).
func hookRuns(events []release.HookEvent, upgrade bool) (runs, pre bool) {
	for _, e := range events {
		switch e {
		case release.HookPreInstall:
			runs, pre = runs || !upgrade, pre || !upgrade
		case release.HookPostInstall:
			runs = runs || !upgrade
		case release.HookPreUpgrade:
			runs, pre = runs || upgrade, pre || upgrade
		case release.HookPostUpgrade:
			runs = runs || upgrade
		}
	}
	return runs, pre
}

// addObjects sets the plan's objects: the hooks that run, in Helm's order
// around the release's objects; in an upgrade the objects of the current
// revision go to Changed.
func (p *Plan) addObjects(in Input) error {
	var pre, post []Object
	for _, o := range in.Rendering.Hooks {
		h, runs := hookOf(o, in.Upgrade)
		if !runs {
			continue
		}
		po, err := object(in, o, h)
		if err != nil {
			return err
		}
		if h.Pre {
			pre = append(pre, po)
		} else {
			post = append(post, po)
		}
	}
	sortHooks(pre)
	sortHooks(post)
	var objs []Object
	for _, o := range in.Rendering.Objects {
		po, err := object(in, o, nil)
		if err != nil {
			return err
		}
		changed := in.InCurrent != nil && in.InCurrent(o)
		if po.Obj.Kind == "ServiceAccount" && !changed {
			p.ServiceAccounts[po.Namespace+"/"+po.Obj.Name] = true
		}
		if changed {
			p.Changed = append(p.Changed, po)
			continue
		}
		objs = append(objs, po)
	}
	for _, h := range append(append([]Object(nil), pre...), post...) {
		if h.Obj.Kind == "ServiceAccount" {
			p.ServiceAccounts[h.Namespace+"/"+h.Obj.Name] = true
		}
	}
	sort.SliceStable(objs, func(i, j int) bool { return installRank(objs[i].Obj.Kind) < installRank(objs[j].Obj.Kind) })
	p.Objects = append(append(pre, objs...), post...)
	return nil
}

// object is o as Helm sends it (hook: nil for a release object).
func object(in Input, o chart.Object, hook *Hook) (Object, error) {
	po := Object{Obj: o, Hook: hook, U: &unstructured.Unstructured{}}
	if err := po.U.UnmarshalJSON(o.JSON); err != nil {
		return po, fmt.Errorf("rendered %s %s: %w", o.Kind, o.Name, err)
	}
	po.Resource, po.Namespaced, po.Served = in.API.Resource(o.APIVersion, o.Kind)
	if po.Namespaced || !po.Served {
		po.Namespace = o.Namespace
		if po.Namespace == "" {
			po.Namespace = in.Namespace
		}
	}
	if po.Namespaced {
		po.U.SetNamespace(po.Namespace)
	}
	if hook == nil {
		setReleaseMetadata(po.U, in.Release, in.Namespace)
	}
	return po, nil
}

// addWorkloads sets the plan's workloads: those of in with pods to start,
// the hook Jobs among them only when they run in the operation, hook Jobs
// first.
func (p *Plan) addWorkloads(in Input) {
	hooks := map[string]chart.Object{}
	for _, o := range in.Rendering.Hooks {
		hooks[schedule.WorkloadKey(o.Kind, o.Namespace, o.Name, in.Namespace)] = o
	}
	for _, w := range in.Workloads {
		w.Hook = nil
		if o, ok := hooks[schedule.WorkloadKey(w.Kind, w.Namespace, w.Name, in.Namespace)]; ok {
			h, runs := hookOf(o, in.Upgrade)
			if w.Kind != "Job" || !runs {
				continue
			}
			w.Hook = h
		}
		if w.Pods > 0 {
			p.Workloads = append(p.Workloads, w)
		}
	}
	sort.SliceStable(p.Workloads, func(i, j int) bool {
		return p.Workloads[i].IsHook() && !p.Workloads[j].IsHook()
	})
}

// sortHooks orders hooks as Helm runs them: by weight, then name
// (pkg/action hooks.go, hookByWeight:
// https://github.com/helm/helm/blob/v3.22.0/pkg/action/hooks.go).
func sortHooks(hs []Object) {
	sort.SliceStable(hs, func(i, j int) bool {
		wi, wj := hs[i].Obj.Weight, hs[j].Obj.Weight
		if wi != wj {
			return wi < wj
		}
		return hs[i].Obj.Name < hs[j].Obj.Name
	})
}

// installRank is a kind's place in Helm's install order
// (releaseutil.InstallOrder); kinds it does not list come last.
func installRank(kind string) int {
	for i, k := range releaseutil.InstallOrder {
		if k == kind {
			return i
		}
	}
	return len(releaseutil.InstallOrder)
}

// setReleaseMetadata labels and annotates a release object as Helm does
// before it creates it (pkg/action validate.go setMetadataVisitor:
// https://github.com/helm/helm/blob/v3.22.0/pkg/action/validate.go).
func setReleaseMetadata(u *unstructured.Unstructured, release, namespace string) {
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["app.kubernetes.io/managed-by"] = "Helm"
	u.SetLabels(labels)
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["meta.helm.sh/release-name"] = release
	ann["meta.helm.sh/release-namespace"] = namespace
	u.SetAnnotations(ann)
}

// PlannedCRDs are the "group/kind"s the plan's CRDs define.
func (p *Plan) PlannedCRDs() map[string]bool {
	out := map[string]bool{}
	for _, o := range append(append([]Object(nil), p.Objects...), p.Changed...) {
		if o.Obj.Kind != "CustomResourceDefinition" {
			continue
		}
		group, _, _ := unstructured.NestedString(o.U.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.U.Object, "spec", "names", "kind")
		out[group+"/"+kind] = true
	}
	return out
}

// ExistenceDecides reports whether whether o exists decides if Helm sends
// it: a release object of a served kind whose namespace exists. Helm
// creates no release object that exists (it fails on it, or takes it over
// with a patch); a hook is created whether or not an object of its name
// exists (its delete policy decides).
func (p *Plan) ExistenceDecides(o Object) bool {
	return o.Hook == nil && o.Served && (!o.Namespaced || p.NamespaceExists)
}

// RequestNamespaces are the namespaces the plan's requests go to (objects
// created and changed, the workloads' pods), with repeats, "" for the
// cluster-scoped ones.
func (p *Plan) RequestNamespaces() []string {
	var out []string
	for _, o := range append(append([]Object(nil), p.Objects...), p.Changed...) {
		out = append(out, o.RequestNamespace())
	}
	for _, w := range p.Workloads {
		out = append(out, w.Namespace)
	}
	return out
}
