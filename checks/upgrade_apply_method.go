package checks

import (
	"context"
	"fmt"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/apply"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// UpgradeApplyMethod decides how each object of the upgrade up is sent to
// the API server, and names who sends it that way for messages:
//   - Argo CD syncing the runtime (up.Sync): client-side `kubectl apply`
//     against the last-applied configuration, or, with the sync option
//     ServerSideApply=true, server-side apply under argocd-controller with
//     conflicts forced (https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/#server-side-apply);
//   - Helm 3, and Helm 4 on a release it applied client-side: Helm's
//     three-way merge patch;
//   - Helm 4 on a release it applied server-side ("apply_method": "ssa" in
//     the release record): server-side apply under Helm's field manager,
//     conflicts not forced.
//
// The Helm in use is --helm-major, else the client helm-version finds.
func UpgradeApplyMethod(ctx context.Context, env *Env, up *chart.Upgrade) (apply.Method, string, error) {
	if s := up.Sync; s != nil {
		if s.ServerSideApply {
			return apply.ArgoServerSideApply, fmt.Sprintf("Argo CD (Application %s, ServerSideApply=true), %s", s.App, apply.ArgoServerSideApply), nil
		}
		return apply.ClientSideApply, fmt.Sprintf("Argo CD (Application %s), %s", s.App, apply.ClientSideApply), nil
	}
	major, from := helmMajor(ctx, env)
	method := apply.MergePatch
	if major >= 4 {
		m, err := env.Cluster.HelmApplyMethod(cluster.HelmRevision{Namespace: up.Last.Namespace, Name: up.Last.Name, Version: up.Last.Version,
			SecretName: fmt.Sprintf("sh.helm.release.v1.%s.v%d", up.Last.Name, up.Last.Version)})
		if err != nil {
			return "", "", err
		}
		if m == "ssa" {
			method = apply.ServerSideApply
		}
	}
	return method, fmt.Sprintf("Helm %d (%s), %s", major, from, method), nil
}
