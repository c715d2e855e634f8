package cluster

import (
	"context"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Argo CD's marks on the objects it syncs (https://argo-cd.readthedocs.io/en/stable/user-guide/resource_tracking/):
// the tracking annotation "<app>:<group>/<kind>:<namespace>/<name>" (the
// default since Argo CD 3.0; "<app namespace>_<app>" for an Application
// outside Argo CD's own namespace) and, with label tracking, the instance
// label holding the Application's name.
const (
	ArgoTrackingAnnotation = "argocd.argoproj.io/tracking-id"
	ArgoInstanceLabel      = "app.kubernetes.io/instance"
	// ArgoSyncOptionsAnnotation holds an object's own sync options
	// ("Prune=false", "ServerSideApply=true", comma-separated).
	ArgoSyncOptionsAnnotation = "argocd.argoproj.io/sync-options"
)

// ApplicationResource is argoproj.io/v1alpha1 applications: the only
// version Argo CD serves (https://argo-cd.readthedocs.io/en/stable/operator-manual/declarative-setup/).
var ApplicationResource = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}

// ArgoApplication summarises an Argo CD Application: what it syncs, how,
// and what Argo CD last wrote to its status
// (https://github.com/argoproj/argo-cd/blob/v3.2.6/pkg/apis/application/v1alpha1/types.go).
type ArgoApplication struct {
	Namespace, Name string
	Labels          map[string]string
	// DestServer, DestName and DestNamespace are spec.destination.
	DestServer, DestName, DestNamespace string
	// Source is spec.source, or the first of spec.sources that is a Helm
	// chart or a path (multi-source Applications).
	Source ArgoSource
	// Refs are the sources of spec.sources that carry a ref, by ref: the
	// repositories whose files a value file "$<ref>/<path>" of Source
	// names (https://argo-cd.readthedocs.io/en/stable/user-guide/multiple_sources/#helm-value-files-from-external-git-repository).
	Refs map[string]ArgoSource
	// GeneratedBy is the ApplicationSet that controls the Application (its
	// controlling owner reference, "namespace/name"), "" when none: that
	// ApplicationSet's controller rewrites the Application from its
	// template (https://argo-cd.readthedocs.io/en/stable/operator-manual/applicationset/Controlling-Resource-Modification/).
	GeneratedBy string
	// Automated is spec.syncPolicy.automated set (and not disabled);
	// Prune and SelfHeal are its switches.
	Automated, Prune, SelfHeal bool
	// SyncOptions are spec.syncPolicy.syncOptions ("ServerSideApply=true").
	SyncOptions []string
	// SyncStatus is status.sync.status (Synced, OutOfSync, Unknown);
	// Revision is status.sync.revision (a commit or chart version).
	SyncStatus, Revision string
	// Health is status.health.status (Healthy, Progressing, Degraded,
	// Suspended, Missing, Unknown); HealthMessage its message.
	Health, HealthMessage string
	// Resources are status.resources: the Application's inventory.
	Resources []ArgoResource
	// Operation is status.operationState (nil: none recorded).
	Operation *ArgoOperation
	// Conditions are status.conditions (ComparisonError, SyncError,
	// InvalidSpecError, ...).
	Conditions []ArgoCondition
}

// Ref names the Application "namespace/name".
func (a ArgoApplication) Ref() string { return a.Namespace + "/" + a.Name }

// HasSyncOption reports whether spec.syncPolicy.syncOptions holds opt
// ("ServerSideApply=true"), case-insensitively as Argo CD compares them.
func (a ArgoApplication) HasSyncOption(opt string) bool {
	for _, o := range a.SyncOptions {
		if strings.EqualFold(strings.TrimSpace(o), opt) {
			return true
		}
	}
	return false
}

// ArgoSource is one source of an Application.
type ArgoSource struct {
	RepoURL, Path, Chart, TargetRevision string
	Helm                                 *ArgoHelm
}

// ArgoHelm is spec.source.helm: how Argo CD runs `helm template`.
type ArgoHelm struct {
	ReleaseName string
	ValueFiles  []string
	// InlineValues is the inline values block (values, YAML text);
	// ValuesObject the same as an object (it wins over InlineValues).
	InlineValues string
	ValuesObject map[string]any
	Parameters   []ArgoHelmParameter
	SkipCRDs     bool
	// IgnoreMissingValueFiles lets a value file that does not exist pass.
	IgnoreMissingValueFiles bool
}

// ArgoHelmParameter is one spec.source.helm.parameters entry (helm --set,
// or --set-string with ForceString).
type ArgoHelmParameter struct {
	Name, Value string
	ForceString bool
}

