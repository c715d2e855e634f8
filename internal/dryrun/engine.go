package dryrun

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Limit is the most requests an Engine has in flight at once.
const Limit = 8

// Engine sends dry runs as one identity, at most Limit at once however many
// callers share it (the checks of one run do).
type Engine struct {
	// as is the REST config the engine was built from: the identity it
	// sends as (before the dry-run transport).
	as  *rest.Config
	cfg *rest.Config
	dyn dynamic.Interface
	sem chan struct{}
	// notRecorded is the first request a replay had no answer for.
	notRecorded func() error

	whoOnce sync.Once
	who     Identity
}

// New returns an engine that sends as cfg: its credentials, and its
// impersonation (cli-runtime's --as, --as-group) when it has one. Give
// another identity's config to judge what that identity may do.
func New(cfg *rest.Config) (*Engine, error) {
	dcfg, nr := Config(cfg)
	dcfg.WarningHandler = nil
	dcfg.WarningHandlerWithContext = collector{}
	dyn, err := dynamic.NewForConfig(dcfg)
	if err != nil {
		return nil, fmt.Errorf("dry-run client: %w", err)
	}
	return &Engine{as: cfg, cfg: dcfg, dyn: dyn, sem: make(chan struct{}, Limit), notRecorded: nr}, nil
}

// RESTConfig is the engine's REST config: the identity it sends as, every
// write a dry run, for a client of the caller's own (Helm's kube client).
// Requests of such a client are bounded by the caller (Go).
func (e *Engine) RESTConfig() *rest.Config { return rest.CopyConfig(e.cfg) }

// Unanswered returns the first request a replay had no recorded answer for
// (a *cluster.NotRecordedError, wrapped), nil when there was none.
func (e *Engine) Unanswered() error { return e.notRecorded() }

// Request is one object to create as a dry run.
type Request struct {
	// Resource is the object's resource (from its apiVersion and kind);
	// Namespace is "" for a cluster-scoped one.
	Resource  schema.GroupVersionResource
	Namespace string
	Object    *unstructured.Unstructured
}

// Answer is the API server's answer to one request.
type Answer struct {
	// Object is the object as the API server would store it (defaulted and
	// mutated by the admission chain); nil when it refused it.
	Object *unstructured.Unstructured
	// Err is the API server's refusal (a *apierrors.StatusError) or a
	// failure to ask.
	Err error
	// Warnings are the Warning headers of the answer, in order.
	Warnings []string
}

