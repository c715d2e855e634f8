package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// How a runtime handed to Argo CD is recognised: the installation guide's
// last step, "Configure Hybrid GitOps Runtime as Argo Application", makes
// the runtime's own Argo CD sync it from the Shared Configuration
// Repository (resources/<runtime-name>/chart;
// https://codefresh.io/docs/docs/installation/gitops/manage-runtimes/),
// through an Application labelled codefresh.io/entity: runtime.
const (
	runtimeEntityLabel = "codefresh.io/entity"
	runtimeEntity      = "runtime"
	helmChartLabel     = "helm.sh/chart"
)

// RuntimeApp is the Argo CD Application that manages the runtime, and how
// the plugin knows.
type RuntimeApp struct {
	// App is the Application; nil when the evidence names one that could
	// not be read (not found, or the Application CRD not served or not
	// readable).
	App *cluster.ArgoApplication
	// Named is the Application the evidence names ("namespace/name", or
	// "name" when a tracking annotation leaves its namespace out).
	Named string
	// Evidence says how the plugin knows, in words a message can quote
	// ("named by --argocd-app", "ConfigMap codefresh/codefresh-cm carries
	// its tracking annotation").
	Evidence string
	// Unreadable says why App is nil ("" when it is set).
	Unreadable string
	// LiveChartVersion is the runtime's chart version as its live objects
	// carry it (the helm.sh/chart label of codefresh-cm); "" when unknown.
	LiveChartVersion string
}

// Name names the Application for a message: "Application ns/name".
func (r *RuntimeApp) Name() string {
	return "Application " + r.Named
}

// ManagingApplication finds the Argo CD Application that manages the
// runtime of in (its namespace; its release's objects): the one named
// (--argocd-app, "namespace/name"); else one whose inventory
// (status.resources) holds the runtime's codefresh-cm ConfigMap or
// cap-app-proxy Deployment; else the one the tracking annotation of
// codefresh-cm names (argocd.argoproj.io/tracking-id); else one labelled
// codefresh.io/entity: runtime whose destination is the runtime namespace.
// Applications are read with the dynamic client (argoproj.io/v1alpha1),
// once per snapshot. It returns nil when nothing says Argo CD manages the
// runtime. A named Application that does not exist is a RuntimeApp with
// App nil and Unreadable set.
func ManagingApplication(snap *cluster.Snapshot, in Inputs, named string) (*RuntimeApp, error) {
	return cluster.Memo(snap, "argo/runtime-app/"+in.Namespace+"/"+named, func() (*RuntimeApp, error) {
		return findManagingApplication(snap, in, named)
	})
}

func findManagingApplication(snap *cluster.Snapshot, in Inputs, named string) (*RuntimeApp, error) {
	ns := in.Namespace
	live, tracking, err := runtimeMarks(snap, ns)
	if err != nil {
		return nil, err
	}
	apps, served, err := snap.ArgoApplications()
	unreadable := ""
	switch {
	case err != nil && cluster.IsForbidden(err):
		unreadable = "the credentials may not list applications.argoproj.io"
	case err != nil:
		return nil, err
	case !served:
		unreadable = "the cluster serves no applications.argoproj.io"
	}
	find := func(ref string) *cluster.ArgoApplication {
		for i := range apps {
			if apps[i].Ref() == ref || !strings.Contains(ref, "/") && apps[i].Name == ref {
				return &apps[i]
			}
		}
		return nil
	}
	found := func(a *cluster.ArgoApplication, ref, evidence string) *RuntimeApp {
		r := &RuntimeApp{App: a, Named: ref, Evidence: evidence, LiveChartVersion: live}
		switch {
		case a != nil:
			r.Named = a.Ref()
		case unreadable != "":
			r.Unreadable = unreadable
		default:
			r.Unreadable = "no such Application in the cluster"
		}
		return r
	}
	if named != "" {
		return found(find(named), named, "named by --argocd-app"), nil
	}
	for i := range apps {
		a := &apps[i]
		for _, r := range a.Resources {
			if r.Namespace == ns && (r.Kind == "ConfigMap" && r.Group == "" && r.Name == RuntimeConfigMapName ||
				r.Kind == "Deployment" && r.Group == "apps" && r.Name == RuntimeAppProxyName) {
				return found(a, "", fmt.Sprintf("its inventory (status.resources) holds %s %s/%s", r.Kind, ns, r.Name)), nil
			}
		}
	}
	if tracking != "" {
		ref := trackedApp(tracking)
		return found(find(ref), ref, fmt.Sprintf("ConfigMap %s/%s carries its tracking annotation (%s: %s)", ns, RuntimeConfigMapName, cluster.ArgoTrackingAnnotation, tracking)), nil
	}
	for i := range apps {
		a := &apps[i]
		if a.Labels[runtimeEntityLabel] == runtimeEntity && a.DestNamespace == ns {
			return found(a, "", fmt.Sprintf("it is labelled %s: %s and syncs into namespace %s", runtimeEntityLabel, runtimeEntity, ns)), nil
		}
	}
	return nil, nil
}

