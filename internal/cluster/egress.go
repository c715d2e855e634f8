package cluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
func (s *Snapshot) NetworkPolicies(namespace string) ([]networkingv1.NetworkPolicy, error) {
	return Memo(s, "networkpolicies/"+namespace, func() ([]networkingv1.NetworkPolicy, error) {
		return listAll(s.ctx, "networkpolicies", namespace, metav1.ListOptions{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Kube.NetworkingV1().NetworkPolicies(namespace).List(ctx, o)
			}, func(p *networkingv1.NetworkPolicy) networkingv1.NetworkPolicy {
				return networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}, Spec: p.Spec}
			})
	})
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
