package checks

import (
	"context"
	"errors"
	"fmt"

	rspb "helm.sh/helm/v3/pkg/release"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

// ReleaseUpgradable passes when `helm upgrade` will take the runtime's
// release (--release-name in the runtime namespace) at all: Helm's own
// action.Upgrade, in a client-side dry run over the release's revisions as
// its storage holds them (Secrets of type helm.sh/release.v1), starts the
// upgrade. It fails, impact upgrade-fails, with Helm's words when the
// release has no revision in the namespace (`"R" has no deployed
// releases`) or its latest revision is pending-install, pending-upgrade or
// pending-rollback (`another operation (install/upgrade/rollback) is in
// progress`; Helm's pkg/action/upgrade.go prepareUpgrade). A latest
// revision that failed is a warning: Helm upgrades from the last deployed
// one, as it says.
func ReleaseUpgradable() Check {
	return Check{
		Meta: Meta{
			ID:       "release-upgradable",
			Impact:   ImpactUpgradeFails,
			Core:     true,
			Category: CategoryUpgrade,
			Modes:    ModeUpgrade,
			Title:    "helm upgrade takes the deployed release",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
		},
		Run: scopedRun(runReleaseUpgradable, "secrets"),
	}
}

func runReleaseUpgradable(ctx context.Context, env *Env) (Result, error) {
	ns, name := env.Inputs.Namespace, env.Inputs.ReleaseName
	ra, err := env.RuntimeApp()
	if err != nil {
		return Result{}, err
	}
	if ra != nil {
		return syncUpgradable(env, ra)
	}
	history, err := env.Cluster.HelmHistory(ns, name)
	if err != nil {
		return Result{}, err
	}
	if len(history) == 0 {
		msg := fmt.Sprintf("release %s has no revision in namespace %s: helm upgrade fails with %q", name, ns, fmt.Sprintf("%q has no deployed releases", name))
		hint := "pass the release name (--release-name) and namespace (-n) the runtime was installed with (helm list -A), or check an install instead: run without --upgrade"
		if other := releaseElsewhere(env, name, ns); other != "" {
			msg += fmt.Sprintf(" (a release %s exists in namespace %s)", name, other)
			hint = fmt.Sprintf("run again with -n %s if that is the runtime", other)
		}
		return Fail("%s", msg).WithHint(hint), nil
	}
	last := history[len(history)-1]
	ref := ObjectRef{Kind: "Secret", Namespace: ns, Name: fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, last.Version)}
	facts := fmt.Sprintf("release %s revision %d is %s (chart %s)", name, last.Version, last.Info.Status, releaseChart(last))
	if err := chart.Upgradable(ctx, name, ns, history); err != nil {
		var re *chart.ReleaseError
		if !errors.As(err, &re) {
			return Result{}, err
		}
		if last.Info.Description != "" {
			facts += ": " + last.Info.Description
		}
		return Fail("%s; helm upgrade fails with %q", facts, re.Raw).
			WithHint(releaseHint(last.Info.Status, name, ns)).WithObjects(ref), nil
	}
	if last.Info.Status == rspb.StatusDeployed {
		return Pass("%s", facts), nil
	}
	from := history[0]
	if from == last {
		return Warn("%s; helm upgrade starts from it", facts).WithHint(fmt.Sprintf("see why it failed with `helm history %s -n %s`; the upgrade may fail the same way", name, ns)).WithObjects(ref), nil
	}
	return Warn("%s; helm upgrade starts from revision %d (deployed, chart %s)", facts, from.Version, releaseChart(from)).
		WithHint(fmt.Sprintf("see why revision %d failed with `helm history %s -n %s`; the upgrade may fail the same way", last.Version, name, ns)).WithObjects(ref), nil
}

// releaseChart names a revision's chart, "gitops-runtime-0.26.8".
func releaseChart(r *rspb.Release) string {
	if r.Chart == nil || r.Chart.Metadata == nil {
		return "unknown"
	}
	return r.Chart.Metadata.Name + "-" + r.Chart.Metadata.Version
}

// releaseElsewhere returns a namespace other than ns holding a release
// called name, or "".
func releaseElsewhere(env *Env, name, ns string) string {
	revs, err := env.Cluster.HelmRevisions()
	if err != nil {
		return ""
	}
	for _, r := range revs {
		if r.Name == name && r.Namespace != ns {
			return r.Namespace
		}
	}
	return ""
}

// syncUpgradable judges, for a runtime an Argo CD Application syncs, that
// Argo CD will take the commit: the Application can be read and no sync
// operation is running. The Helm release record is no base (Argo CD never
// writes it): a record whose chart version is not the live one is named
// stale.
func syncUpgradable(env *Env, ra *RuntimeApp) (Result, error) {
	if ra.App == nil {
		return Fail("the runtime is managed by Argo CD (%s, %s), which cannot be read (%s): the upgrade cannot be judged from the Helm release record, which Argo CD never writes", ra.Name(), ra.Evidence, ra.Unreadable).
			WithHint("name the Application that syncs the runtime: --argocd-app NAMESPACE/NAME (kubectl get applications.argoproj.io -A), with credentials that may read it"), nil
	}
	a := ra.App
	ref := ObjectRef{Kind: "Application", Namespace: a.Namespace, Name: a.Name}
	live := ra.LiveChartVersion
	if live == "" {
		live = "unknown (codefresh-cm carries no helm.sh/chart label)"
	}
	facts := fmt.Sprintf("the runtime is upgraded by Argo CD: %s (%s; %s) syncs it, live chart %s, sync %s, health %s",
		ra.Name(), ra.Evidence, syncPolicy(a), live, orUnknownStatus(a.SyncStatus), orUnknownStatus(a.Health))
	stale, err := staleRecord(env, ra)
	if err != nil {
		return Result{}, err
	}
	if stale != "" {
		facts += "; " + stale + ": the upgrade is judged from the live objects"
	}
	if a.Operation.Running() {
		return Warn("%s; a sync operation is running: the commit is synced after it", facts).WithHint("wait for it: argocd app wait " + a.Namespace + "/" + a.Name + " --operation").WithObjects(ref), nil
	}
	if stale != "" {
		return Warn("%s", facts).WithHint(argoUpgradeHint(ra)).WithObjects(ref), nil
	}
	return Pass("%s", facts).WithHint(generatorHint(ra)).WithObjects(ref), nil
}