// runtimeMarks reads codefresh-cm in the runtime namespace (metadata only,
// shared with existing-runtime): the chart version its helm.sh/chart label
// carries and its Argo CD tracking annotation.
func runtimeMarks(snap *cluster.Snapshot, ns string) (chartVersion, tracking string, err error) {
	cms, err := snap.ConfigMapsNamed(RuntimeConfigMapName)
	if err != nil && !cluster.IsForbidden(err) {
		return "", "", err
	}
	for _, cm := range cms {
		if cm.Namespace != ns {
			continue
		}
		if v, ok := strings.CutPrefix(cm.Labels[helmChartLabel], RuntimeChartName+"-"); ok {
			chartVersion = v
		}
		tracking = cm.Annotations[cluster.ArgoTrackingAnnotation]
	}
	return chartVersion, tracking, nil
}

// trackedApp returns the Application a tracking annotation names:
// "<app>:<group>/<kind>:<namespace>/<name>", where <app> is
// "<namespace>_<name>" for an Application outside Argo CD's namespace
// (https://argo-cd.readthedocs.io/en/stable/user-guide/resource_tracking/).
func trackedApp(tracking string) string {
	app, _, _ := strings.Cut(tracking, ":")
	if ns, name, ok := strings.Cut(app, "_"); ok {
		return ns + "/" + name
	}
	return app
}

// ArgoSyncBase returns what Argo CD deployed of the runtime and how it
// syncs it (chart.SyncBase), for --upgrade, when an Application manages
// the runtime (ManagingApplication); nil when none does. Each object of
// the Application's inventory (hooks left out) is read live, one list per
// kind in its namespace, a GET for a cluster-scoped one: its
// last-applied configuration (Argo CD's
// client-side apply writes it) stands for what was applied, else the live
// object without status and server-set metadata. An Application that
// cannot be read is an error naming it: the upgrade cannot be judged from
// the Helm release record, which Argo CD never writes.
func ArgoSyncBase(snap *cluster.Snapshot, in Inputs, named string) (*chart.SyncBase, error) {
	ra, err := ManagingApplication(snap, in, named)
	if err != nil || ra == nil {
		return nil, err
	}
	if ra.App == nil {
		return nil, fmt.Errorf("the runtime is managed by Argo CD (%s, %s), which cannot be read: %s", ra.Name(), ra.Evidence, ra.Unreadable)
	}
	a := ra.App
	b := &chart.SyncBase{App: a.Ref(), Revision: a.Revision, ReleaseName: a.Name, Namespace: a.DestNamespace, ChartVersion: ra.LiveChartVersion, TrackingApp: trackingApp(snap, in, a),
		Automated: a.Automated, Prune: a.Prune, SelfHeal: a.SelfHeal, ServerSideApply: a.HasSyncOption("ServerSideApply=true"), NoPrune: map[string]bool{}}
	if b.Namespace == "" {
		b.Namespace = in.Namespace
	}
	if h := a.Source.Helm; h != nil {
		if h.ReleaseName != "" {
			b.ReleaseName = h.ReleaseName
		}
		b.ValueFiles, b.InlineValues, b.ValuesObject = h.ValueFiles, h.InlineValues, h.ValuesObject
		b.IgnoreMissingValueFiles, b.SkipCRDs = h.IgnoreMissingValueFiles, h.SkipCRDs
		for _, p := range h.Parameters {
			b.Parameters = append(b.Parameters, chart.SyncParameter{Name: p.Name, Value: p.Value, ForceString: p.ForceString})
		}
	}
	api, err := snap.APIResources()
	if err != nil {
		return nil, err
	}
	var docs []string
	res := append([]cluster.ArgoResource(nil), a.Resources...)
	sort.SliceStable(res, func(i, j int) bool { return res[i].Kind < res[j].Kind })
	for _, r := range res {
		if r.Hook {
			continue
		}
		apiVersion := r.Version
		if r.Group != "" {
			apiVersion = r.Group + "/" + r.Version
		}
		gvr, namespaced, ok := api.Resource(apiVersion, r.Kind)
		if !ok {
			continue // not served: nothing live to start from
		}
		ons := ""
		if namespaced {
			ons = orNamespace(r.Namespace, b.Namespace)
		}
		var u *unstructured.Unstructured
		if namespaced {
			// One list per kind of the namespace.
			objs, err := snap.LiveObjects(gvr, ons)
			if err != nil {
				return nil, err
			}
			u = objs[r.Name]
		} else {
			// One GET each: a list would read every CRD of the cluster.
			if u, _, err = snap.LiveObject(gvr, "", r.Name); err != nil {
				return nil, err
			}
		}
		if u == nil {
			continue // in the inventory, not live (Missing)
		}
		key := chart.MatchKey(r.Group, r.Kind, stripNamespace(ons, b.Namespace), r.Name)
		if hasSyncOption(u.GetAnnotations()[cluster.ArgoSyncOptionsAnnotation], "Prune=false") {
			b.NoPrune[key] = true
		}
		doc, err := appliedDoc(u, b.Namespace)
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", r.Kind, ons, r.Name, err)
		}
		docs = append(docs, doc)
	}
	b.Manifest = strings.Join(docs, "\n---\n")
	return b, nil
}

