package argocd

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// SyncBase is what Argo CD deployed of a runtime it syncs, and how it
// syncs it: the Application's inventory as the live objects hold it, and
// the Application's spec.source.helm and sync policy.
type SyncBase struct {
	// App names the Application ("namespace/name"); Revision is the
	// revision it last synced (status.sync.revision).
	App, Revision string
	// ReleaseName is spec.source.helm.releaseName, else the Application's
	// name (the repo-server's helmTemplate,
	// https://github.com/argoproj/argo-cd/blob/v3.2.6/reposerver/repository/repository.go);
	// Namespace is the destination namespace.
	ReleaseName, Namespace string
	// ChartVersion is the live chart version (the helm.sh/chart label of
	// the runtime's objects), "" when unknown.
	ChartVersion string
	// Manifest is the inventory's objects, hooks excluded, as YAML
	// documents: each object's last-applied configuration when it has one
	// (client-side apply), else the live object without its status and
	// server-set metadata.
	Manifest string
	// ValueFiles, InlineValues, ValuesObject and Parameters are
	// spec.source.helm's (valueFiles, values, valuesObject, parameters):
	// files of the chart's directory, inline values, and --set
	// (--set-string when ForceString).
	ValueFiles   []string
	InlineValues string
	ValuesObject map[string]any
	Parameters   []SyncParameter
	// IgnoreMissingValueFiles passes a value file that does not exist.
	IgnoreMissingValueFiles bool
	// SourceRepoURL and SourcePath are the chart's source (spec.source, or
	// the chart's of spec.sources): its repository and the chart's
	// directory in it.
	SourceRepoURL, SourcePath string
	// Refs are the Application's sources with a ref, by ref: a value file
	// "$<ref>/<path>" is <path> in that source's repository
	// (https://argo-cd.readthedocs.io/en/stable/user-guide/multiple_sources/#helm-value-files-from-external-git-repository).
	Refs map[string]SyncRef
	// SkipCRDs is spec.source.helm.skipCrds: the chart's crds/ directories
	// are not rendered (Argo CD passes --include-crds otherwise).
	SkipCRDs bool
	// Automated, Prune and SelfHeal are spec.syncPolicy.automated's;
	// ServerSideApply is the sync option ServerSideApply=true
	// (SyncOptionServerSideApply).
	Automated, Prune, SelfHeal, ServerSideApply bool
	// TrackingApp is the application part of Argo CD's tracking
	// annotation on the objects it applies ("<app>" or "<app namespace>_<app>").
	TrackingApp string
	// TrackingMethod and InstanceLabelKey are argocd-cm's
	// application.resourceTrackingMethod and application.instanceLabelKey
	// (Argo CD's defaults when it sets none or cannot be read): see
	// Tracking.
	TrackingMethod, InstanceLabelKey string
	// NoPrune are the inventory's objects annotated
	// argocd.argoproj.io/sync-options: Prune=false, by match key
	// (MatchKey).
	NoPrune map[string]bool
}

// SyncRef is a source of a multi-source Application that others refer to
// by its ref.
type SyncRef struct {
	// RepoURL and TargetRevision are the source's.
	RepoURL, TargetRevision string
	// Dir is a checkout of that repository at that revision, "" when the
	// run has none: its files are then not read (PrepareTemplate).
	Dir string
}

// SyncParameter is one spec.source.helm.parameters entry.
type SyncParameter struct {
	Name, Value string
	ForceString bool
}

// ReadSyncBase returns what Argo CD deployed of the runtime in namespace
// and how it syncs it, for --upgrade, when an Application manages the
// runtime (ManagingApplication, named by --argocd-app or found); nil when
// none does. Each object of the Application's inventory (hooks left out)
// is read live, one list per kind in its namespace, a GET for a
// cluster-scoped one: its last-applied configuration (Argo CD's
// client-side apply writes it) stands for what was applied, else the live
// object without status and server-set metadata. An Application that
// cannot be read is an error naming it: the upgrade cannot be judged from
// the Helm release record, which Argo CD never writes.
func ReadSyncBase(snap *cluster.Snapshot, namespace, named string) (*SyncBase, error) {
	ra, err := ManagingApplication(snap, namespace, named)
	if err != nil || ra == nil {
		return nil, err
	}
	if ra.App == nil {
		return nil, fmt.Errorf("the runtime is managed by Argo CD (%s, %s), which cannot be read: %s", ra.Name(), ra.Evidence, ra.Unreadable)
	}
	_, tracking, err := runtimeMarks(snap, namespace)
	if err != nil {
		tracking = ""
	}
	b := baseOf(ra.App, namespace, ra.LiveChartVersion, tracking)
	// argocd-cm beside the Application (Argo CD's namespace): how Argo CD
	// marks what it applies. Unreadable, Argo CD's defaults stand.
	if cm, err := snap.ConfigMap(ra.App.Namespace, "argocd-cm"); err == nil {
		b.TrackingMethod, b.InstanceLabelKey = cm.Data[TrackingMethodKey], cm.Data[InstanceLabelKeySetting]
	}
	if err := readInventory(snap, ra.App.Resources, b); err != nil {
		return nil, err
	}
	return b, nil
}

