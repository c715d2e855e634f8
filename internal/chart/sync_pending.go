package chart

import (
	"context"

	rspb "helm.sh/helm/v3/pkg/release"
)

// StartUpgradeOrSync is StartUpgrade for a runtime Argo CD may sync: sync
// is called once, in the background, for what Argo CD deployed; when it
// returns a base the prediction is Argo CD's (PrepareSync of the loaded
// chart over it), and when it returns nil, Helm's (PrepareUpgrade over
// revisions). The metadata Pending reports is the gitops-runtime chart's,
// also when the loaded chart is an umbrella chart depending on it.
func StartUpgradeOrSync(ctx context.Context, l *Loader, name, namespace string, vals map[string]any, opts UpgradeValues,
	revisions func() ([]*rspb.Release, error), sync func() (*SyncBase, error), caps func() (Capabilities, error)) *Pending {
	p := &Pending{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		c, ok := p.load(ctx, l)
		if !ok {
			return
		}
		base, err := sync()
		if err != nil {
			p.err = err
			return
		}
		cp, err := caps()
		if err != nil {
			p.err = err
			return
		}
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
	}()
	return p
}
