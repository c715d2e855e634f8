package checks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"
	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/dryrun"
)

// The admission checks (admission-objects, admission-pods, resource-quota,
// admission-webhooks) share one plan of what the install or upgrade
// creates, read once from the run's rendering, and one set of dry runs,
// sent once per run through one dry-run engine (internal/dryrun) as the
// identity that installs (docs/admission.md).

// CategoryAdmission groups the checks of the cluster's admission chain.
const CategoryAdmission Category = "admission"

// plannedObject is one object the install or upgrade creates.
type plannedObject struct {
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
	// Hook is the helm.sh/hook annotation ("" for a release object).
	Hook string
}

func (o plannedObject) ref() ObjectRef {
	return ObjectRef{Kind: o.Obj.Kind, Namespace: o.Namespace, Name: o.Obj.Name}
}

// label is "Kind name" or "hook Kind name (pre-install)".
func (o plannedObject) label() string {
	if o.Hook != "" {
		return fmt.Sprintf("%s %s (hook %s)", o.Obj.Kind, o.Obj.Name, o.Hook)
	}
	return o.Obj.Kind + " " + o.Obj.Name
}

// plannedWorkload is one workload whose pods the install or upgrade starts.
type plannedWorkload struct {
	Spec RuntimePodSpec
	// Namespace is where its pods go.
	Namespace string
	// Pods is how many of its pods run at once at the peak of the install
	// or upgrade (replicas; for a changed Deployment in an upgrade, its
	// rollout's surge beside the old pods; a hook Job's parallelism).
	Pods int
}

func (w plannedWorkload) isHook() bool { return w.Spec.Hook != "" }

func (w plannedWorkload) label() string {
	if w.isHook() {
		return fmt.Sprintf("hook Job %s (%s)", w.Spec.Name, w.Spec.Hook)
	}
	return w.Spec.Kind + " " + w.Spec.Name
}

func (w plannedWorkload) ref() ObjectRef {
	return ObjectRef{Kind: w.Spec.Kind, Namespace: w.Namespace, Name: w.Spec.Name}
}

// admissionPlan is what the install (or upgrade) will create.
type admissionPlan struct {
	// Chart names the rendering: "gitops-runtime 0.30.0".
	Chart string
	// Namespace is the release namespace; NamespaceExists whether it
	// exists, NamespaceLabels its labels (those it will get when it does
	// not: Helm's --create-namespace and the API server's
	// kubernetes.io/metadata.name).
	Namespace       string
	NamespaceExists bool
	NamespaceLabels map[string]string
	// Objects are created, in Helm's order: pre-install (or pre-upgrade)
	// hooks by weight, the release's objects in Helm's install order
	// (cluster-scoped kinds such as CRDs and ClusterRoles first), then the
	// post-install (post-upgrade) hooks.
	Objects []plannedObject
	// Changed are, in an upgrade, the objects of the release the target
	// changes (Helm patches them; upgrade-apply dry-runs those).
	Changed []plannedObject
	// Workloads are those whose pods the install (upgrade) starts, hook
	// Jobs included.
	Workloads []plannedWorkload
	// Kept counts, in an upgrade, the workloads whose pods keep running
	// (their template does not change).
	Kept int
	// ServiceAccounts are the release's own ServiceAccounts
	// (namespace/name): they do not exist before the install.
	ServiceAccounts map[string]bool
}

// planAdmission reads the plan from the run's rendering once per run. A
// non-nil Result is the checks' skip (no chart, the chart does not render,
// Helm refuses the upgrade).
func planAdmission(ctx context.Context, env *Env) (*admissionPlan, *Result, error) {
	if env.Upgrading() {
		u, err := env.Upgrade(ctx)
		if r, ok := upgradeSkip(err); ok {
			return nil, &r, nil
		}
		if err != nil {
			return nil, nil, err
		}
		p, err := cluster.Memo(env.Cluster, "admission/plan", func() (*admissionPlan, error) { return buildPlan(env, u.Target, u) })
		return p, nil, err
	}
	r, skip, err := renderingForChecks(ctx, env)
	if skip != nil || err != nil {
		return nil, skip, err
	}
	p, err := cluster.Memo(env.Cluster, "admission/plan", func() (*admissionPlan, error) { return buildPlan(env, r, nil) })
	return p, nil, err
}

