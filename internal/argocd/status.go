package argocd

import "strings"

// What Argo CD wrote to an Application's status, read as its UI and CLI
// read it (https://github.com/argoproj/argo-cd/blob/v3.2.6/pkg/apis/application/v1alpha1/types.go).

// OutOfSync returns the inventory's resources whose sync status is
// OutOfSync (those that require pruning among them), in inventory order.
func (a *Application) OutOfSync() []Resource {
	var out []Resource
	for _, r := range a.Resources {
		if r.Status == "OutOfSync" {
			out = append(out, r)
		}
	}
	return out
}

// Unhealthy returns the inventory's resources with a health other than
// Healthy (kinds without a health status are left out), in inventory
// order.
func (a *Application) Unhealthy() []Resource {
	var out []Resource
	for _, r := range a.Resources {
		if r.Health != "" && r.Health != "Healthy" {
			out = append(out, r)
		}
	}
	return out
}

// HealthCauses returns the resources the Application's health message
// names as the causes of its health, for an Argo CD that keeps resource
// health out of the Application (3.0 and later by default:
// status.resourceHealthSource appTree, status.resources without health,
// and status.health.message "Caused by apps/Deployment:ns/name, ..."; the
// controller's formatHealthCauses,
// https://github.com/argoproj/argo-cd/blob/v3.6.1/controller/health.go).
// Each has Group, Kind, Namespace and Name, and the Application's health;
// none when the message is not of that form.
func (a *Application) HealthCauses() []Resource {
	list, ok := strings.CutPrefix(a.HealthMessage, "Caused by ")
	if !ok {
		return nil
	}
	list, _, _ = strings.Cut(list, " and ") // "... and 3 more"
	var out []Resource
	for _, part := range strings.Split(list, ", ") {
		gk, name, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok || gk == "" || name == "" {
			continue
		}
		r := Resource{Kind: gk, Name: name, Health: a.Health}
		if g, k, grouped := strings.Cut(gk, "/"); grouped {
			r.Group, r.Kind = g, k
		}
		if ns, n, namespaced := strings.Cut(name, "/"); namespaced {
			r.Namespace, r.Name = ns, n
		}
		out = append(out, r)
	}
	return out
}

// Failed reports whether the operation ended Failed or Error (false for
// nil: none recorded).
func (op *Operation) Failed() bool {
	return op != nil && (op.Phase == "Failed" || op.Phase == "Error")
}

// Running reports whether a sync operation is running (false for nil).
func (op *Operation) Running() bool {
	return op != nil && op.Phase == "Running"
}

// FailedHooks returns the hooks of the operation's result that failed:
// hook phase Failed or Error, or sync status SyncFailed.
func (op *Operation) FailedHooks() []ResourceResult {
	if op == nil {
		return nil
	}
	return op.hooks(func(r ResourceResult) bool {
		return r.HookPhase == "Failed" || r.HookPhase == "Error" || r.Status == "SyncFailed"
	})
}

// RunningHooks returns the hooks of a running operation's result that
// have not ended: hook phase Running or Pending, or none written yet.
func (op *Operation) RunningHooks() []ResourceResult {
	if !op.Running() {
		return nil
	}
	return op.hooks(func(r ResourceResult) bool {
		return r.HookPhase == "Running" || r.HookPhase == "Pending" || r.HookPhase == ""
	})
}

// hooks returns the hooks of the operation's result for which keep
// returns true.
func (op *Operation) hooks(keep func(ResourceResult) bool) []ResourceResult {
	var out []ResourceResult
	for _, r := range op.Results {
		if r.HookType != "" && keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// IsError reports whether the condition is an error (ComparisonError,
// SyncError, InvalidSpecError, ...): Argo CD's ApplicationCondition.IsError,
// a type ending in "Error".
func (c Condition) IsError() bool {
	return strings.HasSuffix(c.Type, "Error")
}
