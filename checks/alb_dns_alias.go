package checks

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// AlbDNSAlias passes, for an Ingress of an AWS Load Balancer Controller class
// (controller ingress.k8s.aws/alb), when the runtime host resolves to the
// same addresses as the ALB hostname in the Ingress status: the Route 53
// alias to the load balancer exists (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Create an
// alias to load balancer in route53", done after install). Name resolution
// goes through Env.Resolver; ALB addresses rotate, so one common address is
// enough.
func AlbDNSAlias() Check {
	return Check{
		Meta: Meta{
			ID:       "alb-dns-alias",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryIngress,
			Modes:    ModePost,
			Title:    "The ingress host resolves to the ALB's addresses (Route 53 alias)",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
		},
		Run: runAlbDNSAlias,
	}
}

func runAlbDNSAlias(ctx context.Context, env *Env) (Result, error) {
	f, err := runtimeFacts(env)
	if err != nil {
		return Result{}, err
	}
	switch {
	case !f.IngressFound:
		return Skip("no runtime Ingress in namespace %s (access mode %s)", env.Inputs.Namespace, f.Mode), nil
	case f.Controller != ControllerALB && (f.ClassFound || f.Class != "alb"):
		return Skip("IngressClass %s is not an AWS ALB class (%s)", f.Class, ControllerALB), nil
	}
	var albs []string
	for _, a := range f.Ingress.LoadBalancer {
		if a.Hostname != "" {
			albs = append(albs, a.Hostname)
		}
	}
	if len(albs) == 0 {
		return Skip("Ingress %s has no ALB hostname in its status yet (see runtime-ingress-status)", f.Ingress.Name), nil
	}
	if f.Host == "" {
		return Fail("Ingress %s has no host in its rules", f.Ingress.Name).WithObjects(runtimeIngressRef(f)), nil
	}
	hint := fmt.Sprintf("in Route 53, create an A record %s, Alias ON, \"Alias to Application and Classic Load Balancer\", region and load balancer %s; check with: dig +short %s %s",
		f.Host, albs[0], f.Host, albs[0])
	hostAddrs, err := env.Resolver.LookupHost(ctx, f.Host)
	if err != nil {
		return Fail("%s does not resolve (%v): the Route 53 alias to the ALB %s is missing", f.Host, err, albs[0]).WithHint(hint).WithObjects(runtimeIngressRef(f)), nil
	}
	var albAddrs []string
	for _, h := range albs {
		addrs, err := env.Resolver.LookupHost(ctx, h)
		if err != nil {
			return Fail("the ALB hostname %s does not resolve (%v)", h, err).
				WithHint("check the load balancer in the AWS console (EC2 > Load Balancers) and the controller's log").WithObjects(runtimeIngressRef(f)), nil
		}
		albAddrs = append(albAddrs, addrs...)
	}
	for _, a := range hostAddrs {
		if slices.Contains(albAddrs, a) {
			return Pass("%s resolves to the ALB %s (%s)", f.Host, albs[0], a).WithObjects(runtimeIngressRef(f)), nil
		}
	}
	return Fail("%s resolves to %s, not to the ALB %s (%s): the Route 53 alias is missing or points elsewhere",
		f.Host, strings.Join(hostAddrs, ", "), albs[0], strings.Join(albAddrs, ", ")).WithHint(hint).WithObjects(runtimeIngressRef(f)), nil
}
