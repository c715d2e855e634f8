package checks

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/ingressclass"
)

// IngressExternalAddressCheck passes when the controller's LoadBalancer
// Service has an EXTERNAL-IP or hostname in status.loadBalancer.ingress (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Valid external IP address" of every controller:
// "verify that the EXTERNAL-IP column for your ingress controller shows a
// valid hostname"). The Service is the one the controller's args publish
// (--publish-service, -external-service, publishedservice) or the
// LoadBalancer Service selecting its pods. AWS ALB provisions a load
// balancer per Ingress, so there is nothing to check before install: skip.
func IngressExternalAddressCheck() Check {
	return Check{
		Meta: Meta{
			ID:       "ingress-external-address",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryIngress,
			Modes:    ModePre,
			Title:    "Ingress controller has an external address",
			Severity: SeverityFail,
			Requires: []string{"ingress-controller"},
			Applies:  Applies{Access: []AccessMode{AccessIngress}},
		},
		Run: runIngressExternalAddress,
	}
}

func runIngressExternalAddress(_ context.Context, env *Env) (Result, error) {
	ic, r, err := ingressNeeds(env)
	if err != nil || r.Status != "" {
		return r, err
	}
	if ic.Class.Controller == ControllerALB {
		return Skip("AWS ALB creates one load balancer per Ingress at install time; alb-dns-alias checks it after install"), nil
	}
	if len(ic.Workloads) == 0 {
		return Skip("no controller workload for IngressClass %s (see ingress-controller)", ic.Class.Name), nil
	}
	if ic.Service == nil {
		msg := fmt.Sprintf("no LoadBalancer Service found for the %s controller", ingressclass.Flavour(ic.Class))
		if ic.ServiceNamed != "" {
			msg = fmt.Sprintf("the controller publishes Service %s, which does not exist", ic.ServiceNamed)
		}
		return Fail("%s", msg).
			WithHint("expose the controller with a Service of type LoadBalancer: kubectl get svc -A").
			WithObjects(workloadRef(ic.Workloads[0])), nil
	}
	s := ic.Service
	ref := serviceRef(s)
	if s.Type != corev1.ServiceTypeLoadBalancer {
		return Fail("Service %s/%s is of type %s, which has no external address", s.Namespace, s.Name, s.Type).
			WithHint(fmt.Sprintf("expose the controller with type LoadBalancer: kubectl patch svc %s -n %s -p '{\"spec\":{\"type\":\"LoadBalancer\"}}'", s.Name, s.Namespace)).
			WithObjects(ref), nil
	}
	if len(s.LoadBalancer) == 0 {
		return Fail("Service %s/%s EXTERNAL-IP is <pending>", s.Namespace, s.Name).
			WithHint(fmt.Sprintf("the cloud load balancer was not provisioned: kubectl describe svc %s -n %s (events), check the cloud controller / load balancer controller", s.Name, s.Namespace)).
			WithObjects(ref), nil
	}
	return Pass("Service %s/%s: %s", s.Namespace, s.Name, strings.Join(s.LoadBalancer, ", ")).WithObjects(ref), nil
}
