package cluster

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// DefaultRequestTimeout bounds every API request when the user gave no
// --request-timeout, so that an unreachable or hung API server never hangs
// the plugin.
const DefaultRequestTimeout = 30 * time.Second

// Clients are the API clients of one run, built once from one REST config.
// Tests may build a Clients value with fake clientsets directly.
type Clients struct {
	Kube      kubernetes.Interface
	Metadata  metadata.Interface
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
	// Config is the REST config the clients were built from (nil with fakes).
	Config *rest.Config
	// Requests counts the HTTP requests sent to the API server (nil with fakes).
	Requests *atomic.Int64
	// Pages counts the requests among Requests that fetch a further page of a
	// paginated LIST (they carry a continue token); these grow with the size
	// of the cluster, the others do not (nil with fakes).
	Pages *atomic.Int64
}

// NewClients builds the clients for cfg. It raises client-side QPS and burst
// (the defaults of 5/10 throttle a run that issues a few dozen requests), uses
// protobuf for built-in kinds (several times cheaper to decode than JSON on
// large lists), silences API deprecation warnings (they would be mixed into the
// report) and counts requests.
func NewClients(cfg *rest.Config) (*Clients, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultRequestTimeout
	}
	if cfg.QPS == 0 {
		cfg.QPS = 100
	}
	if cfg.Burst == 0 {
		cfg.Burst = 200
	}
	cfg.WarningHandler = rest.NoWarnings{}
	var counter, pages atomic.Int64
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return countingTransport{next: rt, n: &counter, pages: &pages}
	})

	protoCfg := rest.CopyConfig(cfg)
	protoCfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	protoCfg.ContentType = runtime.ContentTypeProtobuf

	kube, err := kubernetes.NewForConfig(protoCfg)
	if err != nil {
		return nil, fmt.Errorf("building Kubernetes client: %w", err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building metadata client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building discovery client: %w", err)
	}
	return &Clients{Kube: kube, Metadata: meta, Dynamic: dyn, Discovery: disc, Config: cfg, Requests: &counter, Pages: &pages}, nil
}

type countingTransport struct {
	next     http.RoundTripper
	n, pages *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	if r.URL != nil && r.URL.Query().Get("continue") != "" {
		c.pages.Add(1)
	}
	return c.next.RoundTrip(r)
}

// CancelRequest passes a cancellation to the wrapped transport when it can
// take one, so that client-go never falls back to logging "unable to cancel
// request" for this wrapper.
func (c countingTransport) CancelRequest(r *http.Request) {
	if cr, ok := c.next.(interface{ CancelRequest(*http.Request) }); ok {
		cr.CancelRequest(r)
	}
}

// WrappedRoundTripper lets client-go's utilities see through the wrapper.
func (c countingTransport) WrappedRoundTripper() http.RoundTripper { return c.next }
