package netpol

import (
	"fmt"
	"net"
	"net/url"
	"strconv"

	"golang.org/x/net/http/httpproxy"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Flow is one connection a pod needs, for the NetworkPolicies of both ends
// to admit.
type Flow struct {
	// What names it: "DNS kube-system/kube-dns (UDP 53)", "the API server
	// (endpoint 192.0.2.10:6443)", "the platform (g.codefresh.io), port
	// 443", "Service op (Deployment/op, port 8080)".
	What string
	Conn Connection
	// Ingress is set when the destination is a pod of the release whose
	// ingress is judged too.
	Ingress bool
}

// DNSService is a Service of the cluster's DNS (k8s-app=kube-dns) with
// the labels of its namespace.
type DNSService struct {
	Service  cluster.Service
	NSLabels map[string]string
}

// Surroundings are what the flows of a release's pods go to besides their
// destinations' URLs.
type Surroundings struct {
	// Namespace is the release namespace, NSLabels its labels.
	Namespace string
	NSLabels  map[string]string
	// DNS are the cluster's DNS Services.
	DNS []DNSService
	// APIServer are the endpoints of Service default/kubernetes: what a
	// policy sees of a connection to its ClusterIP:443 once it is
	// translated (https://github.com/argoproj/argo-cd/issues/18356).
	APIServer []cluster.Endpoint
	// Services are the Services the release renders (RenderedServices),
	// Pods its pods: the pods behind a Service destination.
	Services map[string]RenderedService
	Pods     []chart.Pod
}

// Flows returns the flows pod p (whose end is src) needs: DNS (UDP 53 to
// the pods of each DNS Service), then each destination: the API server at
// each of its endpoints, an external one at its address (an unknown
// address when its host is a name) or, when the pod sends it through a
// proxy (ProxyFor), the proxy's, and a Service at the first rendered pod it
// selects, on the targetPort of the port dialled (none when the Service
// has no such port or selects no pod).
func Flows(src Endpoint, p PodEgress, s Surroundings) []Flow {
	var out []Flow
	for _, d := range s.DNS {
		out = append(out, Flow{What: "DNS " + d.Service.Namespace + "/" + d.Service.Name + " (UDP 53)",
			Conn: Connection{From: src, To: Endpoint{Namespace: d.Service.Namespace, NSLabels: d.NSLabels, Labels: d.Service.Selector}, Port: 53, Protocol: corev1.ProtocolUDP}})
	}
	for _, d := range p.Dests {
		switch {
		case d.What == WhatAPIServer && len(s.APIServer) > 0:
			for _, e := range s.APIServer {
				out = append(out, Flow{What: fmt.Sprintf("the API server (endpoint %s)", net.JoinHostPort(e.IP, strconv.Itoa(int(e.Port)))),
					Conn: Connection{From: src, To: Endpoint{IP: net.ParseIP(e.IP)}, Port: e.Port, Protocol: corev1.ProtocolTCP}})
			}
		case d.External:
			out = append(out, externalFlow(src, p, d))
		case d.Service != "":
			if f, ok := serviceFlow(src, d, s); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// externalFlow is the flow to external destination d, or to the proxy p
// sends it through.
func externalFlow(src Endpoint, p PodEgress, d Destination) Flow {
	target, what := d.URL, d.Label()
	if px := ProxyFor(p, d); px != nil {
		target, what = px, what+" through the proxy "+px.Host
	}
	to := Endpoint{External: true}
	if ip := net.ParseIP(target.Hostname()); ip != nil {
		to = Endpoint{IP: ip}
	}
	port := PortOf(target)
	return Flow{What: fmt.Sprintf("%s, port %d", what, port), Conn: Connection{From: src, To: to, Port: port, Protocol: corev1.ProtocolTCP}}
}

// serviceFlow is the flow to the first pod Service destination d selects.
func serviceFlow(src Endpoint, d Destination, s Surroundings) (Flow, bool) {
	svc := s.Services[d.Service]
	sp, ok := svc.Ports[d.Port()]
	if !ok || len(svc.Selector) == 0 {
		return Flow{}, false
	}
	sel := labels.SelectorFromSet(svc.Selector)
	for _, q := range s.Pods {
		if !sel.Matches(labels.Set(q.Labels)) {
			continue
		}
		port, named := TargetPort(sp, q)
		return Flow{What: fmt.Sprintf("%s (%s, port %d)", d.What, q.Ref(), port),
			Conn:    Connection{From: src, To: Endpoint{Namespace: s.Namespace, NSLabels: s.NSLabels, Labels: q.Labels, NamedPorts: named}, Port: port, Protocol: sp.Protocol},
			Ingress: true}, true
	}
	return Flow{}, false
}

// Denial is a direction of a flow the policies do not admit, and the
// policies that select its pod for that direction.
type Denial struct {
	Dir      networkingv1.PolicyType
	Policies []string
}

// Judge judges f under policies: its egress, then, when that is admitted
// and f.Ingress is set, its destination's ingress; nil when both are
// admitted.
func (f Flow) Judge(policies []networkingv1.NetworkPolicy) *Denial {
	if v := Judge(policies, f.Conn, networkingv1.PolicyTypeEgress); !v.Allowed {
		return &Denial{Dir: networkingv1.PolicyTypeEgress, Policies: v.Selecting}
	}
	if f.Ingress {
		if v := Judge(policies, f.Conn, networkingv1.PolicyTypeIngress); !v.Allowed {
			return &Denial{Dir: networkingv1.PolicyTypeIngress, Policies: v.Selecting}
		}
	}
	return nil
}

// ProxyFor returns the proxy a pod sends destination d to, or nil: d's
// own (an Argo CD repository's), else the one its environment picks for d
// by Go's matching (HTTP(S)_PROXY, NO_PROXY; none for ssh); a port is
// added by its scheme when it has none.
func ProxyFor(p PodEgress, d Destination) *url.URL {
	var px *url.URL
	switch {
	case d.Proxy != "":
		px, _ = url.Parse(d.Proxy)
	case p.Proxied && d.URL.Scheme != "ssh":
		cfg := httpproxy.Config{HTTPProxy: p.HTTPProxy, HTTPSProxy: p.HTTPSProxy, NoProxy: p.NoProxy}
		px, _ = cfg.ProxyFunc()(d.URL)
	}
	if px == nil || px.Host == "" {
		return nil
	}
	if px.Port() == "" {
		port := "80"
		if px.Scheme == "https" {
			port = "443"
		}
		px.Host = net.JoinHostPort(px.Hostname(), port)
	}
	return px
}

// TargetPort resolves a Service port's targetPort on a destination pod:
// the number, or the named container port; and the pod's named ports.
func TargetPort(sp corev1.ServicePort, pod chart.Pod) (int32, map[string]int32) {
	named := map[string]int32{}
	for _, c := range pod.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name != "" {
				named[cp.Name] = cp.ContainerPort
			}
		}
	}
	switch {
	case sp.TargetPort.Type == intstr.String && sp.TargetPort.StrVal != "":
		return named[sp.TargetPort.StrVal], named
	case sp.TargetPort.IntVal != 0:
		return sp.TargetPort.IntVal, named
	}
	return sp.Port, named
}