// hookRuns reports whether a hook of these helm.sh/hook events runs in the
// mode's Helm operation, and before the release's objects.
func hookRuns(events string, upgrade bool) (runs, pre bool) {
	for _, e := range strings.Split(events, ",") {
		switch strings.TrimSpace(e) {
		case "pre-install":
			runs, pre = runs || !upgrade, pre || !upgrade
		case "post-install":
			runs = runs || !upgrade
		case "pre-upgrade":
			runs, pre = runs || upgrade, pre || upgrade
		case "post-upgrade":
			runs = runs || upgrade
		}
	}
	return runs, pre
}

func buildPlan(env *Env, r *chart.Rendering, u *chart.Upgrade) (*admissionPlan, error) {
	ns := env.Inputs.Namespace
	p := &admissionPlan{Chart: r.ChartName + " " + r.ChartVersion, Namespace: ns, ServiceAccounts: map[string]bool{}}
	live, err := env.Cluster.Namespace(ns)
	switch {
	case err == nil:
		p.NamespaceExists = live.Exists
		p.NamespaceLabels = live.Labels
	case cluster.IsForbidden(err):
		// No right to read it: assume it exists; the dry runs say
		// otherwise if it does not.
		p.NamespaceExists = true
	default:
		return nil, err
	}
	if !p.NamespaceExists {
		// helm install --create-namespace (Helm 3 and 4, pkg/action
		// install.go) labels it name=<ns>; the API server adds
		// kubernetes.io/metadata.name.
		p.NamespaceLabels = map[string]string{"name": ns, "kubernetes.io/metadata.name": ns}
	}
	api, err := env.Cluster.APIResources()
	if err != nil {
		return nil, err
	}
	var inCurrent func(chart.Object) bool
	if u != nil {
		if inCurrent, err = u.InCurrent(); err != nil {
			return nil, err
		}
	}
	mk := func(o chart.Object, hook string) (plannedObject, error) {
		po := plannedObject{Obj: o, Hook: hook}
		po.U = &unstructured.Unstructured{}
		if err := po.U.UnmarshalJSON(o.JSON); err != nil {
			return po, fmt.Errorf("rendered %s %s: %w", o.Kind, o.Name, err)
		}
		po.Resource, po.Namespaced, po.Served = api.Resource(o.APIVersion, o.Kind)
		if po.Namespaced || !po.Served {
			po.Namespace = o.Namespace
			if po.Namespace == "" {
				po.Namespace = ns
			}
		}
		if po.Namespaced {
			po.U.SetNamespace(po.Namespace)
		}
		if hook == "" {
			setReleaseMetadata(po.U, env.Inputs.ReleaseName, ns)
		}
		return po, nil
	}
	var pre, post []plannedObject
	for _, o := range r.Hooks {
		events := hookEvents(o)
		runs, before := hookRuns(events, u != nil)
		if !runs {
			continue
		}
		po, err := mk(o, events)
		if err != nil {
			return nil, err
		}
		if before {
			pre = append(pre, po)
		} else {
			post = append(post, po)
		}
	}
	sortHooks(pre)
	sortHooks(post)
	var objs []plannedObject
	for _, o := range r.Objects {
		po, err := mk(o, "")
		if err != nil {
			return nil, err
		}
		if po.Obj.Kind == "ServiceAccount" && (inCurrent == nil || !inCurrent(o)) {
			p.ServiceAccounts[po.Namespace+"/"+po.Obj.Name] = true
		}
		if inCurrent != nil && inCurrent(o) {
			p.Changed = append(p.Changed, po)
			continue
		}
		objs = append(objs, po)
	}
	for _, h := range append(append([]plannedObject(nil), pre...), post...) {
		if h.Obj.Kind == "ServiceAccount" {
			p.ServiceAccounts[h.Namespace+"/"+h.Obj.Name] = true
		}
	}
	sort.SliceStable(objs, func(i, j int) bool { return installRank(objs[i].Obj.Kind) < installRank(objs[j].Obj.Kind) })
	p.Objects = append(append(pre, objs...), post...)

	// The pods: every workload of the target and the hook Jobs that run.
	target, err := renderedWorkloads(env, r)
	if err != nil {
		return nil, err
	}
	podNS := func(s RuntimePodSpec) string {
		if s.Namespace != "" {
			return s.Namespace
		}
		return ns
	}
	add := func(s RuntimePodSpec, pods int) {
		if pods > 0 {
			p.Workloads = append(p.Workloads, plannedWorkload{Spec: s, Namespace: podNS(s), Pods: pods})
		}
	}
	hookPods := func(s RuntimePodSpec) bool {
		if s.Hook == "" || s.Kind != "Job" {
			return false
		}
		runs, _ := hookRuns(s.Hook, u != nil)
		return runs
	}
	if u == nil {
		for _, s := range target {
			if s.Hook != "" && !hookPods(s) {
				continue
			}
			add(s, s.Replicas)
		}
		sortWorkloads(p.Workloads)
		return p, nil
	}
	current, err := currentWorkloads(u)
	if err != nil {
		return nil, err
	}
	up := planUpgradePods(target, current, ns)
	p.Kept = up.kept
	surge := map[string]int{}
	for _, s := range up.surge {
		surge[workloadKey(s.Kind, s.Namespace, s.Name, ns)] = s.Replicas
	}
	for _, s := range up.preHooks {
		add(s, s.Replicas)
	}
	for _, s := range up.after {
		n := s.Replicas
		if m, ok := surge[workloadKey(s.Kind, s.Namespace, s.Name, ns)]; ok && s.Hook == "" && up.freed[workloadKey(s.Kind, s.Namespace, s.Name, ns)] {
			// A changed Deployment rolls: at most its surge runs beside the
			// old pods (the old ones are already counted).
			n = m
		}
		add(s, n)
	}
	sortWorkloads(p.Workloads)
	return p, nil
}

