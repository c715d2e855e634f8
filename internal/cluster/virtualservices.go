package cluster

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// VirtualServiceCRD is the name of Istio's VirtualService CRD.
const VirtualServiceCRD = "virtualservices.networking.istio.io"

// virtualServiceVersions are the served versions of networking.istio.io
// tried in order (v1 since Istio 1.22; v1alpha3 in the Codefresh docs).
var virtualServiceVersions = []string{"v1", "v1beta1", "v1alpha3"}

// URIMatch is one uri match of an HTTP route: Kind is "prefix", "exact" or
// "regex".
type URIMatch struct {
	Kind, Value string
}

// Destination is a route destination: host and port.number (0 when unset).
type Destination struct {
	Host string
	Port int64
}

// HTTPRoute is one entry of a VirtualService's spec.http, in order. URIs is
// empty when the route matches every request (no uri match).
type HTTPRoute struct {
	URIs         []URIMatch
	Destinations []Destination
}

// VirtualService summarises an Istio VirtualService.
type VirtualService struct {
	Namespace, Name string
	Hosts           []string
	HTTP            []HTTPRoute
}

// VirtualServices lists the VirtualServices of one namespace once per
// snapshot (dynamic client, paginated), trying the served versions of
// networking.istio.io in turn. served is false when no version of the API is
// served (Istio is not installed).
func (s *Snapshot) VirtualServices(namespace string) (vss []VirtualService, served bool, err error) {
	gvrs := make([]schema.GroupVersionResource, len(virtualServiceVersions))
	for i, v := range virtualServiceVersions {
		gvrs[i] = schema.GroupVersionResource{Group: "networking.istio.io", Version: v, Resource: "virtualservices"}
	}
	return listServed(s, "virtualservices/"+namespace, "virtualservices.networking.istio.io", namespace, gvrs, VirtualServiceFrom)
}

// VirtualServiceFrom summarises an unstructured VirtualService; fields of
// unexpected types are ignored.
func VirtualServiceFrom(u *unstructured.Unstructured) VirtualService {
	vs := VirtualService{Namespace: u.GetNamespace(), Name: u.GetName()}
	vs.Hosts, _, _ = unstructured.NestedStringSlice(u.Object, "spec", "hosts")
	routes, _, _ := unstructured.NestedSlice(u.Object, "spec", "http")
	for _, r := range routes {
		rm, ok := r.(map[string]any)
		if !ok {
			continue
		}
		var hr HTTPRoute
		matches, _, _ := unstructured.NestedSlice(rm, "match")
		for _, m := range matches {
			mm, ok := m.(map[string]any)
			if !ok {
				continue
			}
			uri, ok, _ := unstructured.NestedMap(mm, "uri")
			if !ok {
				// A match without uri (headers only, say) still matches every path.
				hr.URIs = append(hr.URIs, URIMatch{Kind: "prefix", Value: "/"})
				continue
			}
			for _, k := range []string{"prefix", "exact", "regex"} {
				if v, ok := uri[k].(string); ok {
					hr.URIs = append(hr.URIs, URIMatch{Kind: k, Value: v})
				}
			}
		}
		dests, _, _ := unstructured.NestedSlice(rm, "route")
		for _, d := range dests {
			dm, ok := d.(map[string]any)
			if !ok {
				continue
			}
			host, _, _ := unstructured.NestedString(dm, "destination", "host")
			port, _, _ := unstructured.NestedFieldNoCopy(dm, "destination", "port", "number")
			hr.Destinations = append(hr.Destinations, Destination{Host: host, Port: toInt64(port)})
		}
		vs.HTTP = append(vs.HTTP, hr)
	}
	return vs
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}
