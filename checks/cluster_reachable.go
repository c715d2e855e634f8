package checks

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// ClusterReachable passes when the API server's /version answers with the
// given credentials. It is fatal: when it fails the run stops and exits 3
// (README "Exit codes").
func ClusterReachable() Check {
	return Check{
		Meta: Meta{
			ID:       "cluster-reachable",
			Impact:   ImpactInstallFails,
			Category: CategoryCluster,
			Modes:    ModePre | ModePost | ModeUpgrade,
			Title:    "Kubernetes API server is reachable with the given credentials",
			Severity: SeverityFail,
			Fatal:    true,
		},
		Run: runClusterReachable,
	}
}

func runClusterReachable(_ context.Context, env *Env) (Result, error) {
	server := ""
	if cfg := env.Cluster.Clients().Config; cfg != nil {
		server = cfg.Host
	}
	v, err := env.Cluster.ServerVersion()
	var ce *cluster.CredentialError
	switch {
	case errors.As(err, &ce):
		return Fail("%s was not asked: %s", server, firstLine(ce.Error())).
			WithHint(fmt.Sprintf("run the kubeconfig's credential command (%s) by hand and check that it prints an ExecCredential without waiting for input; it is stopped at --timeout", ce.Command)), nil
	case err == nil:
		return Pass("%s answered: Kubernetes %s", server, v.GitVersion), nil
	case apierrors.IsUnauthorized(err):
		return Fail("%s rejected the credentials (401 Unauthorized)", server).
			WithHint("refresh your credentials (e.g. re-run your cloud's get-credentials command) and check with: kubectl get --raw /version"), nil
	case apierrors.IsForbidden(err):
		// Authenticated but not allowed to read /version: the cluster is there.
		return Pass("%s answered, but /version is forbidden for these credentials", server), nil
	default:
		var le interface{ Unwrap() error }
		msg := err.Error()
		if errors.As(err, &le) && le.Unwrap() != nil {
			msg = le.Unwrap().Error()
		}
		return Fail("cannot reach %s: %s", server, firstLine(msg)).
			WithHint("check the context (kubectl config current-context), VPN or proxy, and try: kubectl --request-timeout=10s get --raw /version"), nil
	}
}
