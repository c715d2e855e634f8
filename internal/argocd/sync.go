package argocd

import "strings"

// The sync options Argo CD reads, from spec.syncPolicy.syncOptions or an
// object's argocd.argoproj.io/sync-options annotation, compared
// case-insensitively (gitops-engine pkg/sync/common/types.go,
// https://github.com/argoproj/argo-cd/blob/master/gitops-engine/pkg/sync/common/types.go;
// https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/).
const (
	// SyncOptionServerSideApply makes the sync apply with server-side
	// apply under the argocd-controller field manager, conflicts forced;
	// without it the sync runs `kubectl apply` (client-side, the
	// last-applied configuration).
	SyncOptionServerSideApply = "ServerSideApply=true"
	// SyncOptionDisablePrune on an object keeps it out of every prune.
	SyncOptionDisablePrune = "Prune=false"
)

// Sync is the Argo CD side of an upgrade that Argo CD performs: what it
// deployed and how it syncs (SyncBase), and what the render of the commit
// left out.
type Sync struct {
	SyncBase
	// Unread are the value files of other sources the render could not
	// read, no checkout of their repository given: "$values/values/a.yaml
	// (ref values: REPO at REVISION)". The render went on without them.
	Unread []string
}

// Pruned reports whether a sync deletes the object group/kind
// namespace/name ("" for the destination namespace), an object of the
// inventory the target no longer renders: only with prune
// (syncPolicy.automated.prune) and never one annotated with Prune=false
// (gitops-engine pkg/sync sync_context.go: an object to prune is skipped
// unless the sync prunes, and one with the option Prune=false is never
// pruned; https://github.com/argoproj/argo-cd/blob/master/gitops-engine/pkg/sync/sync_context.go).
// Argo CD does not read helm.sh/resource-policy: keep when it prunes.
// Nor does it prune what it does not track: labels and annotations are the
// live object's, and one without the Application's mark (Tracking.Tracks;
// a CRD Argo CD applied has none) is not one it manages.
func (s *Sync) Pruned(group, kind, namespace, name string, labels, annotations map[string]string) bool {
	return s.Prune && !s.NoPrune[MatchKey(group, kind, namespace, name)] && s.Tracking().Tracks(labels, annotations)
}

// PruneDisabled reports whether an object's annotations keep it out of
// every prune (argocd.argoproj.io/sync-options holds Prune=false).
func PruneDisabled(annotations map[string]string) bool {
	return hasSyncOption(annotations[SyncOptionsAnnotation], SyncOptionDisablePrune)
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

// Argo CD's hook annotations and phases (gitops-engine pkg/sync/hook,
// https://github.com/argoproj/argo-cd/blob/master/gitops-engine/pkg/sync/hook/hook.go
// and helm/type.go; https://argo-cd.readthedocs.io/en/stable/user-guide/helm/#helm-hooks).
const (
	// HookAnnotation holds an object's Argo CD hook phases
	// (comma-separated: PreSync, Sync, PostSync, SyncFail, Skip).
	HookAnnotation = "argocd.argoproj.io/hook"
	// HelmHookAnnotation holds a Helm hook's events.
	HelmHookAnnotation = "helm.sh/hook"
	// PreSync hooks run before anything is applied; a failed one fails
	// the sync.
	PreSync = "PreSync"
	// PostSync hooks run after the sync applied everything and it is
	// healthy.
	PostSync = "PostSync"
)

// argoHookTypes are the phases argocd.argoproj.io/hook names
// (gitops-engine pkg/sync/common NewHookType).
var argoHookTypes = map[string]bool{"PreSync": true, "Sync": true, "PostSync": true, "SyncFail": true, "Skip": true}

// helmHookTypes map the Helm hook events Argo CD runs to its phases: the
// pre-install and pre-upgrade hooks run as PreSync hooks of every sync,
// post-install and post-upgrade ones as PostSync; other Helm events run
// never (gitops-engine pkg/sync/hook/helm/type.go).
var helmHookTypes = map[string]string{"pre-install": PreSync, "pre-upgrade": PreSync, "post-install": PostSync, "post-upgrade": PostSync}

// HookTypes returns the phases in which a sync runs an object with
// annotations: those argocd.argoproj.io/hook names, else those its Helm
// hook events map to (helmHookTypes), in annotation order. An object with
// Argo CD's annotation ignores its Helm one (gitops-engine hook.Types).
func HookTypes(annotations map[string]string) []string {
	var out []string
	for _, t := range csv(annotations[HookAnnotation]) {
		if argoHookTypes[t] {
			out = append(out, t)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, e := range csv(annotations[HelmHookAnnotation]) {
		if t, ok := helmHookTypes[e]; ok {
			out = append(out, t)
		}
	}
	return out
}

// IsHook reports whether a sync treats an object with annotations as a
// hook, not one of the Application's resources: argocd.argoproj.io/hook
// set (unless it is only Skip), else helm.sh/hook set to anything but
// crd-install (gitops-engine hook.IsHook and helm.IsHook). A Helm hook of
// an event Argo CD does not run (pre-delete, test) is still a hook: it is
// neither run nor applied.
func IsHook(annotations map[string]string) bool {
	if _, ok := annotations[HookAnnotation]; ok {
		types := HookTypes(annotations)
		return !(len(types) == 1 && types[0] == "Skip")
	}
	v, ok := annotations[HelmHookAnnotation]
	return ok && v != "crd-install"
}

// RunsOnEverySync reports whether a Helm hook of the events helmHooks
// (its helm.sh/hook value) runs on every sync of an Application, as a
// PreSync hook: Argo CD knows no install apart from an upgrade, so a
// pre-install hook runs on each sync too.
func RunsOnEverySync(helmHooks string) bool {
	for _, t := range HookTypes(map[string]string{HelmHookAnnotation: helmHooks}) {
		if t == PreSync {
			return true
		}
	}
	return false
}

// csv splits a comma-separated annotation, each value trimmed, empty ones
// left out (gitops-engine resource.GetAnnotationCSVs).
func csv(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
