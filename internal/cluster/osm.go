package cluster

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Open Service Mesh's API (https://github.com/openservicemesh/osm,
// pkg/apis/policy/v1alpha1/ingress_backend.go and cmd/osm-bootstrap/crds/).
const (
	// OSMIngressBackendCRD is the IngressBackend CRD (OSM v0.10 and later).
	OSMIngressBackendCRD = "ingressbackends.policy.openservicemesh.io"
	// OSMMeshConfigCRD is the MeshConfig CRD (OSM v0.9 and later).
	OSMMeshConfigCRD = "meshconfigs.config.openservicemesh.io"
	// OSMMonitoredByLabel marks a namespace OSM monitors; its value is the
	// mesh name.
	OSMMonitoredByLabel = "openservicemesh.io/monitored-by"
)

// OSMIngressBackendGVR is the IngressBackend resource.
var OSMIngressBackendGVR = schema.GroupVersionResource{Group: "policy.openservicemesh.io", Version: "v1alpha1", Resource: "ingressbackends"}

// OSMBackend is one spec.backends[] entry of an IngressBackend: the backend
// Service's name and its target port (number, protocol).
type OSMBackend struct {
	Name     string
	Port     int64
	Protocol string
}

// OSMSource is one spec.sources[] entry: Kind is Service, IPRange or
// AuthenticatedPrincipal; Name is the Service name, the CIDR or the
// principal.
type OSMSource struct {
	Kind, Name, Namespace string
}

// OSMIngressBackend summarises an IngressBackend.
type OSMIngressBackend struct {
	Namespace, Name string
	Backends        []OSMBackend
	Sources         []OSMSource
}

// OSMIngressBackends lists the IngressBackends of one namespace once per
// snapshot. served is false when the policy.openservicemesh.io/v1alpha1 API
// is not served (OSM older than v0.10, or not installed).
func (s *Snapshot) OSMIngressBackends(namespace string) (ibs []OSMIngressBackend, served bool, err error) {
	return listServed(s, "osm/ingressbackends/"+namespace, OSMIngressBackendCRD, namespace,
		[]schema.GroupVersionResource{OSMIngressBackendGVR}, OSMIngressBackendFrom)
}

// OSMIngressBackendFrom summarises an unstructured IngressBackend; fields of
// unexpected types are ignored.
func OSMIngressBackendFrom(u *unstructured.Unstructured) OSMIngressBackend {
	ib := OSMIngressBackend{Namespace: u.GetNamespace(), Name: u.GetName()}
	backends, _, _ := unstructured.NestedSlice(u.Object, "spec", "backends")
	for _, b := range backends {
		bm, ok := b.(map[string]any)
		if !ok {
			continue
		}
		var be OSMBackend
		be.Name, _, _ = unstructured.NestedString(bm, "name")
		n, _, _ := unstructured.NestedFieldNoCopy(bm, "port", "number")
		be.Port = toInt64(n)
		be.Protocol, _, _ = unstructured.NestedString(bm, "port", "protocol")
		ib.Backends = append(ib.Backends, be)
	}
	sources, _, _ := unstructured.NestedSlice(u.Object, "spec", "sources")
	for _, src := range sources {
		sm, ok := src.(map[string]any)
		if !ok {
			continue
		}
		var so OSMSource
		so.Kind, _, _ = unstructured.NestedString(sm, "kind")
		so.Name, _, _ = unstructured.NestedString(sm, "name")
		so.Namespace, _, _ = unstructured.NestedString(sm, "namespace")
		ib.Sources = append(ib.Sources, so)
	}
	return ib
}
