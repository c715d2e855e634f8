package checks

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

// ChartRenders passes when the gitops-runtime chart (--chart,
// --chart-version) renders with the planned values, release name and
// namespace against the cluster's Kubernetes version and API versions, as
// `helm install` renders it (Helm's action.Install in client-only dry-run
// mode; docs/checks/chart-renders.md). It fails with the chart's own message (its `fail` and
// `required` texts, template paths removed) and skips, with the reason and
// the flag to use, when no chart could be loaded. Rules the chart's
// validate-values hook enforces at install time stay with the `values`
// check: rendering cannot see them. Templates that call `lookup` see no
// cluster objects here, as under `helm template`.
func ChartRenders() Check {
	return Check{
		Meta: Meta{
			ID:                 "chart-renders",
			Impact:             ImpactInstallFails,
			ReadsChart:         true,
			ReadsIgnoredValues: true,
			Category:           CategoryInputs,
			Modes:              ModePre | ModeUpgrade,
			Title:              "The gitops-runtime chart renders with the given values",
			Severity:           SeverityFail,
			Requires:           []string{"cluster-reachable"},
		},
		Run: runChartRenders,
	}
}

func runChartRenders(ctx context.Context, env *Env) (Result, error) {
	r, err := env.Rendering(ctx)
	var le *chart.LoadError
	if errors.As(err, &le) {
		return chartSkip(le.Err), nil
	}
	var rel *chart.ReleaseError
	if errors.As(err, &rel) {
		return Skip("helm upgrade refuses the release before rendering (release-upgradable)"), nil
	}
	if re, ok := chart.IsRenderError(err); ok {
		msg := re.Message()
		return Fail("the chart does not render with these values for release %s in namespace %s: %s",
			env.Inputs.ReleaseName, env.Inputs.Namespace, msg).WithHint(renderHint(msg)), nil
	}
	if err != nil {
		return Result{}, err
	}
	facts := fmt.Sprintf("chart %s %s renders %d objects and %d hooks for release %s in namespace %s",
		r.ChartName, r.ChartVersion, len(r.Objects), len(r.Hooks), env.Inputs.ReleaseName, env.Inputs.Namespace)
	if !env.Upgrading() && env.Inputs.HasValues() {
		// Before an install: a value the chart ignores is a typo or a key
		// of another chart version (upgrade-values says so for upgrades).
		ig, err := env.Chart.Ignored(ctx)
		if err != nil {
			return Result{}, err
		}
		if len(ig.Paths) > 0 {
			return Warn("%s, but ignores %s you give: %s (removing each leaves the rendered manifest unchanged: a misspelt key, or one of another chart version)",
				facts, plural(len(ig.Paths), "value"), strings.Join(first(ig.Paths, 8), ", ")).WithEffect(ImpactAdvisory).
				WithHint("check each against the chart's values.yaml (helm show values " + env.Inputs.Chart + "): fix its spelling or move it to the key this version reads"), nil
		}
	}
	if env.Upgrading() {
		up, err := env.Upgrade(ctx)
		if err != nil {
			return Result{}, err
		}
		if up != nil && up.Sync != nil && len(up.Sync.Unread) > 0 {
			// A multi-source Application's value files of another
			// repository: Argo CD reads them; this run has no checkout.
			refs := map[string]bool{}
			for _, u := range up.Sync.Unread {
				if ref, _, ok := strings.Cut(strings.TrimPrefix(u, "$"), "/"); ok {
					refs[ref] = true
				}
			}
			var flags []string
			for _, ref := range sortedKeys(refs) {
				flags = append(flags, "--argocd-source "+ref+"=DIR")
			}
			return Warn("%s, without %s of %s that Argo CD reads, from another repository: %s; the verdicts of the other checks are on a render without them",
				facts, plural(len(up.Sync.Unread), "value file"), up.Sync.App, strings.Join(up.Sync.Unread, ", ")).WithEffect(ImpactAdvisory).
				WithHint("give a checkout of each source at the revision Argo CD will sync: " + strings.Join(flags, " ")), nil
		}
	}
	return Pass("%s", facts), nil
}

// valuePath finds the first dotted value path in a chart message, e.g.
// "global.runtime.name" in "global.runtime.name is required for tunnel
// based runtime".
var valuePath = regexp.MustCompile(`\b[a-zA-Z][\w-]*(\.[a-zA-Z][\w-]*)+\b`)

func renderHint(msg string) string {
	if p := strings.TrimPrefix(valuePath.FindString(msg), "Values."); p != "" && strings.Contains(p, ".") {
		return fmt.Sprintf("set %s in your values file (or --set %s=...), then run again with the same -f/--set you will give helm install", p, p)
	}
	return "fix the values the message names, then run again with the same -f/--set you will give helm install"
}
