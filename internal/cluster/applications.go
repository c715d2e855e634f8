package cluster

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ApplicationResource is argoproj.io/v1alpha1 applications: the only
// version Argo CD serves (https://argo-cd.readthedocs.io/en/stable/operator-manual/declarative-setup/).
var ApplicationResource = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}

// ArgoApplications lists the Argo CD Applications of every namespace once
// per snapshot (dynamic client, paginated), whole: internal/argocd reads
// them. served is false when the cluster serves no argoproj.io/v1alpha1
// applications (no Argo CD CRDs).
func (s *Snapshot) ArgoApplications() (apps []*unstructured.Unstructured, served bool, err error) {
	return listServed(s, "argo/applications", "applications.argoproj.io", "", []schema.GroupVersionResource{ApplicationResource},
		func(u *unstructured.Unstructured) *unstructured.Unstructured { return u.DeepCopy() })
}

// LiveObjects lists every object of resource gvr in namespace ("" for a
// cluster-scoped kind) in full, with the dynamic client (paginated), once
// per snapshot, keyed by name. A kind the cluster does not serve is an
// empty map. The callers read a handful of kinds in one namespace (the
// runtime's Application's inventory), not the cluster.
func (s *Snapshot) LiveObjects(gvr schema.GroupVersionResource, namespace string) (map[string]*unstructured.Unstructured, error) {
	return Memo(s, "live/"+gvr.String()+"/"+namespace, func() (map[string]*unstructured.Unstructured, error) {
		out := map[string]*unstructured.Unstructured{}
		err := each(s.ctx, gvr.Resource, namespace, metav1.ListOptions{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Dynamic.Resource(gvr).Namespace(namespace).List(ctx, o)
			},
			func(obj runtime.Object) error {
				if u, ok := obj.(*unstructured.Unstructured); ok {
					out[u.GetName()] = u.DeepCopy()
				}
				return nil
			})
		if err != nil && apierrors.IsNotFound(err) {
			return out, nil
		}
		return out, err
	})
}

// LiveObject GETs one object of resource gvr in full with the dynamic
// client, once per snapshot; found is false when it does not exist (a
// cluster-scoped object of an inventory: one GET, where a list would read
// every CRD or ClusterRole of the cluster).
func (s *Snapshot) LiveObject(gvr schema.GroupVersionResource, namespace, name string) (u *unstructured.Unstructured, found bool, err error) {
	return getOne(s, "live/"+gvr.String()+"/"+namespace+"/"+name, gvr.Resource+"/"+name, namespace, name,
		func(ctx context.Context, name string, opts metav1.GetOptions) (*unstructured.Unstructured, error) {
			return s.clients.Dynamic.Resource(gvr).Namespace(namespace).Get(ctx, name, opts)
		},
		func(u *unstructured.Unstructured) *unstructured.Unstructured { return u })
}