// stripNamespace is "" for the destination namespace (the inventory and
// the target are matched without it), else ns.
func stripNamespace(ns, dest string) string {
	if ns == dest {
		return ""
	}
	return ns
}

// hasSyncOption reports whether a comma-separated sync-options annotation
// holds opt.
func hasSyncOption(annotation, opt string) bool {
	for _, o := range strings.Split(annotation, ",") {
		if strings.EqualFold(strings.TrimSpace(o), opt) {
			return true
		}
	}
	return false
}

// appliedDoc is the YAML of what was applied of u: kubectl's last-applied
// configuration when u has one, else u without status and the metadata
// the server sets; the destination namespace is left out (as the chart's
// templates leave it out).
func appliedDoc(u *unstructured.Unstructured, dest string) (string, error) {
	var obj map[string]any
	if la := u.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; la != "" {
		if err := yaml.Unmarshal([]byte(la), &obj); err != nil {
			return "", fmt.Errorf("last-applied configuration: %w", err)
		}
	} else {
		obj = u.DeepCopy().Object
		delete(obj, "status")
		for _, f := range []string{"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink"} {
			unstructured.RemoveNestedField(obj, "metadata", f)
		}
	}
	if ns, _, _ := unstructured.NestedString(obj, "metadata", "namespace"); ns == dest {
		unstructured.RemoveNestedField(obj, "metadata", "namespace")
	}
	b, err := yaml.Marshal(obj)
	return string(b), err
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
// prediction's chart.Sync); nil for helm upgrade, another mode, or a
// prediction that failed.
func syncOf(ctx context.Context, env *Env) *chart.Sync {
	if !env.Upgrading() || env.Chart == nil {
		return nil
	}
	up, err := env.Upgrade(ctx)
	if err != nil {
		return nil
	}
	return up.Sync
}

// trackingApp is the application part of the tracking annotation Argo CD
// writes on a's objects: as the runtime's codefresh-cm carries it, else
// the Application's name when it is in its destination namespace (the
// runtime's Argo CD runs there), else "<namespace>_<name>"
// (https://argo-cd.readthedocs.io/en/stable/user-guide/resource_tracking/).
func trackingApp(snap *cluster.Snapshot, in Inputs, a *cluster.ArgoApplication) string {
	if _, tracking, err := runtimeMarks(snap, in.Namespace); err == nil && tracking != "" {
		app, _, _ := strings.Cut(tracking, ":")
		return app
	}
	if a.Namespace == a.DestNamespace {
		return a.Name
	}
	return a.Namespace + "_" + a.Name
}
