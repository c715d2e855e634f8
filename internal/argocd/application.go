package argocd

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Argo CD's annotations on the objects it syncs
// (https://argo-cd.readthedocs.io/en/stable/user-guide/resource_tracking/,
// https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/).
const (
	// TrackingAnnotation is the tracking annotation
	// "<app>:<group>/<kind>:<namespace>/<name>" (the default since Argo CD
	// 3.0; "<app namespace>_<app>" for an Application outside Argo CD's
	// own namespace).
	TrackingAnnotation = "argocd.argoproj.io/tracking-id"
	// SyncOptionsAnnotation holds an object's own sync options
	// ("Prune=false", "ServerSideApply=true", comma-separated).
	SyncOptionsAnnotation = "argocd.argoproj.io/sync-options"
)

// Application summarises an Argo CD Application: what it syncs, how, and
// what Argo CD last wrote to its status
// (https://github.com/argoproj/argo-cd/blob/v3.2.6/pkg/apis/application/v1alpha1/types.go).
type Application struct {
	Namespace, Name string
	Labels          map[string]string
	// DestServer, DestName and DestNamespace are spec.destination.
	DestServer, DestName, DestNamespace string
	// Source is spec.source, or the first of spec.sources that is a Helm
	// chart or a path (multi-source Applications).
	Source Source
	// Refs are the sources of spec.sources that carry a ref, by ref: the
	// repositories whose files a value file "$<ref>/<path>" of Source
	// names (https://argo-cd.readthedocs.io/en/stable/user-guide/multiple_sources/#helm-value-files-from-external-git-repository).
	Refs map[string]Source
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
	Resources []Resource
	// Operation is status.operationState (nil: none recorded).
	Operation *Operation
	// Conditions are status.conditions (ComparisonError, SyncError,
	// InvalidSpecError, ...).
	Conditions []Condition
}

// Ref names the Application "namespace/name".
func (a Application) Ref() string { return a.Namespace + "/" + a.Name }

// HasSyncOption reports whether spec.syncPolicy.syncOptions holds opt
// ("ServerSideApply=true"), case-insensitively as Argo CD compares them.
func (a Application) HasSyncOption(opt string) bool {
	for _, o := range a.SyncOptions {
		if strings.EqualFold(strings.TrimSpace(o), opt) {
			return true
		}
	}
	return false
}

// Source is one source of an Application.
type Source struct {
	RepoURL, Path, Chart, TargetRevision string
	Helm                                 *Helm
}

// Helm is spec.source.helm: how Argo CD runs `helm template`.
type Helm struct {
	ReleaseName string
	ValueFiles  []string
	// InlineValues is the inline values block (values, YAML text);
	// ValuesObject the same as an object (it wins over InlineValues).
	InlineValues string
	ValuesObject map[string]any
	Parameters   []HelmParameter
	SkipCRDs     bool
	// IgnoreMissingValueFiles lets a value file that does not exist pass.
	IgnoreMissingValueFiles bool
}

// HelmParameter is one spec.source.helm.parameters entry (helm --set,
// or --set-string with ForceString).
type HelmParameter struct {
	Name, Value string
	ForceString bool
}

// Resource is one entry of status.resources.
type Resource struct {
	Group, Version, Kind, Namespace, Name string
	// Status is the resource's sync status (Synced, OutOfSync).
	Status string
	// Health and HealthMessage are its health (empty for kinds without).
	Health, HealthMessage string
	Hook, RequiresPruning bool
}

// Operation is status.operationState: the last sync operation.
type Operation struct {
	// Phase is Running, Succeeded, Failed, Error or Terminating.
	Phase, Message string
	// StartedAt is when it started, FinishedAt when it ended (RFC 3339;
	// FinishedAt is "" while it runs).
	StartedAt, FinishedAt string
	// Revision is the revision it syncs (operation.sync.revision, else
	// syncResult.revision; "" when neither is written yet).
	Revision string
	// Results are syncResult.resources: each object and hook of the sync.
	Results []ResourceResult
}

// ResourceResult is one resource of a sync operation's result.
type ResourceResult struct {
	Group, Kind, Namespace, Name string
	// Status is SyncFailed, Synced, Pruned, PruneSkipped.
	Status, Message string
	// HookType is PreSync, Sync, PostSync, SyncFail ("" for an object);
	// HookPhase is its phase (Succeeded, Failed, Running, Error).
	HookType, HookPhase, SyncPhase string
}

// Condition is one of status.conditions.
type Condition struct {
	Type, Message string
}

// Applications returns the Applications of every namespace (the
// snapshot's list, cluster.Snapshot.ArgoApplications), read once per
// snapshot, sorted by namespace/name. served is false when the cluster
// serves no argoproj.io/v1alpha1 applications.
func Applications(snap *cluster.Snapshot) (apps []Application, served bool, err error) {
	type list struct {
		apps   []Application
		served bool
	}
	l, err := cluster.Memo(snap, "argocd/applications", func() (list, error) {
		us, served, err := snap.ArgoApplications()
		out := make([]Application, 0, len(us))
		for _, u := range us {
			out = append(out, ApplicationFrom(u))
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Ref() < out[j].Ref() })
		return list{out, served}, err
	})
	return l.apps, l.served, err
}

