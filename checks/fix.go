package checks

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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
