package chart

import (
	"context"

	helmchart "helm.sh/helm/v3/pkg/chart"
	rspb "helm.sh/helm/v3/pkg/release"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/argocd"
)

// StartUpgradeOrSync is StartUpgrade for a runtime Argo CD may sync: sync
// is called once, in the background, for what Argo CD deployed; when it
// returns a base the prediction is Argo CD's (PrepareSync of the loaded
// chart over it), and when it returns nil, Helm's (PrepareUpgrade over
// revisions). The metadata Pending reports is the gitops-runtime chart's,
// also when the loaded chart is an umbrella chart depending on it.
func StartUpgradeOrSync(ctx context.Context, l *Loader, name, namespace string, vals map[string]any, opts UpgradeValues,
	revisions func() ([]*rspb.Release, error), sync func() (*argocd.SyncBase, error), caps func() (Capabilities, error)) *Pending {
	var base *argocd.SyncBase
	return start(ctx, l, func() (err error) {
		base, err = sync()
		return err
	}, caps, func(p *Pending, c *helmchart.Chart, cp Capabilities) {
		if base != nil {
			p.up, p.err = PrepareSync(ctx, c, *base, cp)
		} else {
			revs, err := revisions()
			if err != nil {
				p.err = err
				return
			}
			p.up, p.err = PrepareUpgrade(ctx, c, name, namespace, revs, vals, opts, cp)
		}
		if p.up != nil {
			p.r = p.up.Target
			p.chart, p.caps, p.vals, p.name, p.ns = c, cp, p.up.Values, name, namespace
		}
	})
}
