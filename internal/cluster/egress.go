package cluster

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ServiceAccount is what the image checks read of a ServiceAccount: the
// pull secrets its pods get.
type ServiceAccount struct {
	Exists           bool
	ImagePullSecrets []string
}

// ServiceAccount gets one ServiceAccount by name (a GET), once per
// snapshot; Exists is false when it does not exist.
func (s *Snapshot) ServiceAccount(namespace, name string) (ServiceAccount, error) {
	sa, _, err := getOne(s, "serviceaccount/"+namespace+"/"+name, "serviceaccounts/"+name, namespace, name,
		s.clients.Kube.CoreV1().ServiceAccounts(namespace).Get,
		func(sa *corev1.ServiceAccount) ServiceAccount {
			out := ServiceAccount{Exists: true}
			for _, r := range sa.ImagePullSecrets {
				out.ImagePullSecrets = append(out.ImagePullSecrets, r.Name)
			}
			return out
		})
	return sa, err
}

// NetworkPolicies lists the NetworkPolicies of one namespace (paginated),
// once per snapshot and namespace: the policies that can select the
// runtime's pods are those of its namespace.
//
// The objects keep their labels, annotations and resourceVersion beside
// their spec: Objects answers the ownership checks' metadata list of
// NetworkPolicies from this one (a kind is listed once per run). When the
// run reads objects whole (SetWholeLists), they come from ObjectsJSON.
func (s *Snapshot) NetworkPolicies(namespace string) ([]networkingv1.NetworkPolicy, error) {
	return Memo(s, "networkpolicies/"+namespace, func() ([]networkingv1.NetworkPolicy, error) {
		keep := func(p *networkingv1.NetworkPolicy) networkingv1.NetworkPolicy {
			return networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name,
				Labels: copyMap(p.Labels), Annotations: copyMap(p.Annotations), ResourceVersion: p.ResourceVersion}, Spec: p.Spec}
		}
		if s.whole {
			whole, err := s.ObjectsJSON(NetworkPolicyResource, namespace)
			if err != nil {
				return nil, err
			}
			out := make([]networkingv1.NetworkPolicy, 0, len(whole))
			for _, k := range slices.Sorted(maps.Keys(whole)) {
				var p networkingv1.NetworkPolicy
				if err := json.Unmarshal(whole[k], &p); err != nil {
					return nil, err
				}
				out = append(out, keep(&p))
			}
			return out, nil
		}
		return listAll(s.ctx, "networkpolicies", namespace, metav1.ListOptions{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Kube.NetworkingV1().NetworkPolicies(namespace).List(ctx, o)
			}, keep)
	})
}

// NetworkPolicyResource is the resource of NetworkPolicies.
var NetworkPolicyResource = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}

// objectsFromNetworkPolicies answers Objects for the NetworkPolicies of a
// namespace from NetworkPolicies; ok is false for any other resource or a
// cluster-wide list.
func (s *Snapshot) objectsFromNetworkPolicies(gvr schema.GroupVersionResource, namespace string) (map[string]ObjectMeta, bool, error) {
	if gvr != NetworkPolicyResource || namespace == "" {
		return nil, false, nil
	}
	ps, err := s.NetworkPolicies(namespace)
	if err != nil {
		return nil, true, err
	}
	out := make(map[string]ObjectMeta, len(ps))
	for _, p := range ps {
		out[p.Namespace+"/"+p.Name] = ObjectMeta{Namespace: p.Namespace, Name: p.Name, Labels: p.Labels, Annotations: p.Annotations, ResourceVersion: p.ResourceVersion}
	}
	return out, true, nil
}

// Endpoint is one address and port a Service's endpoints serve.
type Endpoint struct {
	IP   string
	Port int32
}

// APIServerEndpoints returns the endpoints of the Service default/kubernetes
// (its EndpointSlices, listed once per snapshot): the API server's real
// addresses and port (6443, say), which a pod's packets reach after the
// Service's ClusterIP and port 443 are translated.
func (s *Snapshot) APIServerEndpoints() ([]Endpoint, error) {
	return Memo(s, "endpointslices/default/kubernetes", func() ([]Endpoint, error) {
		slices, err := listAll(s.ctx, "endpointslices", metav1.NamespaceDefault,
			metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kubernetes"},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Kube.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).List(ctx, o)
			}, func(es *discoveryv1.EndpointSlice) []Endpoint {
				var out []Endpoint
				for _, p := range es.Ports {
					if p.Port == nil {
						continue
					}
					for _, e := range es.Endpoints {
						for _, a := range e.Addresses {
							out = append(out, Endpoint{IP: a, Port: *p.Port})
						}
					}
				}
				return out
			})
		var out []Endpoint
		for _, l := range slices {
			out = append(out, l...)
		}
		return out, err
	})
}