// Create sends each request as a dry-run create and returns the answers in
// the requests' order. The cluster-scoped requests are sent first, as Helm
// creates them first, and within each of the two groups the largest object
// first (SendOrder): a dry run changes nothing, so the order of sending
// cannot change an answer, and the API server's slowest dry runs (the
// CustomResourceDefinitions of megabytes, whose schemas it validates) then
// overlap the many small ones instead of ending the batch.
func (e *Engine) Create(ctx context.Context, reqs []Request) []Answer {
	out := make([]Answer, len(reqs))
	order := SendOrder(reqs)
	e.Go(ctx, len(reqs), func(ctx context.Context, k int) {
		i := order[k]
		r := reqs[i]
		ctx, warnings := withWarnings(ctx)
		var res dynamic.ResourceInterface = e.dyn.Resource(r.Resource)
		if r.Namespace != "" {
			res = e.dyn.Resource(r.Resource).Namespace(r.Namespace)
		}
		obj, err := res.Create(ctx, r.Object, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		out[i] = Answer{Object: obj, Err: err, Warnings: warnings.get()}
		if err != nil {
			out[i].Object = nil
		}
	})
	return out
}

// SendOrder returns the indices of reqs in the order Create sends them: the
// cluster-scoped requests (Namespace "") before the namespaced ones, each
// group by the object's size (Size) from the largest, ties in the requests'
// order.
func SendOrder(reqs []Request) []int {
	return Order(len(reqs), func(i int) bool { return reqs[i].Namespace == "" }, func(i int) int {
		if reqs[i].Object == nil {
			return 0
		}
		return Size(reqs[i].Object.Object)
	})
}

// Order returns the indices [0, n) in the order a batch of dry runs is
// best sent: those for which clusterScoped is true first, each group by
// size (bytes, Size) from the largest, ties in index order.
func Order(n int, clusterScoped func(i int) bool, size func(i int) int) []int {
	type key struct {
		i, size int
		cluster bool
	}
	keys := make([]key, n)
	for i := range keys {
		keys[i] = key{i: i, size: size(i), cluster: clusterScoped(i)}
	}
	sort.SliceStable(keys, func(a, b int) bool {
		if keys[a].cluster != keys[b].cluster {
			return keys[a].cluster
		}
		return keys[a].size > keys[b].size
	})
	out := make([]int, n)
	for k, x := range keys {
		out[k] = x.i
	}
	return out
}

// Size is an estimate of v's JSON encoding in bytes, without encoding it:
// the lengths of its strings and keys, and a few bytes per other value.
// v is an unstructured object's content (maps, slices, strings, numbers,
// booleans, nil).
func Size(v any) int {
	switch t := v.(type) {
	case map[string]any:
		n := 2
		for k, x := range t {
			n += len(k) + 4 + Size(x)
		}
		return n
	case []any:
		n := 2
		for _, x := range t {
			n += 1 + Size(x)
		}
		return n
	case string:
		return len(t) + 2
	default:
		return 4
	}
}

// Go calls f(ctx, i) for i in [0, n), at most Limit at once across the
// engine's callers, and returns when all have returned. Once ctx is done
// the calls not yet started are not made.
func (e *Engine) Go(ctx context.Context, n int, f func(ctx context.Context, i int)) {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		select {
		case e.sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		wg.Add(1)
		go func() {
			defer func() { <-e.sem; wg.Done() }()
			f(ctx, i)
		}()
	}
	wg.Wait()
}

// Identity is who the engine's requests are judged as.
type Identity struct {
	// User and Groups are the API server's answer to a SelfSubjectReview
	// (authentication.k8s.io/v1); empty when it could not tell.
	User   string
	Groups []string
	// Impersonated is true when the config impersonates (--as, --as-group):
	// User and Groups are then the impersonated ones.
	Impersonated bool
}

func (i Identity) String() string {
	if i.User == "" {
		if i.Impersonated {
			return "the impersonated user (--as)"
		}
		return "the kubeconfig's user"
	}
	s := "user " + i.User
	var groups []string
	for _, g := range i.Groups {
		if g != "system:authenticated" {
			groups = append(groups, g)
		}
	}
	if len(groups) > 0 {
		s += " (groups " + strings.Join(groups, ", ") + ")"
	}
	return s
}

// Identity asks the API server once who the engine sends as (a
// SelfSubjectReview: nothing is stored). When it cannot say (an API server
// older than 1.28, no right), the names of the impersonation are kept.
func (e *Engine) Identity(ctx context.Context) Identity {
	e.whoOnce.Do(func() {
		imp := e.as.Impersonate
		e.who = Identity{Impersonated: imp.UserName != "" || len(imp.Groups) > 0, User: imp.UserName, Groups: imp.Groups}
		kube, err := kubernetes.NewForConfig(e.cfg)
		if err != nil {
			return
		}
		e.sem <- struct{}{}
		defer func() { <-e.sem }()
		r, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err == nil && r.Status.UserInfo.Username != "" {
			e.who.User, e.who.Groups = r.Status.UserInfo.Username, r.Status.UserInfo.Groups
		}
	})
	return e.who
}

// collector hands each warning to the list in its request's context.
type collector struct{}

type warningsKey struct{}

type warningList struct {
	mu   sync.Mutex
	list []string
}

func (w *warningList) add(s string) {
	w.mu.Lock()
	w.list = append(w.list, s)
	w.mu.Unlock()
}

func (w *warningList) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}

// withWarnings returns ctx carrying a fresh list that collector fills with
// the warnings of the request made with it.
func withWarnings(ctx context.Context) (context.Context, *warningList) {
	l := &warningList{}
	return context.WithValue(ctx, warningsKey{}, l), l
}

func (collector) HandleWarningHeaderWithContext(ctx context.Context, code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	if l, ok := ctx.Value(warningsKey{}).(*warningList); ok {
		l.add(text)
	}
}
