package checks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/apply"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// UpgradeApply passes when the API server accepts every change of the
// upgrade as the Helm in use will send it, each write a server-side dry run
// (internal/apply): Helm 3, and Helm 4 on a release it applied client-side,
// through Helm's own kube client (three-way merge patches, creates,
// deletes); Helm 4 on a release it applied server-side ("apply_method":
// "ssa" in the release record) with server-side apply under its field
// manager, conflicts not forced. The Helm in use is the one helm-version
// finds ($HELM_BIN, else PATH), or --helm-major. It fails, impact
// upgrade-fails, naming each refused object with the API server's reason
// (an immutable field, a field-manager conflict, an admission denial, a
// missing right). Helm's own `helm upgrade --dry-run=server` sends none of
// these requests (helm/helm#7956).
func UpgradeApply() Check {
	return Check{
		Meta: Meta{
			ID:         "upgrade-apply",
			Impact:     ImpactUpgradeFails,
			ReadsChart: true,
			Category:   CategoryUpgrade,
			Modes:      ModeUpgrade,
			Title:      "The API server accepts the upgrade's changes as Helm sends them",
			Severity:   SeverityFail,
			Requires:   []string{"release-upgradable", "release-apis"},
		},
		Run: versionAnchored(runUpgradeApply),
	}
}

func runUpgradeApply(ctx context.Context, env *Env) (Result, error) {
	up, err := env.Upgrade(ctx)
	if r, ok := upgradeSkip(err); ok {
		return r, nil
	}
	if err != nil {
		return Result{}, err
	}
	e, err := dryRunEngine(ctx, env)
	if errors.Is(err, errNoREST) {
		return Skip("%v", errNoREST), nil
	}
	if err != nil {
		return Result{}, err
	}
	method, who, err := upgradeApplyMethod(ctx, env, up)
	if err != nil {
		return Result{}, err
	}
	u := apply.Upgrade{Release: up.Current.Name, Namespace: up.Current.Namespace, Current: up.Current.Manifest, Target: up.TargetManifest}
	if up.Sync != nil {
		u.Tracking = up.Sync.Tracking()
	}
	refused, err := apply.DryRun(ctx, e, applyCluster{env.Cluster}, u, method)
	if _, ok := cluster.AsNotRecorded(err); ok {
		// A replay without the answer: an error naming the request.
		return Result{}, err
	}
	if err != nil {
		return Skip("the upgrade could not be tried: %v", err), nil
	}
	if len(refused) == 0 {
		return Pass("the API server accepts every change of the upgrade as %s sends it (server-side dry run)", who), nil
	}
	var parts []string
	var refs []ObjectRef
	for _, r := range refused {
		parts = append(parts, r.Reason)
		if r.Name != "" {
			refs = append(refs, ObjectRef{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name})
		}
	}
	hint := "an immutable field (a Deployment or StatefulSet selector, a Service clusterIP) changes only by deleting the object first, outside Helm (kubectl delete <kind> <name> --cascade=orphan), then upgrading"
	if method == apply.ServerSideApply {
		hint = "another field manager owns those fields: give them up (remove them from that manager's applied configuration) or run helm upgrade --force-conflicts"
	}
	what := "helm upgrade fails"
	if up.Sync != nil {
		what = "the sync fails"
		hint = "an immutable field changes only by replacing the object: annotate it argocd.argoproj.io/sync-options: Replace=true in the chart, or delete it (kubectl delete <kind> <name> --cascade=orphan) before Argo CD syncs the commit"
	}
	return Fail("%s: %s refused by the API server (%s): %s", what, plural(len(refused), "change"), who, strings.Join(first(parts, 4), "; ")).
		WithHint(hint).WithObjects(refs...), nil
}

// upgradeApplyMethod decides how each object of the upgrade up is sent to
// the API server, and names who sends it that way for messages:
//   - Argo CD syncing the runtime (up.Sync): client-side `kubectl apply`
//     against the last-applied configuration, or, with the sync option
//     ServerSideApply=true (argocd.SyncOptionServerSideApply), server-side
//     apply under argocd-controller with conflicts forced
//     (https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/#server-side-apply);
//   - Helm 3, and Helm 4 on a release it applied client-side: Helm's
//     three-way merge patch;
//   - Helm 4 on a release it applied server-side ("apply_method": "ssa" in
//     the release record): server-side apply under Helm's field manager,
//     conflicts not forced.
//
// The Helm in use is --helm-major, else the client helm-version finds.
func upgradeApplyMethod(ctx context.Context, env *Env, up *chart.Upgrade) (apply.Method, string, error) {
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

// applyCluster is the run's snapshot as the apply package reads it: its
// shared lists and its discovery document.
type applyCluster struct{ *cluster.Snapshot }

// APIGroupsAndResources is the snapshot's discovery document (read once
// per run).
func (c applyCluster) APIGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	doc, err := c.APIResources()
	if err != nil {
		return nil, nil, err
	}
	return doc.Groups, doc.Resources, nil
}
