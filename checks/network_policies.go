package checks

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

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
	ri, skip, err := imagesOfRun(ctx, env)
	if skip != nil || err != nil {
		return deref(skip), err
	}
	pods, err := egressOfRun(ctx, env, ri)
	if err != nil {
		return Result{}, err
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
	var problems []string
	var objs []ObjectRef
	judged := 0
	for _, p := range pods {
		src := endpoint{Namespace: podNamespace(p.Pod, env.Inputs), NSLabels: runtimeNS, Labels: p.Pod.Labels}
		if src.Namespace != ns {
			continue
		}
		var denied []string
		check := func(what string, to endpoint, port int32, proto corev1.Protocol, dstIngress bool) {
			judged++
			conn := connection{From: src, To: to, Port: port, Protocol: proto}
			if v := egressVerdict(policies, conn); !v.Allowed {
				denied = append(denied, fmt.Sprintf("%s: egress denied by %s", what, strings.Join(v.Selecting, ", ")))
				return
			}
			if dstIngress {
				if v := ingressVerdict(policies, conn); !v.Allowed {
					denied = append(denied, fmt.Sprintf("%s: ingress denied by %s", what, strings.Join(v.Selecting, ", ")))
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
				target, what := d.URL, d.What+" ("+d.URL.Host+")"
				if px := proxyFor(p, d.URL); px != nil {
					target, what = px, what+" through the proxy "+px.Host
				}
				to := endpoint{External: true}
				if ip := net.ParseIP(target.Hostname()); ip != nil {
					to = endpoint{IP: ip}
				}
				check(what, to, portOf(target), corev1.ProtocolTCP, false)
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
		if len(denied) > 0 {
			problems = append(problems, podLabel(p.Pod)+" → "+strings.Join(denied, "; "))
			objs = append(objs, podObject(p.Pod, env.Inputs))
		}
	}
	if len(problems) > 0 {
		return Fail("%d of %d runtime pods have flows the NetworkPolicies of namespace %s do not admit: %s", len(problems), len(pods), ns, strings.Join(problems, "; ")).
			WithHint("add rules that admit these flows to the policies named (egress to the API server must name its endpoint address and port, not the Service's 443; egress to DNS needs UDP and TCP 53)").
			WithObjects(objs...), nil
	}
	return Pass("the %d NetworkPolicies of namespace %s admit the %d flows the runtime's pods need", len(policies), ns, judged), nil
}

// proxyFor returns the proxy a pod sends u to, or nil.
func proxyFor(p podEgress, u *url.URL) *url.URL {
	if !p.Proxied {
		return nil
	}
	s := p.HTTPSProxy
	if u.Scheme == "http" {
		s = p.HTTPProxy
	}
	if s == "" {
		return nil
	}
	px, err := url.Parse(s)
	if err != nil || px.Host == "" {
		return nil
	}
	if px.Port() == "" {
		px.Host = net.JoinHostPort(px.Hostname(), map[bool]string{true: "443", false: "80"}[px.Scheme == "https"])
	}
	return px
}

func portOf(u *url.URL) int32 {
	if n, err := strconv.Atoi(u.Port()); err == nil {
		return int32(n)
	}
	if u.Scheme == "http" {
		return 80
	}
	return 443
}

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