// ArgoResource is one entry of status.resources.
type ArgoResource struct {
	Group, Version, Kind, Namespace, Name string
	// Status is the resource's sync status (Synced, OutOfSync).
	Status string
	// Health and HealthMessage are its health (empty for kinds without).
	Health, HealthMessage string
	Hook, RequiresPruning bool
}

// ArgoOperation is status.operationState: the last sync operation.
type ArgoOperation struct {
	// Phase is Running, Succeeded, Failed, Error or Terminating.
	Phase, Message string
	// FinishedAt is when it ended (RFC 3339; "" while running).
	FinishedAt string
	// Results are syncResult.resources: each object and hook of the sync.
	Results []ArgoResult
}

// ArgoResult is one resource of a sync operation's result.
type ArgoResult struct {
	Group, Kind, Namespace, Name string
	// Status is SyncFailed, Synced, Pruned, PruneSkipped.
	Status, Message string
	// HookType is PreSync, Sync, PostSync, SyncFail ("" for an object);
	// HookPhase is its phase (Succeeded, Failed, Running, Error).
	HookType, HookPhase, SyncPhase string
}

// ArgoCondition is one of status.conditions.
type ArgoCondition struct {
	Type, Message string
}

// ArgoApplications lists the Applications of every namespace once per
// snapshot (dynamic client, paginated). served is false when the cluster
// serves no argoproj.io/v1alpha1 applications (no Argo CD CRDs).
func (s *Snapshot) ArgoApplications() (apps []ArgoApplication, served bool, err error) {
	apps, served, err = listServed(s, "argo/applications", "applications.argoproj.io", "", []schema.GroupVersionResource{ApplicationResource}, ArgoApplicationFrom)
	sort.Slice(apps, func(i, j int) bool { return apps[i].Ref() < apps[j].Ref() })
	return apps, served, err
}

// ArgoApplicationFrom summarises an unstructured Application; fields of
// unexpected types are ignored.
func ArgoApplicationFrom(u *unstructured.Unstructured) ArgoApplication {
	o := u.Object
	a := ArgoApplication{Namespace: u.GetNamespace(), Name: u.GetName(), Labels: copyMap(u.GetLabels())}
	a.DestServer, _, _ = unstructured.NestedString(o, "spec", "destination", "server")
	a.DestName, _, _ = unstructured.NestedString(o, "spec", "destination", "name")
	a.DestNamespace, _, _ = unstructured.NestedString(o, "spec", "destination", "namespace")
	if src, ok, _ := unstructured.NestedMap(o, "spec", "source"); ok {
		a.Source = argoSourceFrom(src)
	} else if srcs, ok, _ := unstructured.NestedSlice(o, "spec", "sources"); ok {
		found := false
		for _, x := range srcs {
			m, ok := x.(map[string]any)
			if !ok {
				continue
			}
			s := argoSourceFrom(m)
			if ref := str(m, "ref"); ref != "" {
				if a.Refs == nil {
					a.Refs = map[string]ArgoSource{}
				}
				a.Refs[ref] = s
			}
			if !found && (s.Chart != "" || s.Path != "") {
				a.Source, found = s, true
			}
		}
	}
	for _, ref := range u.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && ref.Kind == "ApplicationSet" && strings.HasPrefix(ref.APIVersion, "argoproj.io/") {
			a.GeneratedBy = u.GetNamespace() + "/" + ref.Name
		}
	}
	if auto, ok, _ := unstructured.NestedMap(o, "spec", "syncPolicy", "automated"); ok {
		enabled, set, _ := unstructured.NestedBool(auto, "enabled")
		a.Automated = !set || enabled
		a.Prune, _, _ = unstructured.NestedBool(auto, "prune")
		a.SelfHeal, _, _ = unstructured.NestedBool(auto, "selfHeal")
	}
	a.SyncOptions, _, _ = unstructured.NestedStringSlice(o, "spec", "syncPolicy", "syncOptions")
	a.SyncStatus, _, _ = unstructured.NestedString(o, "status", "sync", "status")
	a.Revision, _, _ = unstructured.NestedString(o, "status", "sync", "revision")
	a.Health, _, _ = unstructured.NestedString(o, "status", "health", "status")
	a.HealthMessage, _, _ = unstructured.NestedString(o, "status", "health", "message")
	res, _, _ := unstructured.NestedSlice(o, "status", "resources")
	for _, x := range res {
		m, ok := x.(map[string]any)
		if !ok {
			continue
		}
		r := ArgoResource{Group: str(m, "group"), Version: str(m, "version"), Kind: str(m, "kind"), Namespace: str(m, "namespace"), Name: str(m, "name"), Status: str(m, "status")}
		r.Health, _, _ = unstructured.NestedString(m, "health", "status")
		r.HealthMessage, _, _ = unstructured.NestedString(m, "health", "message")
		r.Hook, _, _ = unstructured.NestedBool(m, "hook")
		r.RequiresPruning, _, _ = unstructured.NestedBool(m, "requiresPruning")
		a.Resources = append(a.Resources, r)
	}
	if op, ok, _ := unstructured.NestedMap(o, "status", "operationState"); ok {
		p := &ArgoOperation{Phase: str(op, "phase"), Message: str(op, "message"), FinishedAt: str(op, "finishedAt")}
		results, _, _ := unstructured.NestedSlice(op, "syncResult", "resources")
		for _, x := range results {
			if m, ok := x.(map[string]any); ok {
				p.Results = append(p.Results, ArgoResult{Group: str(m, "group"), Kind: str(m, "kind"), Namespace: str(m, "namespace"), Name: str(m, "name"),
					Status: str(m, "status"), Message: str(m, "message"), HookType: str(m, "hookType"), HookPhase: str(m, "hookPhase"), SyncPhase: str(m, "syncPhase")})
			}
		}
		a.Operation = p
	}
	conds, _, _ := unstructured.NestedSlice(o, "status", "conditions")
	for _, x := range conds {
		if m, ok := x.(map[string]any); ok {
			a.Conditions = append(a.Conditions, ArgoCondition{Type: str(m, "type"), Message: str(m, "message")})
		}
	}
	return a
}

