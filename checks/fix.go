package checks

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/apply"
)

// FieldManager is the field manager every --fix patch is sent with, so that
// `kubectl get -o yaml --show-managed-fields` shows what this plugin set.
const FieldManager = "kubectl-gitops-preflight"

// FieldChange is one line of a fix plan: a field of an object, its current
// value and the value the fix sets. Old is "" (shown as <none>) when unset.
type FieldChange struct {
	Field string // e.g. "metadata.labels[app.kubernetes.io/managed-by]"
	Old   string
	New   string
}

// Change is one object a fix patches. Fixes never delete and never touch
// anything but the fields listed.
type Change struct {
	Object   ObjectRef
	Resource schema.GroupVersionResource
	Fields   []FieldChange
	// PatchType and Patch are sent as they are (merge or JSON patch), with
	// FieldManager and, for --dry-run, dryRun=All.
	PatchType types.PatchType
	Patch     []byte
	// Refused, when set, is why this object is not changed (for example
	// "owned by deployed release x in namespace y: uninstall it or install
	// as that release"); such a change carries no patch, is never sent, and
	// makes the run exit 1.
	Refused string
}

// Planner returns the changes that would repair a failed check, given the
// same Env the check ran with. It returns no changes when nothing needs
// fixing, and an error (shown per check, nothing applied for it) when the fix
// must be refused (e.g. a TLS Secret that does not cover the host).
type Planner func(ctx context.Context, env *Env) ([]Change, error)

// ownershipPatch is the JSON merge patch (apply.MetadataPatch) that sets
// the label and annotation fields (metadata.labels[k] /
// metadata.annotations[k] = New) with resourceVersion as the conflict
// guard: the API server refuses it when the object changed since it was
// read.
func ownershipPatch(fields []FieldChange, resourceVersion string) ([]byte, error) {
	labels, annotations := map[string]string{}, map[string]string{}
	for _, f := range fields {
		key := f.Field[strings.IndexByte(f.Field, '[')+1 : len(f.Field)-1]
		if strings.HasPrefix(f.Field, "metadata.labels[") {
			labels[key] = f.New
		} else {
			annotations[key] = f.New
		}
	}
	return apply.MetadataPatch(labels, annotations, resourceVersion)
}
