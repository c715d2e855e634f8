package checks

import (
	"context"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/images"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/netpol"
)

// NetworkPolicies evaluates the NetworkPolicies of the runtime namespace
// (those that can select the runtime's pods, by their rendered labels;
// netpol.Judge) for the flows the rendered pods need (egressOfRun,
// netpol.Flows): the platform and tunnel
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
	s, err := flowSurroundings(env, ri, pods)
	if err != nil {
		return Result{}, err
	}
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
		src := netpol.Endpoint{Namespace: podNamespace(p.Pod, env.Inputs), NSLabels: s.NSLabels, Labels: p.Pod.Labels}
		if src.Namespace != ns {
			continue
		}
		denied := false
		for _, f := range netpol.Flows(src, p, s) {
			judged++
			d := f.Judge(policies)
			if d == nil {
				continue
			}
			denied = true
			flow := fmt.Sprintf("%s: %s denied by %s", f.What, strings.ToLower(string(d.Dir)), strings.Join(d.Policies, ", "))
			if byFlow[flow] == nil {
				byFlow[flow] = &denial{flow: flow}
				denials = append(denials, byFlow[flow])
			}
			byFlow[flow].pods = append(byFlow[flow].pods, podLabel(p.Pod))
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

// flowSurroundings reads what the flows of the release's pods go to: the
// runtime namespace's labels, the API server's endpoints, the cluster's
// DNS Services (k8s-app=kube-dns; with their namespaces' labels when a pod
// of pods runs in the runtime namespace) and the rendered Services.
func flowSurroundings(env *Env, ri *images.Rendered, pods []netpol.PodEgress) (netpol.Surroundings, error) {
	ns := env.Inputs.Namespace
	s := netpol.Surroundings{Namespace: ns, Services: netpol.RenderedServices(ri.Rendering), Pods: ri.Pods}
	var err error
	if s.NSLabels, err = policyNSLabels(env, ns); err != nil {
		return s, err
	}
	if s.APIServer, err = env.Cluster.APIServerEndpoints(); err != nil {
		return s, err
	}
	dns, err := env.Cluster.ServicesByLabel("", "k8s-app=kube-dns")
	if err != nil {
		return s, err
	}
	inNS := false
	for _, p := range pods {
		inNS = inNS || podNamespace(p.Pod, env.Inputs) == ns
	}
	if !inNS {
		return s, nil
	}
	for _, d := range dns {
		l, err := policyNSLabels(env, d.Namespace)
		if err != nil {
			return s, err
		}
		s.DNS = append(s.DNS, netpol.DNSService{Service: d, NSLabels: l})
	}
	return s, nil
}

// policyNSLabels are the labels of namespace name, with the
// kubernetes.io/metadata.name label the API server sets on every
// namespace (https://kubernetes.io/docs/reference/labels-annotations-taints/#kubernetes-io-metadata-name).
func policyNSLabels(env *Env, name string) (map[string]string, error) {
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

// maxPodsNamed bounds the pods a denied flow names.
const maxPodsNamed = 4

// countedList names up to n of items: "a, b and 3 more".
func countedList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