// ApplicationFrom summarises an unstructured Application; fields of
// unexpected types are ignored.
func ApplicationFrom(u *unstructured.Unstructured) Application {
	o := u.Object
	a := Application{Namespace: u.GetNamespace(), Name: u.GetName(), Labels: copyLabels(u.GetLabels())}
	a.DestServer, _, _ = unstructured.NestedString(o, "spec", "destination", "server")
	a.DestName, _, _ = unstructured.NestedString(o, "spec", "destination", "name")
	a.DestNamespace, _, _ = unstructured.NestedString(o, "spec", "destination", "namespace")
	a.Source, a.Refs = sourcesFrom(o)
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
	a.Resources = resourcesFrom(o)
	a.Operation = operationFrom(o)
	conds, _, _ := unstructured.NestedSlice(o, "status", "conditions")
	for _, x := range conds {
		if m, ok := x.(map[string]any); ok {
			a.Conditions = append(a.Conditions, Condition{Type: str(m, "type"), Message: str(m, "message")})
		}
	}
	return a
}

// sourcesFrom reads spec.source, else spec.sources: the chart's source
// (the first that is a chart or a path) and the sources with a ref.
func sourcesFrom(o map[string]any) (Source, map[string]Source) {
	if src, ok, _ := unstructured.NestedMap(o, "spec", "source"); ok {
		return sourceFrom(src), nil
	}
	srcs, _, _ := unstructured.NestedSlice(o, "spec", "sources")
	var (
		chart Source
		refs  map[string]Source
		found bool
	)
	for _, x := range srcs {
		m, ok := x.(map[string]any)
		if !ok {
			continue
		}
		s := sourceFrom(m)
		if ref := str(m, "ref"); ref != "" {
			if refs == nil {
				refs = map[string]Source{}
			}
			refs[ref] = s
		}
		if !found && (s.Chart != "" || s.Path != "") {
			chart, found = s, true
		}
	}
	return chart, refs
}

func sourceFrom(m map[string]any) Source {
	s := Source{RepoURL: str(m, "repoURL"), Path: str(m, "path"), Chart: str(m, "chart"), TargetRevision: str(m, "targetRevision")}
	h, ok, _ := unstructured.NestedMap(m, "helm")
	if !ok {
		return s
	}
	hs := &Helm{ReleaseName: str(h, "releaseName"), InlineValues: str(h, "values")}
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
			hs.Parameters = append(hs.Parameters, HelmParameter{Name: str(p, "name"), Value: str(p, "value"), ForceString: fs})
		}
	}
	s.Helm = hs
	return s
}

// resourcesFrom reads status.resources.
func resourcesFrom(o map[string]any) []Resource {
	var out []Resource
	res, _, _ := unstructured.NestedSlice(o, "status", "resources")
	for _, x := range res {
		m, ok := x.(map[string]any)
		if !ok {
			continue
		}
		r := Resource{Group: str(m, "group"), Version: str(m, "version"), Kind: str(m, "kind"), Namespace: str(m, "namespace"), Name: str(m, "name"), Status: str(m, "status")}
		r.Health, _, _ = unstructured.NestedString(m, "health", "status")
		r.HealthMessage, _, _ = unstructured.NestedString(m, "health", "message")
		r.Hook, _, _ = unstructured.NestedBool(m, "hook")
		r.RequiresPruning, _, _ = unstructured.NestedBool(m, "requiresPruning")
		out = append(out, r)
	}
	return out
}

// operationFrom reads status.operationState; nil when there is none.
func operationFrom(o map[string]any) *Operation {
	op, ok, _ := unstructured.NestedMap(o, "status", "operationState")
	if !ok {
		return nil
	}
	p := &Operation{Phase: str(op, "phase"), Message: str(op, "message"), StartedAt: str(op, "startedAt"), FinishedAt: str(op, "finishedAt")}
	p.Revision, _, _ = unstructured.NestedString(op, "operation", "sync", "revision")
	if p.Revision == "" {
		p.Revision, _, _ = unstructured.NestedString(op, "syncResult", "revision")
	}
	results, _, _ := unstructured.NestedSlice(op, "syncResult", "resources")
	for _, x := range results {
		if m, ok := x.(map[string]any); ok {
			p.Results = append(p.Results, ResourceResult{Group: str(m, "group"), Kind: str(m, "kind"), Namespace: str(m, "namespace"), Name: str(m, "name"),
				Status: str(m, "status"), Message: str(m, "message"), HookType: str(m, "hookType"), HookPhase: str(m, "hookPhase"), SyncPhase: str(m, "syncPhase")})
		}
	}
	return p
}

// str returns m[key] when it is a string.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func copyLabels(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
