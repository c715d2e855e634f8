package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// APIResources is the cluster's discovery document: every group/version and
// its resources, read once per snapshot (ServerGroupsAndResources; with
// aggregated discovery that is two requests).
type APIResources struct {
	Groups    []*metav1.APIGroup
	Resources []*metav1.APIResourceList
}

// APIResources reads the discovery document once per snapshot. A partial
// answer (some aggregated API unavailable) is returned with what was read.
func (s *Snapshot) APIResources() (*APIResources, error) {
	return Memo(s, "discovery/resources", func() (*APIResources, error) {
		groups, resources, err := s.clients.Discovery.ServerGroupsAndResources()
		if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
			return nil, &ListError{Verb: "get", Resource: "/apis (discovery)", Err: err}
		}
		return &APIResources{Groups: groups, Resources: resources}, nil
	})
}

// Resource resolves a kind at an apiVersion ("apps/v1", "Deployment") to its
// resource and scope. ok is false when the cluster does not serve the kind
// (for example HTTPRoute without the Gateway API CRDs).
func (a *APIResources) Resource(apiVersion, kind string) (gvr schema.GroupVersionResource, namespaced, ok bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return gvr, false, false
	}
	for _, l := range a.Resources {
		if l.GroupVersion != apiVersion {
			continue
		}
		for _, r := range l.APIResources {
			if r.Kind == kind && !strings.Contains(r.Name, "/") {
				return gv.WithResource(r.Name), r.Namespaced, true
			}
		}
	}
	return gvr, false, false
}

// Objects lists every object of resource gvr (metadata only, paginated) in
// namespace ("" = cluster-wide or cluster-scoped), once per snapshot, keyed
// by namespace/name.
func (s *Snapshot) Objects(gvr schema.GroupVersionResource, namespace string) (map[string]ObjectMeta, error) {
	return Memo(s, "objects/"+gvr.String()+"/"+namespace, func() (map[string]ObjectMeta, error) {
		out := map[string]ObjectMeta{}
		if gvr == CRDResource {
			// Already listed, metadata-only, by CRDs: never list a kind twice.
			crds, err := s.CRDs()
			if err != nil {
				return nil, err
			}
			for _, c := range crds {
				out["/"+c.Name] = ObjectMeta{Name: c.Name, Labels: c.Labels, Annotations: c.Annotations, ResourceVersion: c.ResourceVersion}
			}
			return out, nil
		}
		if out, ok := s.objectsFromWorkloads(gvr, namespace); ok {
			return out, nil
		}
		if s.whole && !NotWhole(gvr.GroupResource()) {
			return s.objectsFromWhole(gvr, namespace)
		}
		if out, ok, err := s.objectsFromNetworkPolicies(gvr, namespace); ok {
			return out, err
		}
		err := s.eachMeta(gvr, namespace, metav1.ListOptions{}, func(m *metav1.PartialObjectMetadata) {
			out[m.Namespace+"/"+m.Name] = ObjectMeta{
				Namespace: m.Namespace, Name: m.Name,
				Labels: copyMap(m.Labels), Annotations: copyMap(m.Annotations),
				ResourceVersion: m.ResourceVersion,
			}
		})
		return out, err
	})
}

// objectsFromWorkloads answers Objects for Deployments and StatefulSets
// from the snapshot's own lists of them (never list a kind twice); ok is
// false when those lists failed or do not cover namespace.
func (s *Snapshot) objectsFromWorkloads(gvr schema.GroupVersionResource, namespace string) (map[string]ObjectMeta, bool) {
	var (
		ws  []Workload
		err error
	)
	switch gvr {
	case schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}:
		ws, err = s.Deployments()
	case schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}:
		ws, err = s.StatefulSets()
	default:
		return nil, false
	}
	if err != nil {
		return nil, false
	}
	if ns, scoped := s.Scoped(gvr.Resource); scoped && ns != namespace {
		return nil, false
	}
	out := map[string]ObjectMeta{}
	for _, w := range ws {
		if namespace == "" || w.Namespace == namespace {
			out[w.Namespace+"/"+w.Name] = ObjectMeta{Namespace: w.Namespace, Name: w.Name, Labels: w.Labels, Annotations: w.Annotations, ResourceVersion: w.ResourceVersion}
		}
	}
	return out, true
}

// NotWhole are the kinds ObjectsJSON does not list: a LIST of them would
// carry much more than a run needs (every CRD of the cluster, whole; every
// Secret of a namespace, Helm's release records among them).
func NotWhole(gr schema.GroupResource) bool {
	return gr == schema.GroupResource{Resource: "secrets"} || gr == CRDResource.GroupResource()
}

// SetWholeLists makes Objects read the objects whole (ObjectsJSON) rather
// than their metadata, for the kinds ObjectsJSON lists: a run that needs
// them whole (an upgrade's dry runs, whose three-way merges read the live
// objects) then lists each kind once. Call it before the first list.
func (s *Snapshot) SetWholeLists() { s.whole = true }

// ObjectsJSON lists every object of resource gvr in namespace ("" =
// cluster-wide or cluster-scoped) whole, once per snapshot: each object's
// JSON (apiVersion and kind set) by namespace/name. It refuses the kinds of
// NotWhole.
func (s *Snapshot) ObjectsJSON(gvr schema.GroupVersionResource, namespace string) (map[string][]byte, error) {
	if NotWhole(gvr.GroupResource()) {
		return nil, fmt.Errorf("%s are not listed whole", gvr.Resource)
	}
	return Memo(s, "objects-whole/"+gvr.String()+"/"+namespace, func() (map[string][]byte, error) {
		out := map[string][]byte{}
		err := each(s.ctx, gvr.Resource, namespace, metav1.ListOptions{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Dynamic.Resource(gvr).Namespace(namespace).List(ctx, o)
			},
			func(obj runtime.Object) error {
				u, ok := obj.(*unstructured.Unstructured)
				if !ok {
					return fmt.Errorf("unexpected %T in %s list", obj, gvr.Resource)
				}
				b, err := u.MarshalJSON()
				if err != nil {
					return err
				}
				out[u.GetNamespace()+"/"+u.GetName()] = b
				return nil
			})
		return out, err
	})
}

// objectsFromWhole answers Objects from ObjectsJSON.
func (s *Snapshot) objectsFromWhole(gvr schema.GroupVersionResource, namespace string) (map[string]ObjectMeta, error) {
	whole, err := s.ObjectsJSON(gvr, namespace)
	if err != nil {
		return nil, err
	}
	out := make(map[string]ObjectMeta, len(whole))
	for k, b := range whole {
		var m metav1.PartialObjectMetadata
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		out[k] = ObjectMeta{Namespace: m.Namespace, Name: m.Name, Labels: copyMap(m.Labels), Annotations: copyMap(m.Annotations), ResourceVersion: m.ResourceVersion}
	}
	return out, nil
}
