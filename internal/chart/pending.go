package chart

import (
	"context"
	"sync"

	"helm.sh/helm/v3/pkg/action"
	helmchart "helm.sh/helm/v3/pkg/chart"
	rspb "helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/argocd"
)

// LoadError is a chart that could not be located, pulled or loaded: the
// chart-based checks skip with it.
type LoadError struct{ Err error }

func (e *LoadError) Error() string { return e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// Loader loads a chart once, however many runs ask (--wait rounds, the
// re-check after --fix).
type Loader struct {
	once  sync.Once
	src   Source
	chart *helmchart.Chart
	err   error
}

// NewLoader returns a loader of src; nothing is read until Get.
func NewLoader(src Source) *Loader { return &Loader{src: src} }

// Source returns what the loader loads.
func (l *Loader) Source() Source { return l.src }

// Get loads the chart on the first call and returns the same result after;
// the error is *LoadError.
func (l *Loader) Get(ctx context.Context) (*helmchart.Chart, error) {
	l.once.Do(func() {
		l.chart, l.err = Load(ctx, l.src)
		if l.err != nil {
			l.err = &LoadError{Err: l.err}
		}
	})
	return l.chart, l.err
}

// Pending is a render under way: started once per run, concurrently with
// the cluster reads, and waited for by the checks that read it.
type Pending struct {
	done chan struct{}
	r    *Rendering
	err  error
	// up is the upgrade prediction of StartUpgrade (nil for Start).
	up *Upgrade
	// meta is the loaded chart's metadata, set once it loaded; declared
	// are the kubeVersions of the loaded chart and all its dependencies.
	meta     *helmchart.Metadata
	declared []KubeVersionRule
	// chart, caps, vals, name and ns are what the run rendered (the
	// target's user values for an upgrade), for Rerender.
	chart    *helmchart.Chart
	caps     Capabilities
	vals     map[string]any
	name, ns string
	// ignore decides the values the chart ignores (Ignored), once.
	ignore struct {
		once sync.Once
		run  func(ctx context.Context) (*Ignored, error)
		v    *Ignored
		err  error
	}
}

// Ignored waits for the run and decides, by Helm's render, which values
// the user gives the chart it ignores (IgnoredValues; Upgrade.IgnoredValues
// for an upgrade), once for every caller. The errors are Wait's.
func (p *Pending) Ignored(ctx context.Context) (*Ignored, error) {
	if _, err := p.Wait(ctx); err != nil {
		return nil, err
	}
	p.decideIgnored(ctx)
	return p.ignore.v, p.ignore.err
}

// Start loads (through l) and renders the chart in the background. caps is
// called once, from the background goroutine, for the cluster's
// capabilities (its error is returned by Wait as it is).
func Start(ctx context.Context, l *Loader, releaseName, namespace string, vals map[string]any, caps func() (Capabilities, error)) *Pending {
	return StartDeciding(ctx, l, releaseName, namespace, vals, caps, nil, false)
}

// StartDeciding is Start for a run whose user gave values. With early, it
// also starts, beside the render, deciding which of them the chart ignores
// (what Ignored returns), so that the renders that do not compare against
// the run's own render use the time the run waits for the cluster; without
// it Ignored decides when first called (a run none of whose checks reads
// it never pays for those renders). judge says which leaves of vals (by
// key path) are the user's to judge: those a values file or --set gave,
// not the keys the plugin's shortcut flags write. With judge nil nothing
// starts early and Ignored judges every leaf.
func StartDeciding(ctx context.Context, l *Loader, releaseName, namespace string, vals map[string]any, caps func() (Capabilities, error), judge func(key []string) bool, early bool) *Pending {
	return start(ctx, l, nil, caps, func(p *Pending, c *helmchart.Chart, cp Capabilities) {
		p.chart, p.caps, p.vals, p.name, p.ns = c, cp, vals, releaseName, namespace
		rendered := make(chan struct{})
		var manifest string
		var renderErr error
		p.ignore.run = func(ctx context.Context) (*Ignored, error) {
			return ignoredValues(ctx, c, releaseName, namespace, vals, cp, func() (string, error) {
				select {
				case <-rendered:
					return manifest, renderErr
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}, judge)
		}
		if judge != nil && early {
			go p.decideIgnored(ctx)
		}
		p.r, p.err = Render(ctx, c, releaseName, namespace, vals, cp)
		if p.r != nil {
			manifest = p.r.releaseManifest
		}
		renderErr = p.err
		close(rendered)
	})
}

// decideIgnored decides the ignored values once (Ignored's result).
func (p *Pending) decideIgnored(ctx context.Context) {
	p.ignore.once.Do(func() {
		switch {
		case p.up != nil:
			p.ignore.v, p.ignore.err = p.up.IgnoredValues(ctx)
		case p.ignore.run != nil:
			p.ignore.v, p.ignore.err = p.ignore.run(ctx)
		default:
			p.ignore.v = &Ignored{}
		}
	})
}

// start runs, in the background, what every Pending does first: load the
// chart through l, call before (if not nil: a step whose error ends the
// run before the capabilities are asked for), read the capabilities, and
// then the mode's step with both. An error of any of these is the run's.
func start(ctx context.Context, l *Loader, before func() error, caps func() (Capabilities, error), step func(p *Pending, c *helmchart.Chart, cp Capabilities)) *Pending {
	p := &Pending{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		c, ok := p.load(ctx, l)
		if !ok {
			return
		}
		if before != nil {
			if p.err = before(); p.err != nil {
				return
			}
		}
		cp, err := caps()
		if err != nil {
			p.err = err
			return
		}
		step(p, c, cp)
	}()
	return p
}

// StartUpgrade loads (through l) and predicts `helm upgrade NAME CHART -n
// NAMESPACE` with vals and opts (PrepareUpgrade) in the background;
// revisions is called once for the release's revisions and caps for the
// cluster's capabilities. Wait returns the target's rendering, Upgrade the
// whole prediction.
func StartUpgrade(ctx context.Context, l *Loader, name, namespace string, vals map[string]any, opts UpgradeValues, revisions func() ([]*rspb.Release, error), caps func() (Capabilities, error)) *Pending {
	return StartUpgradeOrSync(ctx, l, name, namespace, vals, opts, revisions, func() (*argocd.SyncBase, error) { return nil, nil }, caps)
}

// Metadata waits for the run and returns the loaded chart's metadata
// (name, version, kubeVersion, ...) whether or not it rendered; the error is
// *LoadError when no chart loaded.
func (p *Pending) Metadata(ctx context.Context) (*helmchart.Metadata, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if p.meta == nil {
		return nil, p.err
	}
	return p.meta, nil
}

// DeclaredKubeVersions waits for the run and returns the kubeVersion
// constraints of the loaded chart and of every dependency, enabled or not
// (KubeVersionRules), whether or not it rendered; the error is *LoadError
// when no chart loaded.
func (p *Pending) DeclaredKubeVersions(ctx context.Context) ([]KubeVersionRule, error) {
	if _, err := p.Metadata(ctx); err != nil {
		return nil, err
	}
	return p.declared, nil
}

// Ready returns the rendering when it is done and succeeded, without
// waiting.
func (p *Pending) Ready() (*Rendering, bool) {
	select {
	case <-p.done:
		return p.r, p.r != nil
	default:
		return nil, false
	}
}

// Upgrade waits for StartUpgrade's prediction; the errors are Wait's and
// *ReleaseError. It returns nil and no error for a Pending of Start.
func (p *Pending) Upgrade(ctx context.Context) (*Upgrade, error) {
	if _, err := p.Wait(ctx); err != nil {
		return nil, err
	}
	return p.up, nil
}

// Wait returns the rendering, or *LoadError (no chart), *RenderError (the
// chart refuses the values) or the capabilities' error; ctx bounds the wait.
func (p *Pending) Wait(ctx context.Context) (*Rendering, error) {
	select {
	case <-p.done:
		return p.r, p.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// APIVersions builds the capability list Helm builds from a discovery
// document, with Helm's own action.GetVersionSet ("apps/v1" and
// "apps/v1/Deployment" for each served kind).
func APIVersions(groups []*metav1.APIGroup, resources []*metav1.APIResourceList) ([]string, error) {
	vs, err := action.GetVersionSet(discoveryDoc{groups, resources})
	return vs, err
}

type discoveryDoc struct {
	groups    []*metav1.APIGroup
	resources []*metav1.APIResourceList
}

func (d discoveryDoc) ServerResourcesForGroupVersion(string) (*metav1.APIResourceList, error) {
	return nil, nil
}

func (d discoveryDoc) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	return d.groups, d.resources, nil
}

func (d discoveryDoc) ServerPreferredResources() ([]*metav1.APIResourceList, error) {
	return d.resources, nil
}

func (d discoveryDoc) ServerPreferredNamespacedResources() ([]*metav1.APIResourceList, error) {
	return d.resources, nil
}

// FailedLoader returns a loader whose every Get fails with err (a
// *LoadError): a replayed run whose recorded chart could not be loaded.
func FailedLoader(src Source, err error) *Loader {
	l := &Loader{src: src, err: &LoadError{Err: err}}
	l.once.Do(func() {})
	return l
}

// load loads the chart through l for the run and keeps its metadata (the
// gitops-runtime chart's, also inside an umbrella chart) and kubeVersion
// rules; false, with p.err set, when it could not be loaded.
func (p *Pending) load(ctx context.Context, l *Loader) (*helmchart.Chart, bool) {
	c, err := l.Get(ctx)
	if err != nil {
		p.err = err
		return nil, false
	}
	p.meta, p.declared = RuntimeChart(c).Metadata, KubeVersionRules(c)
	return c, true
}