// hookAnnotations are a rendered object's annotations.
func hookAnnotations(o chart.Object) map[string]string {
	var head struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(o.JSON, &head)
	return head.Metadata.Annotations
}

// hookEvents reads the helm.sh/hook annotation of a rendered object.
func hookEvents(o chart.Object) string { return hookAnnotations(o)["helm.sh/hook"] }

func hookWeight(o chart.Object) int {
	w, _ := strconv.Atoi(hookAnnotations(o)["helm.sh/hook-weight"])
	return w
}

// sortHooks orders hooks as Helm runs them: by weight, then name
// (pkg/action hooks.go, hookByWeight).
func sortHooks(hs []plannedObject) {
	sort.SliceStable(hs, func(i, j int) bool {
		wi, wj := hookWeight(hs[i].Obj), hookWeight(hs[j].Obj)
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

// sortWorkloads puts hook Jobs first, then the workloads by kind and name.
func sortWorkloads(ws []plannedWorkload) {
	sort.SliceStable(ws, func(i, j int) bool {
		if ws[i].isHook() != ws[j].isHook() {
			return ws[i].isHook()
		}
		return false
	})
}

// setReleaseMetadata labels and annotates a release object as Helm does
// before it creates it (pkg/action validate.go setMetadataVisitor).
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

// dryRunEngine is the run's engine, built once: it sends as the identity
// that installs (Env.InstallerConfig: the installer of --installer,
// impersonated, else the run's own clients: the kubeconfig's user, or
// --as/--as-group). An error is a *cluster.ListError naming a missing
// impersonation permission (the runner skips), or errNoREST.
func dryRunEngine(ctx context.Context, env *Env) (*dryrun.Engine, error) {
	return cluster.Memo(env.Cluster, "admission/engine", func() (*dryrun.Engine, error) {
		if env.Cluster.Clients().Config == nil {
			return nil, errNoREST
		}
		cfg, err := env.InstallerConfig(ctx)
		if err != nil {
			return nil, err
		}
		return dryrun.New(cfg)
	})
}

// errNoREST is the admission checks' skip when the run has no REST
// configuration (a test over fake clients).
var errNoREST = errors.New("no REST configuration to send dry runs with")

// verdict is what one dry run says of one object or pod.
type verdict struct {
	// Refused is the API server's refusal, parsed; nil when it accepted.
	Refused *Refusal
	// NotJudged says why no dry run could judge it ("" when one did).
	NotJudged string
	// Warnings are the API server's warnings on the request.
	Warnings []string
	// Object is the API server's answer (the mutated, defaulted object).
	Object *unstructured.Unstructured
}

// objectRuns are the verdicts of the plan's objects, in plan order.
type objectRuns struct {
	plan     *admissionPlan
	verdicts []verdict
	// namespace is the verdict of the release namespace's own dry run
	// (helm install --create-namespace) when it does not exist.
	namespace *verdict
}

// dryRunObjects dry-runs the plan's objects once per run.
func dryRunObjects(ctx context.Context, env *Env, p *admissionPlan) (*objectRuns, error) {
	return cluster.Memo(env.Cluster, "admission/objects", func() (*objectRuns, error) {
		e, err := dryRunEngine(ctx, env)
		if err != nil {
			return nil, err
		}
		runs := &objectRuns{plan: p, verdicts: make([]verdict, len(p.Objects))}
		var reqs []dryrun.Request
		var idx []int
		crds := plannedCRDs(p)
		exists := existingObjects(ctx, env, p)
		for i, o := range p.Objects {
			switch {
			case !o.Served && crds[o.Obj.Group()+"/"+o.Obj.Kind]:
				runs.verdicts[i].NotJudged = "its kind is defined by a CRD the install creates"
				continue
			case !o.Served:
				runs.verdicts[i].NotJudged = "the cluster does not serve " + o.Obj.APIVersion + " " + o.Obj.Kind
				continue
			case o.Namespaced && !p.NamespaceExists:
				runs.verdicts[i].NotJudged = "namespace " + o.Namespace + " does not exist yet"
				continue
			case exists(o):
				runs.verdicts[i].NotJudged = "it exists already, and Helm does not create an object that exists (helm-ownership judges whether Helm may take it over)"
				continue
			}
			reqs = append(reqs, dryrun.Request{Resource: o.Resource, Namespace: namespaceIf(o), Object: o.U})
			idx = append(idx, i)
		}
		if !p.NamespaceExists {
			nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
				"metadata": map[string]any{"name": p.Namespace, "labels": map[string]any{"name": p.Namespace}}}}
			reqs = append(reqs, dryrun.Request{Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Object: nsObj})
			idx = append(idx, -1)
		}
		answers := e.Create(env.Cluster.Context(), reqs)
		if err := e.Unanswered(); err != nil {
			return nil, err
		}
		for k, a := range answers {
			v := verdictOf(a)
			if idx[k] < 0 {
				runs.namespace = &v
				continue
			}
			runs.verdicts[idx[k]] = v
		}
		return runs, nil
	})
}

// existingObjects returns whether a planned object that is not a hook
// exists in the cluster, from the run's shared lists of its kinds (the
// lists helm-ownership reads, metadata only; CRDs from the run's one list
// of them), read at once. Helm creates no object that exists: it fails on
// it, or takes it over with a patch (helm-ownership), so a dry-run create
// of it judges a request Helm never sends (for a CRD of megabytes, the API
// server's costliest). A hook is created whether or not an object of its
// name exists (its delete policy decides), and an object whose kind cannot
// be listed counts as not existing: both are sent.
func existingObjects(ctx context.Context, env *Env, p *admissionPlan) func(plannedObject) bool {
	candidate := func(o plannedObject) bool {
		return o.Hook == "" && o.Served && (!o.Namespaced || p.NamespaceExists)
	}
	seen := map[kindList]bool{}
	var kinds []kindList
	for _, o := range p.Objects {
		if k := (kindList{o.Resource, namespaceIf(o)}); candidate(o) && !seen[k] {
			seen[k] = true
			kinds = append(kinds, k)
		}
	}
	listKinds(ctx, env, kinds)
	return func(o plannedObject) bool {
		if !candidate(o) {
			return false
		}
		objs, err := env.Cluster.Objects(o.Resource, namespaceIf(o))
		_, ok := objs[namespaceIf(o)+"/"+o.Obj.Name]
		return err == nil && ok
	}
}

// kindList is the objects of one kind in one namespace ("" for
// cluster-wide).
type kindList struct {
	gvr schema.GroupVersionResource
	ns  string
}

// listKinds reads the run's shared list (Snapshot.Objects: metadata, by
// "namespace/name", memoized) of each of kinds at once, at most 8 at a
// time, instead of one after another (each list is a round trip); the
// callers then read them, and their errors, from the snapshot.
func listKinds(ctx context.Context, env *Env, kinds []kindList) {
	var g errgroup.Group
	g.SetLimit(8)
	for _, k := range kinds {
		g.Go(func() error {
			if ctx.Err() == nil {
				_, _ = env.Cluster.Objects(k.gvr, k.ns)
			}
			return nil
		})
	}
	_ = g.Wait()
}

func namespaceIf(o plannedObject) string {
	if o.Namespaced {
		return o.Namespace
	}
	return ""
}

// plannedCRDs are the group/kinds the plan's CRDs define.
func plannedCRDs(p *admissionPlan) map[string]bool {
	out := map[string]bool{}
	for _, o := range append(append([]plannedObject(nil), p.Objects...), p.Changed...) {
		if o.Obj.Kind != "CustomResourceDefinition" {
			continue
		}
		group, _, _ := unstructured.NestedString(o.U.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.U.Object, "spec", "names", "kind")
		out[group+"/"+kind] = true
	}
	return out
}

// verdictOf reads one answer: an AlreadyExists means the admission chain
// accepted the object (the API server runs it before it looks for the
// name; helm-ownership judges the name), a NotFound of the kind means the
// kind is not served.
func verdictOf(a dryrun.Answer) verdict {
	v := verdict{Warnings: a.Warnings, Object: a.Object}
	switch {
	case a.Err == nil, apierrors.IsAlreadyExists(a.Err):
	case isNoSuchKind(a.Err):
		v.NotJudged = "the API server does not serve its kind"
	default:
		var se apierrors.APIStatus
		if !errors.As(a.Err, &se) {
			v.NotJudged = "the dry run could not be sent: " + firstLine(a.Err.Error())
			break
		}
		r := ParseRefusal(se.Status().Message)
		v.Refused = &r
	}
	return v
}

func isNoSuchKind(err error) bool {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		return false
	}
	st := se.Status()
	return st.Code == 404 && (st.Details == nil || st.Details.Name == "") && strings.Contains(st.Message, "could not find the requested resource")
}

