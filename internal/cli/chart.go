package cli

import (
	"context"
	"io"
	"log"
	"time"

	"helm.sh/helm/v3/pkg/cli"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// chartChecks read the rendered chart; the chart is loaded and rendered
// only when one of them is selected.
var chartChecks = map[string]bool{"chart-renders": true, "helm-ownership": true, "argo-crds-ownership": true, "runtime-schedulable": true}

// completeChart prepares the chart loader: the chart of --chart and
// --chart-version, pulled with Helm's environment (HELM_* variables, set by
// Helm itself under `helm gitops-preflight`) through the --connect-to
// rules, bounded by --request-timeout (chart.DefaultTimeout, 30 s, when
// it is not given).
func (o *Options) completeChart(timeout time.Duration) {
	if o.Chart == "" || o.mode != checks.ModePre {
		return
	}
	use := false
	for _, c := range o.selected {
		use = use || chartChecks[c.ID]
	}
	if !use {
		return
	}
	if o.ConfigFlags.Timeout == nil || *o.ConfigFlags.Timeout == "" || *o.ConfigFlags.Timeout == "0" {
		timeout = 0 // no --request-timeout: chart.DefaultTimeout bounds the pull
	}
	o.chart = chart.NewLoader(chart.Source{
		Ref:         o.Chart,
		Version:     o.ChartVersion,
		Timeout:     timeout,
		DialContext: o.prober.DialContext,
		Settings:    cli.New(),
	})
}

// startRender starts loading and rendering the chart in the background,
// concurrently with the checks' cluster reads; the capabilities come from
// the snapshot's /version and discovery document (shared with
// helm-ownership). It returns nil when no chart is used.
func (o *Options) startRender(ctx context.Context, snap *cluster.Snapshot) *chart.Pending {
	if o.chart == nil {
		return nil
	}
	// Helm's value coalescing logs chart warnings through the standard
	// logger ("destination for ... is a table"); they are the chart's, not
	// the user's, and would interleave with the report.
	log.SetOutput(io.Discard)
	in := o.inputs
	return chart.Start(ctx, o.chart, in.ReleaseName, in.Namespace, in.RenderValues, func() (chart.Capabilities, error) {
		v, err := snap.ServerVersion()
		if err != nil {
			return chart.Capabilities{}, err
		}
		api, err := snap.APIResources()
		if err != nil {
			return chart.Capabilities{}, err
		}
		vs, err := chart.APIVersions(api.Groups, api.Resources)
		if err != nil {
			return chart.Capabilities{}, err
		}
		return chart.Capabilities{KubeVersion: v.GitVersion, APIVersions: vs}, nil
	})
}
