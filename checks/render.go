package checks

// Helpers of the checks that read the rendered chart or a manifest: the
// rendering or the skip that stands for it, the skips of an upgrade's
// errors, and a manifest's workloads.

import (
	"context"
	"errors"
	"fmt"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/schedule"
)

// chartSkip is the skip result for a chart that could not be loaded.
func chartSkip(err error) Result {
	return Skip("no chart loaded (%v): pass --chart with a local directory or .tgz, or a reachable oci:// mirror (and --chart-version)", err)
}

// errChartNotRendered makes helm-ownership skip when chart-renders fails.
var errChartNotRendered = errors.New("the chart does not render with these values (see chart-renders)")

func renderingForChecks(ctx context.Context, env *Env) (*chart.Rendering, *Result, error) {
	r, err := env.Rendering(ctx)
	var le *chart.LoadError
	if errors.As(err, &le) {
		res := chartSkip(le.Err)
		return nil, &res, nil
	}
	if _, ok := chart.IsRenderError(err); ok {
		res := Skip("%v", errChartNotRendered)
		return nil, &res, nil
	}
	var re *chart.ReleaseError
	if errors.As(err, &re) {
		res := Skip("helm upgrade refuses the release (release-upgradable)")
		return nil, &res, nil
	}
	return r, nil, err
}

func derefResult(r *Result) Result {
	if r == nil {
		return Result{}
	}
	return *r
}

// manifestWorkloads reads every Deployment, StatefulSet and Job of a
// manifest, hooks of every kind included.
func manifestWorkloads(manifest string) ([]RuntimePodSpec, error) {
	objs, err := chart.ManifestObjects(manifest)
	if err != nil {
		return nil, fmt.Errorf("decoding manifest document: %w", err)
	}
	return schedule.WorkloadsOf(objs)
}

// upgradeSkip turns the errors of Env.Upgrade that are not this check's to
// report into its skip: no chart (chart-renders says so), a release Helm
// refuses (release-upgradable) or a target that does not render
// (chart-renders).
func upgradeSkip(err error) (Result, bool) {
	var le *chart.LoadError
	if errors.As(err, &le) {
		return chartSkip(le.Err), true
	}
	var re *chart.ReleaseError
	if errors.As(err, &re) {
		return Skip("helm upgrade refuses the release (release-upgradable)"), true
	}
	if _, ok := chart.IsRenderError(err); ok {
		return Skip("the target chart does not render with the effective values (chart-renders)"), true
	}
	return Result{}, false
}