func argoSourceFrom(m map[string]any) ArgoSource {
	s := ArgoSource{RepoURL: str(m, "repoURL"), Path: str(m, "path"), Chart: str(m, "chart"), TargetRevision: str(m, "targetRevision")}
	h, ok, _ := unstructured.NestedMap(m, "helm")
	if !ok {
		return s
	}
	hs := &ArgoHelm{ReleaseName: str(h, "releaseName"), InlineValues: str(h, "values")}
	hs.ValueFiles, _, _ = unstructured.NestedStringSlice(h, "valueFiles")
	if vo, ok, _ := unstructured.NestedMap(h, "valuesObject"); ok {
		hs.ValuesObject = vo
	}
	hs.SkipCRDs, _, _ = unstructured.NestedBool(h, "skipCrds")
	hs.IgnoreMissingValueFiles, _, _ = unstructured.NestedBool(h, "ignoreMissingValueFiles")
	params, _, _ := unstructured.NestedSlice(h, "parameters")
	for _, x := range params {
		if p, ok := x.(map[string]any); ok {
			fs, _, _ := unstructured.NestedBool(p, "forceString")
			hs.Parameters = append(hs.Parameters, ArgoHelmParameter{Name: str(p, "name"), Value: str(p, "value"), ForceString: fs})
		}
	}
	s.Helm = hs
	return s
}

// str returns m[key] when it is a string.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// LiveObjects lists every object of resource gvr in namespace ("" for a
// cluster-scoped kind) in full, with the dynamic client (paginated), once
// per snapshot, keyed by name. A kind the cluster does not serve is an
// empty map. The callers read a handful of kinds in one namespace (the
// runtime's Application's inventory), not the cluster.
func (s *Snapshot) LiveObjects(gvr schema.GroupVersionResource, namespace string) (map[string]*unstructured.Unstructured, error) {
	return Memo(s, "live/"+gvr.String()+"/"+namespace, func() (map[string]*unstructured.Unstructured, error) {
		out := map[string]*unstructured.Unstructured{}
		err := each(s.ctx, gvr.Resource, namespace, metav1.ListOptions{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Dynamic.Resource(gvr).Namespace(namespace).List(ctx, o)
			},
			func(obj runtime.Object) error {
				if u, ok := obj.(*unstructured.Unstructured); ok {
					out[u.GetName()] = u.DeepCopy()
				}
				return nil
			})
		if err != nil && apierrors.IsNotFound(err) {
			return out, nil
		}
		return out, err
	})
}

// LiveObject GETs one object of resource gvr in full with the dynamic
// client, once per snapshot; found is false when it does not exist (a
// cluster-scoped object of an inventory: one GET, where a list would read
// every CRD or ClusterRole of the cluster).
func (s *Snapshot) LiveObject(gvr schema.GroupVersionResource, namespace, name string) (u *unstructured.Unstructured, found bool, err error) {
	return getOne(s, "live/"+gvr.String()+"/"+namespace+"/"+name, gvr.Resource+"/"+name, namespace, name,
		func(ctx context.Context, name string, opts metav1.GetOptions) (*unstructured.Unstructured, error) {
			return s.clients.Dynamic.Resource(gvr).Namespace(namespace).Get(ctx, name, opts)
		},
		func(u *unstructured.Unstructured) *unstructured.Unstructured { return u })
}
