package cluster

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// IngressResource is the networking.k8s.io/v1 Ingress resource.
var IngressResource = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}

// IngressClassAnnotation is the pre-1.18 way of naming an Ingress's class,
// still honoured by most controllers.
const IngressClassAnnotation = "kubernetes.io/ingress.class"

// IngressTLS is one entry of an Ingress's spec.tls.
type IngressTLS struct {
	Hosts      []string `json:"hosts,omitempty"`
	SecretName string   `json:"secretName,omitempty"`
}

// LoadBalancerAddress is one entry of status.loadBalancer.ingress.
type LoadBalancerAddress struct {
	IP       string
	Hostname string
}

// String returns the hostname, else the IP.
func (a LoadBalancerAddress) String() string {
	if a.Hostname != "" {
		return a.Hostname
	}
	return a.IP
}

// Ingress summarises an Ingress: what the post-install checks read of the
// runtime Ingress.
type Ingress struct {
	Namespace, Name string
	// ResourceVersion guards a --fix patch against concurrent changes.
	ResourceVersion string
	// Class is spec.ingressClassName, else the kubernetes.io/ingress.class annotation.
	Class string
	// Hosts are the hosts of spec.rules, in order.
	Hosts []string
	// TLS is spec.tls.
	TLS []IngressTLS
	// LoadBalancer is status.loadBalancer.ingress.
	LoadBalancer []LoadBalancerAddress
	Labels       map[string]string
	Annotations  map[string]string // without kubectl's last-applied-configuration
}

// IngressFrom summarises an Ingress object.
func IngressFrom(in *networkingv1.Ingress) Ingress {
	out := Ingress{
		Namespace:       in.Namespace,
		Name:            in.Name,
		ResourceVersion: in.ResourceVersion,
		Class:           in.Annotations[IngressClassAnnotation],
		Labels:          copyMap(in.Labels),
		Annotations:     copyMap(in.Annotations),
	}
	if in.Spec.IngressClassName != nil && *in.Spec.IngressClassName != "" {
		out.Class = *in.Spec.IngressClassName
	}
	for _, r := range in.Spec.Rules {
		if r.Host != "" {
			out.Hosts = append(out.Hosts, r.Host)
		}
	}
	for _, t := range in.Spec.TLS {
		out.TLS = append(out.TLS, IngressTLS{Hosts: append([]string(nil), t.Hosts...), SecretName: t.SecretName})
	}
	for _, a := range in.Status.LoadBalancer.Ingress {
		out.LoadBalancer = append(out.LoadBalancer, LoadBalancerAddress{IP: a.IP, Hostname: a.Hostname})
	}
	return out
}

// Ingress gets one Ingress by name (a GET), once per snapshot. found is false
// when it does not exist.
func (s *Snapshot) Ingress(namespace, name string) (in Ingress, found bool, err error) {
	return getOne(s, "ingress/"+namespace+"/"+name, "ingresses", namespace, name,
		s.clients.Kube.NetworkingV1().Ingresses(namespace).Get, IngressFrom)
}