// baseOf is the SyncBase of a without its inventory (Manifest, NoPrune
// empty): namespace is the runtime namespace (the destination when a names
// none), live the live chart version, tracking the tracking annotation the
// runtime's codefresh-cm carries ("" when none).
func baseOf(a *Application, namespace, live, tracking string) *SyncBase {
	b := &SyncBase{App: a.Ref(), Revision: a.Revision, ReleaseName: a.Name, Namespace: a.DestNamespace, ChartVersion: live, TrackingApp: trackingApp(a, tracking),
		Automated: a.Automated, Prune: a.Prune, SelfHeal: a.SelfHeal, ServerSideApply: a.HasSyncOption(SyncOptionServerSideApply), NoPrune: map[string]bool{}}
	if b.Namespace == "" {
		b.Namespace = namespace
	}
	b.SourceRepoURL, b.SourcePath = a.Source.RepoURL, a.Source.Path
	for ref, src := range a.Refs {
		if b.Refs == nil {
			b.Refs = map[string]SyncRef{}
		}
		b.Refs[ref] = SyncRef{RepoURL: src.RepoURL, TargetRevision: src.TargetRevision}
	}
	if h := a.Source.Helm; h != nil {
		if h.ReleaseName != "" {
			b.ReleaseName = h.ReleaseName
		}
		b.ValueFiles, b.InlineValues, b.ValuesObject = h.ValueFiles, h.InlineValues, h.ValuesObject
		b.IgnoreMissingValueFiles, b.SkipCRDs = h.IgnoreMissingValueFiles, h.SkipCRDs
		for _, p := range h.Parameters {
			b.Parameters = append(b.Parameters, SyncParameter{Name: p.Name, Value: p.Value, ForceString: p.ForceString})
		}
	}
	return b
}

// readInventory reads the live object of each resource of the inventory
// res (hooks and kinds the cluster does not serve left out, and those not
// live: Missing) into b: its applied document into b.Manifest, and whether
// it opts out of pruning into b.NoPrune.
func readInventory(snap *cluster.Snapshot, res []Resource, b *SyncBase) error {
	api, err := snap.APIResources()
	if err != nil {
		return err
	}
	var docs []string
	res = append([]Resource(nil), res...)
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
		var u *unstructured.Unstructured
		if namespaced {
			ons = r.Namespace
			if ons == "" {
				ons = b.Namespace
			}
			// One list per kind of the namespace.
			objs, err := snap.LiveObjects(gvr, ons)
			if err != nil {
				return err
			}
			u = objs[r.Name]
		} else if u, _, err = snap.LiveObject(gvr, "", r.Name); err != nil {
			// One GET each: a list would read every CRD of the cluster.
			return err
		}
		if u == nil {
			continue // in the inventory, not live (Missing)
		}
		if PruneDisabled(u.GetAnnotations()) {
			b.NoPrune[MatchKey(r.Group, r.Kind, stripNamespace(ons, b.Namespace), r.Name)] = true
		}
		doc, err := appliedDoc(u, b.Namespace)
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", r.Kind, ons, r.Name, err)
		}
		docs = append(docs, doc)
	}
	b.Manifest = strings.Join(docs, "\n---\n")
	return nil
}

// MatchKey is the key objects are matched by between the inventory and
// the target ("group/Kind/namespace/name"; the core group is "", the
// destination namespace ""): the key SyncBase.NoPrune holds.
func MatchKey(group, kind, namespace, name string) string {
	return group + "/" + kind + "/" + namespace + "/" + name
}

// stripNamespace is "" for the destination namespace (the inventory and
// the target are matched without it), else ns.
func stripNamespace(ns, dest string) string {
	if ns == dest {
		return ""
	}
	return ns
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

// trackingApp is the application part of the tracking annotation Argo CD
// writes on a's objects: as the runtime's codefresh-cm carries it
// (tracking, "" when none), else the Application's name when it is in its
// destination namespace (the runtime's Argo CD runs there), else
// "<namespace>_<name>"
// (https://argo-cd.readthedocs.io/en/stable/user-guide/resource_tracking/).
func trackingApp(a *Application, tracking string) string {
	if tracking != "" {
		app, _, _ := strings.Cut(tracking, ":")
		return app
	}
	if a.Namespace == a.DestNamespace {
		return a.Name
	}
	return a.Namespace + "_" + a.Name
}