// podRuns are the verdicts of the plan's workloads' pods, in plan order.
type podRuns struct {
	plan     *admissionPlan
	verdicts []verdict
	// pods are the pods sent (nil when none was).
	pods []*corev1.Pod
	// defaultSA names the workloads whose ServiceAccount the release
	// creates: their pod was sent with the namespace's default one.
	defaultSA map[int]string
}

// dryRunPods dry-runs the pod each workload's controller will create, once
// per run.
func dryRunPods(ctx context.Context, env *Env, p *admissionPlan) (*podRuns, error) {
	return cluster.Memo(env.Cluster, "admission/pods", func() (*podRuns, error) {
		e, err := dryRunEngine(ctx, env)
		if err != nil {
			return nil, err
		}
		runs := &podRuns{plan: p, verdicts: make([]verdict, len(p.Workloads)), pods: make([]*corev1.Pod, len(p.Workloads)), defaultSA: map[int]string{}}
		var reqs []dryrun.Request
		var idx []int
		for i, w := range p.Workloads {
			pod, sa := podOf(w, p)
			runs.pods[i] = pod
			if sa != "" {
				runs.defaultSA[i] = sa
			}
			if !p.NamespaceExists {
				runs.verdicts[i].NotJudged = "namespace " + w.Namespace + " does not exist yet"
				continue
			}
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
			if err != nil {
				return nil, err
			}
			reqs = append(reqs, dryrun.Request{Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: w.Namespace,
				Object: &unstructured.Unstructured{Object: u}})
			idx = append(idx, i)
		}
		answers := e.Create(env.Cluster.Context(), reqs)
		if err := e.Unanswered(); err != nil {
			return nil, err
		}
		for k, a := range answers {
			runs.verdicts[idx[k]] = verdictOf(a)
		}
		return runs, nil
	})
}

