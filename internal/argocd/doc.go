// Package argocd is what the plugin knows of Argo CD, for a runtime an
// Argo CD Application syncs: the Application as the cluster holds it
// (sources, multi-source refs, the ApplicationSet that generates it, its
// sync policy and status), which Application manages the runtime, what it
// deployed (its inventory as the live objects hold it), how its repo-server
// renders the chart of a commit (the `helm template` flags: release name,
// value files, `$ref` value files of other sources, inline values,
// parameters, CRDs), and its sync's rules: what a sync prunes, which
// objects are hooks and in which phase they run, and whether objects are
// applied client-side or server-side; and a local account's capabilities
// as argocd-cm declares them.
//
// The split follows Argo CD's own: the Application model of
// pkg/apis/application/v1alpha1 (https://github.com/argoproj/argo-cd/blob/v3.2.6/pkg/apis/application/v1alpha1/types.go),
// the repo-server's helmTemplate (https://github.com/argoproj/argo-cd/blob/v3.2.6/reposerver/repository/repository.go),
// and gitops-engine's pkg/sync (prune, hooks, sync options;
// https://github.com/argoproj/argo-cd/tree/master/gitops-engine/pkg/sync).
// The render itself is internal/chart's (PrepareSync): this package gives
// it the flags.
package argocd
