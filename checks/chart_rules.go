package checks

import (
	"context"
	"errors"
	"fmt"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// chartRules is the rendering of the chart being installed as the rule
// checks read it: the rendering when there is one, else why not, in words
// a message can end with.
type chartRules struct {
	// R is the rendering; nil when the chart could not be loaded or did not
	// render.
	R *chart.Rendering
	// Missing says why R is nil ("no chart loaded (…)", "chart … did not
	// render (…)"); "" when R is set.
	Missing string
}

// readChartRules waits for the run's rendering. A chart that could not be
// loaded or rendered is not an error: the rule checks then apply today's
// defaults (plan.Defaults*) and say why. Only an interrupted wait is an
// error.
func readChartRules(ctx context.Context, env *Env) (chartRules, error) {
	r, err := env.Rendering(ctx)
	if err == nil {
		return chartRules{R: r}, nil
	}
	if ctx.Err() != nil {
		return chartRules{}, err
	}
	var le *chart.LoadError
	var rel *chart.ReleaseError
	switch re, isRender := chart.IsRenderError(err); {
	case errors.As(err, &le):
		return chartRules{Missing: fmt.Sprintf("no chart loaded (%v)", le.Err)}, nil
	case isRender:
		return chartRules{Missing: fmt.Sprintf("the chart did not render (%s)", re.Message())}, nil
	case errors.As(err, &rel):
		return chartRules{Missing: "helm upgrade refuses the release before rendering"}, nil
	default:
		return chartRules{Missing: fmt.Sprintf("the chart was not rendered (%v)", err)}, nil
	}
}

// chartName names the rendered chart ("chart gitops-runtime 0.30.0").
func (c chartRules) chartName() string {
	return "chart " + c.R.ChartName + " " + c.R.ChartVersion
}

// defaultsNote says that today's defaults were used and why.
func (c chartRules) defaultsNote() string {
	return fmt.Sprintf("%s: using the default of chart %s, the newest release line this plugin knows", c.Missing, plan.DefaultsChartVersion)
}

// argoCDRules are the rules the chart's validate-values hook applies to an
// existing Argo CD, and where each was taken from.
type argoCDRules struct {
	// Range is the Argo CD version constraint; RangeFrom says whose it is
	// ("REQUIRED_VERSION_CONSTRAINT of the validate-values hook of chart
	// gitops-runtime 0.30.0", "--argocd-version-range, in place of ...").
	Range, RangeFrom string
	// Selector is the label selector of the Argo CD server Service;
	// SelectorFrom says whose it is.
	Selector, SelectorFrom string
	// Enforced is true when the hook checks the version at install time
	// (Helm then fails): the rendered hook says so, or the chart was not
	// rendered and today's chart's hook is assumed; false when the chart
	// renders no validate-values hook (installer.skipValidation).
	Enforced bool
}

// readArgoCDRules takes the Argo CD rules from the rendered validate-values
// hook (its environment: REQUIRED_VERSION_CONSTRAINT and ARGOCD_LABELS, the
// chart's templates/hooks/pre-install/_env.yaml), --argocd-version-range in
// place of the range when given, and today's defaults when the chart was not
// rendered or renders no hook, saying why.
func readArgoCDRules(ctx context.Context, env *Env) (argoCDRules, error) {
	c, err := readChartRules(ctx, env)
	if err != nil {
		return argoCDRules{}, err
	}
	out := argoCDRules{Range: plan.DefaultArgoCDVersionRange, Selector: plan.DefaultArgoCDServerSelector}
	switch {
	case c.R == nil:
		// The chart is unknown: its hook is assumed, as in today's chart.
		out.Enforced = true
		out.RangeFrom = c.defaultsNote()
		out.SelectorFrom = out.RangeFrom
	case c.R.ValidationHooks.ValidateValues == nil:
		out.RangeFrom = fmt.Sprintf("%s renders no validate-values hook (installer.skipValidation=true), so nothing checks Argo CD's version at install: using the default of chart %s", c.chartName(), plan.DefaultsChartVersion)
		out.SelectorFrom = out.RangeFrom
	default:
		vv := c.R.ValidationHooks.ValidateValues
		out.Enforced = vv.ChecksArgoCDVersion
		if env.Upgrading() && syncOf(ctx, env) == nil && !c.R.ValidationHooks.ValidateValuesOnUpgrade {
			// helm upgrade runs only the pre-upgrade hooks.
			out.Enforced = false
		}
		out.RangeFrom = "REQUIRED_VERSION_CONSTRAINT of the validate-values hook of " + c.chartName()
		if vv.ArgoCDVersionConstraint != "" {
			out.Range = vv.ArgoCDVersionConstraint
		} else {
			out.RangeFrom = fmt.Sprintf("the validate-values hook of %s sets no REQUIRED_VERSION_CONSTRAINT: using the default of chart %s", c.chartName(), plan.DefaultsChartVersion)
		}
		out.SelectorFrom = "ARGOCD_LABELS of the validate-values hook of " + c.chartName()
		if vv.ArgoCDServerSelector != "" {
			out.Selector = vv.ArgoCDServerSelector
		} else {
			out.SelectorFrom = fmt.Sprintf("the validate-values hook of %s sets no ARGOCD_LABELS: using the default of chart %s", c.chartName(), plan.DefaultsChartVersion)
		}
	}
	if o := env.Inputs.ArgoCDVersionRange; o != "" {
		from := "--argocd-version-range"
		if o != out.Range {
			from += fmt.Sprintf(", in place of %q (%s)", out.Range, out.RangeFrom)
		}
		out.Range, out.RangeFrom = o, from
	}
	return out, nil
}
