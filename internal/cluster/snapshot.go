package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unique"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/tools/pager"
)

// PageSize is the number of items requested per LIST page (limit=500), the
// same page size kubectl and client-go's reflector use.
const PageSize = 500

// lastApplied is the kubectl annotation that repeats a whole object; it is
// dropped from every summary to keep memory flat.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Snapshot is a read-only, lazily filled view of the cluster shared by all
// checks of one run. Each accessor lists its kind at most once per Snapshot,
// whichever check asks first; concurrent callers wait for the same result.
// Returned slices and maps are shared: callers must not modify them.
type Snapshot struct {
	ctx     context.Context
	clients *Clients

	version      lazy[*version.Info]
	nodes        lazy[[]Node]
	deployments  lazy[[]Workload]
	statefulSets lazy[[]Workload]
	daemonSets   lazy[[]Workload]
	crds         lazy[[]CRD]

	mu    sync.Mutex
	memos map[string]*lazy[any]

	// fallbackNS, when set, is read instead of all namespaces when a
	// cluster-wide list is forbidden; scoped names the resources so read.
	fallbackNS string
	scoped     map[string]bool
	// whole makes Objects read whole objects (SetWholeLists).
	whole bool
}

// SetNamespaceFallback makes the cluster-wide lists of Deployments,
// StatefulSets, DaemonSets and Helm release Secrets read namespace ns alone
// when listing them in all namespaces is forbidden (a user with rights in the
// runtime namespace only). Call it before the first list. Scoped says which
// lists were narrowed, so that checks can say what they did not see.
func (s *Snapshot) SetNamespaceFallback(ns string) { s.fallbackNS = ns }

// Scoped returns the namespace that resource (plural: "deployments",
// "secrets") was read from instead of all namespaces, and whether it was.
func (s *Snapshot) Scoped(resource string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fallbackNS, s.scoped[resource]
}

// listAllOrFallback runs list for all namespaces and, when that is forbidden
// and a fallback namespace is set, again for that namespace alone (reset
// first drops what the failed attempt kept).
func (s *Snapshot) listAllOrFallback(resource string, reset func(), list func(namespace string) error) error {
	err := list(metav1.NamespaceAll)
	if err == nil || s.fallbackNS == "" || !IsForbidden(err) {
		return err
	}
	reset()
	if err := list(s.fallbackNS); err != nil {
		return err
	}
	s.mu.Lock()
	if s.scoped == nil {
		s.scoped = map[string]bool{}
	}
	s.scoped[resource] = true
	s.mu.Unlock()
	return nil
}

// NewSnapshot returns an empty snapshot that reads through clients. ctx bounds
// every list the snapshot makes (it is the run's context, not one check's, so
// that a check timing out does not poison a list another check shares).
func NewSnapshot(ctx context.Context, clients *Clients) *Snapshot {
	return &Snapshot{ctx: ctx, clients: clients, memos: map[string]*lazy[any]{}}
}

// Clients returns the clients the snapshot reads through, for the few checks
// that need a request of their own (SelfSubjectAccessReview, a GET by name).
func (s *Snapshot) Clients() *Clients { return s.clients }

// Context returns the run context the snapshot lists with.
func (s *Snapshot) Context() context.Context { return s.ctx }

type lazy[T any] struct {
	once sync.Once
	v    T
	err  error
}

func (l *lazy[T]) get(f func() (T, error)) (T, error) {
	l.once.Do(func() { l.v, l.err = f() })
	return l.v, l.err
}

// Memo computes f once per snapshot and key and shares its result, so that
// checks can share derived facts (say, "the controller of IngressClass nginx")
// without depending on each other's run order. Keys are namespaced by the
// caller, e.g. "ingress/controller/nginx".
func Memo[T any](s *Snapshot, key string, f func() (T, error)) (T, error) {
	s.mu.Lock()
	l, ok := s.memos[key]
	if !ok {
		l = &lazy[any]{}
		s.memos[key] = l
	}
	s.mu.Unlock()
	v, err := l.get(func() (any, error) { return f() })
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}

// ServerVersion returns the API server's /version, fetched once.
func (s *Snapshot) ServerVersion() (*version.Info, error) {
	return s.version.get(func() (*version.Info, error) {
		v, err := s.clients.Discovery.ServerVersion()
		if err != nil {
			return nil, &ListError{Verb: "get", Resource: "/version", Err: err}
		}
		return v, nil
	})
}

// ListError is an API error met while reading the cluster, with what was being
// read so that a report can say "no permission to list nodes".
type ListError struct {
	Verb      string // "list" or "get"
	Resource  string // plural resource name, e.g. "nodes"
	Namespace string // "" for all namespaces or cluster-scoped
	Err       error
}

func (e *ListError) Error() string {
	return fmt.Sprintf("%s %s%s: %v", e.Verb, e.Resource, e.where(), e.Err)
}

func (e *ListError) where() string {
	if e.Namespace == "" {
		return ""
	}
	return " in namespace " + e.Namespace
}

func (e *ListError) Unwrap() error { return e.Err }

// Forbidden reports whether the API server refused the request for lack of
// permission (HTTP 403).
func (e *ListError) Forbidden() bool { return apierrors.IsForbidden(e.Err) }

// Reason is the phrase a skipped check shows: "no permission to list nodes".
func (e *ListError) Reason() string {
	return fmt.Sprintf("no permission to %s %s%s", e.Verb, e.Resource, e.where())
}

// IsForbidden reports whether err is, or wraps, a 403 from the API server.
func IsForbidden(err error) bool {
	var le *ListError
	if errors.As(err, &le) {
		return le.Forbidden()
	}
	return apierrors.IsForbidden(err)
}

// each pages through a list with client-go's pager and calls fn for every
// item. Only the current page is held in memory; fn must copy what it keeps.
func each(ctx context.Context, resource, namespace string, opts metav1.ListOptions,
	list func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error),
	fn func(obj runtime.Object) error) error {
	p := pager.New(list)
	p.PageSize = PageSize
	p.PageBufferSize = 1
	if err := p.EachListItem(ctx, opts, fn); err != nil {
		return &ListError{Verb: "list", Resource: resource, Namespace: namespace, Err: err}
	}
	return nil
}

// copyMap returns m without kubectl's last-applied annotation; nil stays
// nil. Keys are interned (unique.Make): label and annotation keys repeat on
// every object of a kind, and summaries of thousands of objects would
// otherwise each hold their own copy.
func copyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if k == lastApplied {
			continue
		}
		out[unique.Make(k).Value()] = v
	}
	return out
}
