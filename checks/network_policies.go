package checks

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"golang.org/x/net/http/httpproxy"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

// NetworkPolicies evaluates the NetworkPolicies of the runtime namespace
// (those that can select the runtime's pods, by their rendered labels) for
// the flows the rendered pods need (egressOfRun): the platform and tunnel
// server (or the proxy a pod uses for them), the in-cluster Services their
// environment names (the destination pods' ingress too), DNS (UDP 53 to the
// k8s-app=kube-dns Service's pods) and the API server at its endpoint
// address and port, which is what a policy sees after the Service's
// ClusterIP:443 is translated (argo-cd#18356). Fails naming the flow and
// the policies that select the pod without admitting it.
func NetworkPolicies() Check {
	return Check{
		Meta: Meta{
			ID:         "network-policies",
			Impact:     ImpactRuntimeBreaks,
			Category:   CategoryEgress,
			Modes:      ModePre | ModeUpgrade,
			Title:      "The NetworkPolicies selecting the runtime's pods admit the flows it needs",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
			ReadsChart: true,
		},
		Run: runNetworkPolicies,
	}
}

func runNetworkPolicies(ctx context.Context, env *Env) (Result, error) {
	ns := env.Inputs.Namespace
	policies, err := env.Cluster.NetworkPolicies(ns)
	if err != nil {
		return Result{}, err
	}
	if len(policies) == 0 {
		return Pass("no NetworkPolicy in namespace %s: the runtime's pods are not isolated", ns), nil
	}
	ri, pods, skip, err := egressOfRun(ctx, env)
	if skip != nil || err != nil {
		return deref(skip), err
	}
	nsLabels := func(name string) (map[string]string, error) {
		n, err := env.Cluster.Namespace(name)
		if err != nil {
			return nil, err
		}
		l := map[string]string{}
		for k, v := range n.Labels {
			l[k] = v
		}
		l["kubernetes.io/metadata.name"] = name
		return l, nil
	}
	runtimeNS, err := nsLabels(ns)
	if err != nil {
		return Result{}, err
	}
	api, err := env.Cluster.APIServerEndpoints()
	if err != nil {
		return Result{}, err
	}
	dnsSvcs, err := env.Cluster.ServicesByLabel("", "k8s-app=kube-dns")
	if err != nil {
		return Result{}, err
	}
	services := renderedServices(ri.r)
	// Denied flows, each with the pods it is denied to, in the order found.
	type denial struct {
		flow string
		pods []string
	}
	var denials []*denial
	byFlow := map[string]*denial{}
	var objs []ObjectRef
	judged, blocked := 0, 0
	for _, p := range pods {
		src := endpoint{Namespace: podNamespace(p.Pod, env.Inputs), NSLabels: runtimeNS, Labels: p.Pod.Labels}
		if src.Namespace != ns {
			continue
		}
		denied := false
		deny := func(flow string) {
			denied = true
			d := byFlow[flow]
			if d == nil {
				d = &denial{flow: flow}
				byFlow[flow] = d
				denials = append(denials, d)
			}
			d.pods = append(d.pods, podLabel(p.Pod))
		}
		check := func(what string, to endpoint, port int32, proto corev1.Protocol, dstIngress bool) {
			judged++
			conn := connection{From: src, To: to, Port: port, Protocol: proto}
			if v := connVerdict(policies, conn, networkingv1.PolicyTypeEgress); !v.Allowed {
				deny(fmt.Sprintf("%s: egress denied by %s", what, strings.Join(v.Selecting, ", ")))
				return
			}
			if dstIngress {
				if v := connVerdict(policies, conn, networkingv1.PolicyTypeIngress); !v.Allowed {
					deny(fmt.Sprintf("%s: ingress denied by %s", what, strings.Join(v.Selecting, ", ")))
				}
			}
		}
		for _, d := range dnsSvcs {
			l, err := nsLabels(d.Namespace)
			if err != nil {
				return Result{}, err
			}
			check("DNS "+d.Namespace+"/"+d.Name+" (UDP 53)", endpoint{Namespace: d.Namespace, NSLabels: l, Labels: d.Selector}, 53, corev1.ProtocolUDP, false)
		}
		for _, d := range p.Dests {
			switch {
			case d.What == "the API server" && len(api) > 0:
				for _, e := range api {
					check(fmt.Sprintf("the API server (endpoint %s)", net.JoinHostPort(e.IP, strconv.Itoa(int(e.Port)))), endpoint{IP: net.ParseIP(e.IP)}, e.Port, corev1.ProtocolTCP, false)
				}
			case d.External:
				target, what := d.URL, d.label()
				if px := proxyFor(p, d); px != nil {
					target, what = px, what+" through the proxy "+px.Host
				}
				to := endpoint{External: true}
				if ip := net.ParseIP(target.Hostname()); ip != nil {
					to = endpoint{IP: ip}
				}
				check(fmt.Sprintf("%s, port %d", what, portOf(target)), to, portOf(target), corev1.ProtocolTCP, false)
			case d.Service != "":
				svc := services[d.Service]
				sp, ok := svc.Ports[d.port()]
				if !ok {
					continue
				}
				for _, q := range ri.pods {
					if len(svc.Selector) == 0 || !labels.SelectorFromSet(svc.Selector).Matches(labels.Set(q.Labels)) {
						continue
					}
					port, named := targetPort(sp, q)
					check(fmt.Sprintf("%s (%s, port %d)", d.What, q.Ref(), port), endpoint{Namespace: ns, NSLabels: runtimeNS, Labels: q.Labels, NamedPorts: named}, port, sp.Protocol, true)
					break
				}
			}
		}
		if denied {
			blocked++
			objs = append(objs, podObject(p.Pod, env.Inputs))
		}
	}
	if len(denials) > 0 {
		problems := make([]string, len(denials))
		for i, d := range denials {
			problems[i] = d.flow + " (" + countedList(d.pods, maxPodsNamed) + ")"
		}
		return Fail("%d of %d runtime pods have flows the NetworkPolicies of namespace %s do not admit: %s", blocked, len(pods), ns, strings.Join(problems, "; ")).
			WithHint("add rules that admit these flows to the policies named (egress to the API server must name its endpoint address and port, not the Service's 443; egress to DNS needs UDP and TCP 53)").
			WithObjects(objs...), nil
	}
	return Pass("the %d NetworkPolicies of namespace %s admit the %d flows the runtime's pods need", len(policies), ns, judged), nil
}

// maxPodsNamed bounds the pods a denied flow names.
const maxPodsNamed = 4

// countedList names up to n of items: "a, b and 3 more".
func countedList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// proxyFor returns the proxy a pod sends destination d to, or nil: d's
// own (an Argo CD repository's), else the one its environment picks for d
// by Go's matching (HTTP(S)_PROXY, NO_PROXY; none for ssh).
func proxyFor(p podEgress, d destination) *url.URL {
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

// portOf is the port a URL is dialled at (see destination.port).
func portOf(u *url.URL) int32 { return destination{URL: u}.port() }

// targetPort resolves a Service port's targetPort on a destination pod:
// the number, or the named container port; and the pod's named ports.
func targetPort(sp corev1.ServicePort, pod chart.Pod) (int32, map[string]int32) {
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