// podOf is the pod a workload's controller creates from its template: the
// template's labels, annotations and spec, a generated name, the Job
// controller's job-name labels; and, when the release itself creates its
// ServiceAccount (which does not exist before the install), the
// namespace's default ServiceAccount in its place (returned: its name).
func podOf(w plannedWorkload, p *admissionPlan) (*corev1.Pod, string) {
	t := w.Spec.Template
	pod := &corev1.Pod{}
	pod.APIVersion, pod.Kind = "v1", "Pod"
	pod.GenerateName = w.Spec.Name + "-"
	pod.Namespace = w.Namespace
	pod.Labels = map[string]string{}
	for k, v := range t.Labels {
		pod.Labels[k] = v
	}
	if w.Spec.Kind == "Job" {
		pod.Labels["batch.kubernetes.io/job-name"] = w.Spec.Name
		pod.Labels["job-name"] = w.Spec.Name
	}
	if len(t.Annotations) > 0 {
		pod.Annotations = map[string]string{}
		for k, v := range t.Annotations {
			pod.Annotations[k] = v
		}
	}
	pod.Spec = *t.Spec.DeepCopy()
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = pod.Spec.DeprecatedServiceAccount
	}
	replaced := ""
	if sa != "" && sa != "default" && p.ServiceAccounts[w.Namespace+"/"+sa] {
		pod.Spec.ServiceAccountName, pod.Spec.DeprecatedServiceAccount = "default", ""
		replaced = sa
	}
	return pod, replaced
}

