package checks

import (
	"context"
	"errors"
	"fmt"

	"github.com/Masterminds/semver/v3"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

// UpgradePath passes when the step from the deployed chart version (the
// revision `helm upgrade` starts from) to the target chart version is one
// the chart's maintainers support. The rules are data (upgradeSteps), each
// with its public source; a step a rule forbids fails naming the version to
// upgrade to first and the command, and carries the step as data
// (Result.Step: the fleet report groups such clusters).
func UpgradePath() Check {
	return Check{
		Meta: Meta{
			ID:         "upgrade-path",
			Impact:     ImpactRuntimeBreaks,
			ReadsChart: true,
			Category:   CategoryUpgrade,
			Modes:      ModeUpgrade,
			Title:      "The chart supports the step from the deployed version to the target",
			Severity:   SeverityFail,
			Requires:   []string{"release-upgradable"},
		},
		Run: runUpgradePath,
	}
}

// upgradeStep is a rule of the chart's upgrade path: an upgrade from a
// version in From to a version in To must go through Via first.
type upgradeStep struct {
	From, To string // semver constraints
	Via      string // the release line to upgrade to first, "0.26"
	Why      string // what skipping it breaks
	Source   string // the public source of the rule
}

// upgradeSteps are the chart's upgrade rules.
var upgradeSteps = []upgradeStep{{
	From: "< 0.26.0-0", To: ">= 0.27.0-0", Via: "0.26",
	Why: "0.26 removes the Argo Events custom resources and keeps their controller to process their finalizers; 0.27 removes the controller " +
		"(\"You MUST upgrade to version 0.26.x before upgrading to 0.27.0 or higher\")",
	Source: "https://github.com/codefresh-io/gitops-runtime-helm/commit/3887b8f4",
}}

func runUpgradePath(ctx context.Context, env *Env) (Result, error) {
	ns, name := env.Inputs.Namespace, env.Inputs.ReleaseName
	history, err := env.Cluster.HelmHistory(ns, name)
	if err != nil {
		return Result{}, err
	}
	ra, err := env.RuntimeApp()
	if err != nil {
		return Result{}, err
	}
	var fromS string
	switch {
	case ra != nil && ra.LiveChartVersion != "":
		// Argo CD syncs the runtime: the live chart is the base.
		fromS = ra.LiveChartVersion
	case ra != nil:
		return Skip("the runtime's live chart version is unknown (%s carries no helm.sh/chart label) and %s, not the Helm release record, deployed it", RuntimeConfigMapName, ra.Name()), nil
	case len(history) == 0 || history[0].Chart == nil || history[0].Chart.Metadata == nil:
		return Skip("the deployed revision of release %s records no chart version", name), nil
	default:
		fromS = history[0].Chart.Metadata.Version
	}
	if env.Chart == nil {
		return chartSkip(errNoChart.Err), nil
	}
	md, err := env.Chart.Metadata(ctx)
	var le *chart.LoadError
	if errors.As(err, &le) {
		return chartSkip(le.Err), nil
	}
	if err != nil {
		return Result{}, err
	}
	toS := md.Version
	from, err := semver.NewVersion(fromS)
	if err != nil {
		return Skip("deployed chart version %q is not a semantic version", fromS), nil
	}
	to, err := semver.NewVersion(toS)
	if err != nil {
		return Skip("target chart version %q is not a semantic version", toS), nil
	}
	if to.LessThan(from) {
		return Warn("chart %s → %s is a downgrade; the chart documents no downgrade path", fromS, toS).
			WithHint(downgradeHint(ra, name, ns)).WithSource(env.ChartVersionAnchor()), nil
	}
	for _, s := range upgradeSteps {
		f, _ := semver.NewConstraint(s.From)
		t, _ := semver.NewConstraint(s.To)
		if f.Check(from) && t.Check(to) {
			step := UpgradeStep{From: fromS, To: toS, Via: s.Via}
			hint := fmt.Sprintf("helm upgrade %s %s -n %s --version '~%s' (with the same values), then check the upgrade to %s again", name, env.Inputs.Chart, ns, s.Via, toS)
			if ra != nil {
				hint = fmt.Sprintf("commit a %s.x version first (resources/<runtime-name>/chart/Chart.yaml: .version and .dependencies[].version), let %s sync it, then commit %s", s.Via, ra.Name(), toS)
			}
			return Fail("%s; %s (%s)", step, s.Why, s.Source).WithStep(step).WithHint(hint).WithSource(env.ChartVersionAnchor()), nil
		}
	}
	return Pass("chart %s → %s: no documented step in between", fromS, toS), nil
}

// downgradeHint says how to return to an earlier chart version: helm
// rollback, or a commit for a runtime Argo CD syncs.
func downgradeHint(ra *RuntimeApp, name, ns string) string {
	if ra != nil {
		return "to return to an earlier version, commit it to resources/<runtime-name>/chart/Chart.yaml (.version and .dependencies[].version): " + ra.Name() + " syncs the runtime, helm rollback would be reverted"
	}
	return fmt.Sprintf("to return to an earlier revision use `helm rollback %s -n %s`", name, ns)
}
