package cluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Service summarises a Service.
type Service struct {
	Namespace   string
	Name        string
	Type        corev1.ServiceType
	Labels      map[string]string
	Annotations map[string]string // without kubectl's last-applied-configuration
	Selector    map[string]string
	// Ports are spec.ports[].port, in order.
	Ports []int32
	// LoadBalancer lists status.loadBalancer.ingress[] as IP or hostname.
	LoadBalancer []string
	// ClusterIPs are spec.clusterIPs; IPFamilies spec.ipFamilies ("IPv4",
	// "IPv6").
	ClusterIPs []string
	IPFamilies []string
}

// ServiceFrom summarises a Service object.
func ServiceFrom(svc *corev1.Service) Service {
	out := Service{
		Namespace:   svc.Namespace,
		Name:        svc.Name,
		Type:        svc.Spec.Type,
		Labels:      copyMap(svc.Labels),
		Annotations: copyMap(svc.Annotations),
		Selector:    copyMap(svc.Spec.Selector),
		ClusterIPs:  svc.Spec.ClusterIPs,
	}
	for _, f := range svc.Spec.IPFamilies {
		out.IPFamilies = append(out.IPFamilies, string(f))
	}
	for _, p := range svc.Spec.Ports {
		out.Ports = append(out.Ports, p.Port)
	}
	for _, in := range svc.Status.LoadBalancer.Ingress {
		switch {
		case in.Hostname != "":
			out.LoadBalancer = append(out.LoadBalancer, in.Hostname)
		case in.IP != "":
			out.LoadBalancer = append(out.LoadBalancer, in.IP)
		}
	}
	return out
}

// ServicesIn lists the Services of one namespace (paginated), once per
// snapshot and namespace. The ingress checks list only the controller's
// namespace, so a cluster with 20,000 Services elsewhere costs nothing.
func (s *Snapshot) ServicesIn(namespace string) ([]Service, error) {
	return s.services(namespace, "")
}

// ServicesByLabel lists the Services of a namespace matching a label selector
// (server-side), once per snapshot, namespace and selector.
func (s *Snapshot) ServicesByLabel(namespace, selector string) ([]Service, error) {
	return s.services(namespace, selector)
}

func (s *Snapshot) services(namespace, selector string) ([]Service, error) {
	return Memo(s, "services/"+namespace+"?"+selector, func() ([]Service, error) {
		return listAll(s.ctx, "services", namespace, metav1.ListOptions{LabelSelector: selector},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Kube.CoreV1().Services(namespace).List(ctx, o)
			}, ServiceFrom)
	})
}

// Service gets one Service by name (a GET), once per snapshot; ok is false
// when it does not exist.
func (s *Snapshot) Service(namespace, name string) (svc Service, ok bool, err error) {
	return getOne(s, "service/"+namespace+"/"+name, "services/"+name, namespace, name,
		s.clients.Kube.CoreV1().Services(namespace).Get, ServiceFrom)
}
