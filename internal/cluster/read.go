package cluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The snapshot's two readers. Every list of a kind and every GET of one
// object goes through them, so paging, memoising, error wrapping and the
// not-found convention are written once.

// listAll pages through list (see each) and returns from(item) for every
// item, which must be a T. resource and namespace name the list in a
// ListError ("" namespace: all namespaces).
func listAll[T runtime.Object, R any](ctx context.Context, resource, namespace string, opts metav1.ListOptions,
	list func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error), from func(T) R) ([]R, error) {
	var out []R
	err := each(ctx, resource, namespace, opts, list, func(obj runtime.Object) error {
		o, ok := obj.(T)
		if !ok {
			return fmt.Errorf("unexpected %T in %s list", obj, resource)
		}
		out = append(out, from(o))
		return nil
	})
	return out, err
}

// eachMeta pages through a metadata-only list (PartialObjectMetadata) of
// gvr in namespace ("" = all namespaces, or a cluster-scoped kind) and
// calls fn for every object; fn must copy what it keeps.
func (s *Snapshot) eachMeta(gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions, fn func(m *metav1.PartialObjectMetadata)) error {
	return each(s.ctx, gvr.Resource, namespace, opts,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return s.clients.Metadata.Resource(gvr).Namespace(namespace).List(ctx, o)
		},
		func(obj runtime.Object) error {
			m, ok := obj.(*metav1.PartialObjectMetadata)
			if !ok {
				return fmt.Errorf("unexpected %T in %s list", obj, gvr.Resource)
			}
			fn(m)
			return nil
		})
}

// listAllStreamed is listAll read through eachStreamed: one streaming list
// when the server can, else pages.
func listAllStreamed[T runtime.Object, R any](s *Snapshot, resource, namespace string, opts metav1.ListOptions,
	stream streamFunc,
	list func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error), from func(T) R) ([]R, error) {
	var out []R
	err := s.eachStreamed(resource, namespace, opts, stream, list, func(obj runtime.Object) error {
		o, ok := obj.(T)
		if !ok {
			return fmt.Errorf("unexpected %T in %s list", obj, resource)
		}
		out = append(out, from(o))
		return nil
	}, func() { out = nil })
	return out, err
}

// getOne GETs one object once per snapshot (memo key key) and returns
// from(object). The not-found convention: an object that does not exist is
// not an error, found is false and the value is R's zero value. Any other
// error is a *ListError with Verb "get" and resource (e.g. "services/name").
func getOne[T any, R any](s *Snapshot, key, resource, namespace, name string,
	get func(ctx context.Context, name string, opts metav1.GetOptions) (T, error), from func(T) R) (v R, found bool, err error) {
	type res struct {
		v     R
		found bool
	}
	r, err := Memo(s, key, func() (res, error) {
		obj, err := get(s.ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return res{}, nil
		}
		if err != nil {
			return res{}, &ListError{Verb: "get", Resource: resource, Namespace: namespace, Err: err}
		}
		return res{v: from(obj), found: true}, nil
	})
	return r.v, r.found, err
}

// listServed lists a custom resource of one namespace once per snapshot
// (memo key key) with the dynamic client, trying gvrs in turn: the first
// version the API server serves is listed (paginated) and from(item)
// returned for each item. served is false, with no error, when none of them
// is served (the CRD is not installed).
func listServed[R any](s *Snapshot, key, resource, namespace string, gvrs []schema.GroupVersionResource,
	from func(*unstructured.Unstructured) R) (items []R, served bool, err error) {
	type res struct {
		items  []R
		served bool
	}
	r, err := Memo(s, key, func() (res, error) {
		for _, gvr := range gvrs {
			out, err := listAll(s.ctx, resource, namespace, metav1.ListOptions{},
				func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					return s.clients.Dynamic.Resource(gvr).Namespace(namespace).List(ctx, o)
				}, from)
			if err != nil && apierrors.IsNotFound(err) {
				continue
			}
			return res{items: out, served: true}, err
		}
		return res{}, nil
	})
	return r.items, r.served, err
}
