package checks

import (
	"context"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/ingressclass"
)

// AWS annotations that make the ingress-nginx load balancer pass TCP through
// (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "NGINX Community version ingress
// configuration" → "TCP support": either annotation).
const (
	awsBackendProtocol = "service.beta.kubernetes.io/aws-load-balancer-backend-protocol"
	awsLBType          = "service.beta.kubernetes.io/aws-load-balancer-type"
)

// IngressTCPCheck passes when, on AWS (a node's spec.providerID starts with
// aws://), the ingress-nginx controller's Service carries
// aws-load-balancer-backend-protocol: tcp or aws-load-balancer-type: nlb.
// It skips off AWS and for other controllers (the docs give the rule for
// NGINX Community only).
func IngressTCPCheck() Check {
	return Check{
		Meta: Meta{
			ID:       "ingress-tcp",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryIngress,
			Modes:    ModePre,
			Title:    "Ingress load balancer handles TCP (AWS)",
			Severity: SeverityFail,
			Requires: []string{"ingress-controller"},
			Applies:  Applies{Access: []AccessMode{AccessIngress}},
		},
		Run: runIngressTCP,
	}
}

func runIngressTCP(_ context.Context, env *Env) (Result, error) {
	ic, r, err := ingressNeeds(env)
	if err != nil || r.Status != "" {
		return r, err
	}
	nodes, err := env.Cluster.Nodes()
	if err != nil {
		return Result{}, err
	}
	aws := false
	for _, n := range nodes {
		if strings.HasPrefix(n.ProviderID, "aws://") {
			aws = true
			break
		}
	}
	if !aws {
		return Skip("not on AWS (no node spec.providerID starts with aws://)"), nil
	}
	if ic.Class.Controller != ControllerNginxCommunity {
		return Skip("the TCP annotations apply to NGINX Community (ingress-nginx); the controller is %s", ingressclass.Flavour(ic.Class)), nil
	}
	if ic.Service == nil {
		return Skip("no Service found for the ingress-nginx controller (see ingress-external-address)"), nil
	}
	s := ic.Service
	bp, lt := s.Annotations[awsBackendProtocol], s.Annotations[awsLBType]
	if strings.EqualFold(bp, "tcp") || strings.EqualFold(lt, "nlb") {
		found := awsLBType + ": " + lt
		if strings.EqualFold(bp, "tcp") {
			found = awsBackendProtocol + ": " + bp
		}
		return Pass("Service %s/%s has %s", s.Namespace, s.Name, found).WithObjects(serviceRef(s)), nil
	}
	return Fail("Service %s/%s has neither %s: tcp nor %s: nlb", s.Namespace, s.Name, awsBackendProtocol, awsLBType).
		WithHint(fmt.Sprintf("kubectl annotate svc %s -n %s %s=tcp (or %s=nlb; the load balancer may be recreated)", s.Name, s.Namespace, awsBackendProtocol, awsLBType)).
		WithObjects(serviceRef(s)), nil
}
