package checks

import (
	"context"
	"fmt"
	"strings"

	rspb "helm.sh/helm/v3/pkg/release"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// ReleaseDeployed passes when the latest revision of the runtime's Helm
// release (--release-name in the runtime namespace) has status deployed. It
// reads Helm's release storage (Secrets of type helm.sh/release.v1, labels
// owner=helm,name=<release>; Helm's storage backends,
// https://helm.sh/docs/topics/advanced/#storage-backends) and reports status, revision, chart and app version, and
// on failure Helm's description of what went wrong. The install itself is
// https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Step 3: Install Hybrid GitOps Runtime".
func ReleaseDeployed() Check {
	return Check{
		Meta: Meta{
			ID:       "release-deployed",
			Impact:   ImpactInstallFails,
			Core:     true,
			Category: CategoryRuntime,
			Modes:    ModePost,
			Title:    "The runtime's Helm release is deployed",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
		},
		Run: scopedRun(runReleaseDeployed, "secrets"),
	}
}

func runReleaseDeployed(_ context.Context, env *Env) (Result, error) {
	ns, name := env.Inputs.Namespace, env.Inputs.ReleaseName
	revs, err := env.Cluster.HelmRevisions()
	if err != nil {
		return Result{}, err
	}
	var mine []cluster.HelmRevision
	var elsewhere []string
	for _, r := range cluster.LatestHelmRevisions(revs) {
		switch {
		case r.Name == name && r.Namespace == ns:
			mine = append(mine, r)
		case r.Name == name:
			elsewhere = append(elsewhere, r.Namespace)
		}
	}
	if len(mine) == 0 {
		msg := fmt.Sprintf("release %s is not installed in namespace %s", name, ns)
		hint := fmt.Sprintf("install it (helm upgrade --install %s ... -n %s), or pass the release name (--release-name) and namespace (-n) it was installed with; list releases with: helm list -A", name, ns)
		if len(elsewhere) > 0 {
			msg += fmt.Sprintf(" (a release %s exists in namespace %s)", name, strings.Join(elsewhere, ", "))
			hint = fmt.Sprintf("run again with -n %s if that is the runtime", elsewhere[0])
		}
		return Fail("%s", msg).WithHint(hint), nil
	}
	latest := mine[0]
	ref := ObjectRef{Kind: "Secret", Namespace: ns, Name: latest.SecretName}
	rls, err := env.Cluster.HelmRelease(latest)
	if err != nil {
		return Result{}, err
	}
	status, chartVer, appVer, desc := latest.Status, "unknown", "unknown", ""
	if rls.Info != nil {
		status, desc = string(rls.Info.Status), rls.Info.Description
	}
	if rls.Chart != nil && rls.Chart.Metadata != nil {
		chartVer = rls.Chart.Metadata.Name + "-" + rls.Chart.Metadata.Version
		if rls.Chart.Metadata.AppVersion != "" {
			appVer = rls.Chart.Metadata.AppVersion
		}
	}
	facts := fmt.Sprintf("release %s revision %d is %s (chart %s, app version %s)", name, latest.Version, status, chartVer, appVer)
	if status == string(rspb.StatusDeployed) {
		return Pass("%s", facts), nil
	}
	if desc != "" {
		facts += ": " + desc
	}
	return Fail("%s", facts).WithHint(releaseHint(rspb.Status(status), name, ns)).WithObjects(ref), nil
}

// releaseHint says what to do for a release in status st (Helm's statuses,
// helm.sh/helm/v3/pkg/release/status.go).
func releaseHint(st rspb.Status, name, ns string) string {
	switch st {
	case rspb.StatusPendingInstall, rspb.StatusPendingUpgrade, rspb.StatusPendingRollback:
		return fmt.Sprintf("a Helm operation is in progress or was interrupted; if no helm command is running, see `helm history %s -n %s` and roll back (`helm rollback %s -n %s`) or uninstall, then install again", name, ns, name, ns)
	case rspb.StatusUninstalling, rspb.StatusUninstalled:
		return fmt.Sprintf("the release is being or was uninstalled; install it again (helm upgrade --install %s ... -n %s)", name, ns)
	default:
		return fmt.Sprintf("see why with `helm history %s -n %s` and the other checks of this report (validate-values-job, runtime-workloads); fix the cause and run helm upgrade --install again", name, ns)
	}
}