// admissionSetup is what every admission check starts with: the plan, or
// the skip.
func admissionSetup(ctx context.Context, env *Env) (*admissionPlan, *Result, error) {
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

// helmFails is the impact of a refusal Helm meets: install-fails before an
// install, upgrade-fails before an upgrade.
func helmFails(env *Env) Impact {
	if env.Upgrading() {
		return ImpactUpgradeFails
	}
	return ImpactInstallFails
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

// rbacSkip is the result when the only refusals are the identity's missing
// rights: dry runs are authorized like the writes they stand for, so the
// check cannot judge, and names what is missing.
func rbacSkip(env *Env, who dryrun.Identity, missing []string) Result {
	sort.Strings(missing)
	missing = dedupe(missing)
	return Result{Status: StatusSkip, Cause: SkipForbidden,
		Message: fmt.Sprintf("no permission to %s as %s: dry runs are authorized like the writes they stand for, so admission could not be judged", strings.Join(first(missing, 4), ", "), who),
		Hint:    "run as the identity that installs, with the rights helm install needs (cluster-admin); see cluster-admin"}
}

// identityAndLevel are what the admission checks' messages and hints name:
// who the dry runs were judged as, and the strictest Pod Security Standard
// every planned pod meets.
func identityAndLevel(ctx context.Context, env *Env, pods []*corev1.Pod) (dryrun.Identity, string, error) {
	e, err := dryRunEngine(ctx, env)
	if err != nil {
		return dryrun.Identity{}, "", err
	}
	level, err := strictestLevel(pods)
	return e.Identity(ctx), level, err
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
