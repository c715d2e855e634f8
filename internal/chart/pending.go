package chart

import (
	"context"
	"sync"

	"helm.sh/helm/v3/pkg/action"
	helmchart "helm.sh/helm/v3/pkg/chart"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
}

// Start loads (through l) and renders the chart in the background. caps is
// called once, from the background goroutine, for the cluster's
// capabilities (its error is returned by Wait as it is).
func Start(ctx context.Context, l *Loader, releaseName, namespace string, vals map[string]any, caps func() (Capabilities, error)) *Pending {
	p := &Pending{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		c, err := l.Get(ctx)
		if err != nil {
			p.err = err
			return
		}
		cp, err := caps()
		if err != nil {
			p.err = err
			return
		}
		p.r, p.err = Render(ctx, c, releaseName, namespace, vals, cp)
	}()
	return p
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
