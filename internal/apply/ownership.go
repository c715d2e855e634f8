package apply

import (
	"encoding/json"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Helm's ownership metadata: an object Helm did not create belongs to a
// release when it carries this label and these two annotations naming the
// release (checkOwnership, helm.sh/helm/v3 pkg/action/validate.go:
// https://github.com/helm/helm/blob/v3.22.0/pkg/action/validate.go).
const (
	ManagedByLabel             = "app.kubernetes.io/managed-by"
	ManagedByHelm              = "Helm"
	ReleaseNameAnnotation      = "meta.helm.sh/release-name"
	ReleaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
)

// OwnedBy reports whether Helm's ownership annotations name release in
// namespace: the object belongs to that release (checkOwnership reads the
// same two annotations).
func OwnedBy(annotations map[string]string, release, namespace string) bool {
	return annotations[ReleaseNameAnnotation] == release && annotations[ReleaseNamespaceAnnotation] == namespace
}

// OwnedWorkloads returns the workloads of lists that release in namespace
// owns (OwnedBy), keyed Kind/namespace/name.
func OwnedWorkloads(release, namespace string, lists ...[]cluster.Workload) map[string]bool {
	out := map[string]bool{}
	for _, ws := range lists {
		for i := range ws {
			if OwnedBy(ws[i].Annotations, release, namespace) {
				out[ws[i].Kind+"/"+ws[i].Namespace+"/"+ws[i].Name] = true
			}
		}
	}
	return out
}

// Owner is the release Helm's ownership annotations of an object name.
type Owner struct {
	// Release and Namespace are the annotations' values; Release "" means
	// the object names no owner.
	Release, Namespace string
	// Self is true when the owner is the release being installed.
	Self bool
	// Record is the owner's release record when that release still exists
	// (nil for Self, and for an owner that no longer exists).
	Record *cluster.HelmRecord
}

// OwnerOf reads the owner of an object from its annotations, against the
// cluster's release records (keyed "namespace/name",
// cluster.Snapshot.HelmReleaseRecords) and the release being installed,
// release in namespace.
func OwnerOf(records map[string]cluster.HelmRecord, annotations map[string]string, release, namespace string) Owner {
	o := Owner{Release: annotations[ReleaseNameAnnotation], Namespace: annotations[ReleaseNamespaceAnnotation]}
	switch {
	case o.Release == "":
	case o.Release == release && o.Namespace == namespace:
		o.Self = true
	default:
		if rec, ok := records[o.Namespace+"/"+o.Release]; ok {
			o.Record = &rec
		}
	}
	return o
}

// MetadataPatch is the JSON merge patch (RFC 7386) that sets labels and
// annotations on an object's metadata, with resourceVersion as the
// conflict guard: the API server refuses it when the object changed since
// it was read (https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions).
// An empty map is left out of the patch.
func MetadataPatch(labels, annotations map[string]string, resourceVersion string) ([]byte, error) {
	meta := map[string]any{"resourceVersion": resourceVersion}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	return json.Marshal(map[string]any{"metadata": meta})
}
