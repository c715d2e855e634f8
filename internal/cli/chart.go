package cli

import (
	"time"

	"helm.sh/helm/v3/pkg/cli"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// completeChart prepares the chart loader: the chart of --chart and
// --chart-version, pulled with Helm's environment (HELM_* variables, set by
// Helm itself under `helm gitops-preflight`) through the --connect-to
// rules, bounded by --request-timeout (chart.DefaultTimeout, 30 s, when
// it is not given).
func (o *Options) completeChart(timeout time.Duration) {
	if o.Chart == "" || o.config.Mode == checks.ModePost || !run.NeedsChart(o.config.Selected) {
		return
	}
	if o.ConfigFlags.Timeout == nil || *o.ConfigFlags.Timeout == "" || *o.ConfigFlags.Timeout == "0" {
		timeout = 0 // no --request-timeout: chart.DefaultTimeout bounds the pull
	}
	o.config.Chart = chart.NewLoader(chart.Source{
		Ref:         o.Chart,
		Version:     o.ChartVersion,
		Timeout:     timeout,
		DialContext: o.config.Prober.DialContext,
		Settings:    cli.New(),
	})
}
