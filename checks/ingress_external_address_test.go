package checks

import (
	"fmt"
	"testing"
)

// lbServiceYAML is a Service selecting app=<app> pods, of type typ, with
// annotations and, when address is set, that load balancer address.
func lbServiceYAML(ns, name, app, typ, annotations, address string) string {
	status := ""
	if address != "" {
		status = fmt.Sprintf("status: {loadBalancer: {ingress: [{hostname: %s}]}}", address)
	}
	if annotations == "" {
		annotations = "{}"
	}
	return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {namespace: %s, name: %s, annotations: %s}\nspec: {type: %s, selector: {app: %s}, ports: [{port: 80}]}\n%s\n",
		ns, name, annotations, typ, app, status)
}

func TestIngressExternalAddress(t *testing.T) {
	ingress := Inputs{AccessMode: AccessIngress, IngressClass: "nginx", IngressHost: "rt.example.com"}
	nginx := ingressClassYAML("nginx", ControllerNginxCommunity)
	ctrl := controllerYAML("Deployment", "ingress-nginx", "ctrl", "registry.k8s.io/ingress-nginx/controller:v1.12.0", nil, nil, 1)
	published := controllerYAML("Deployment", "ingress-nginx", "ctrl", "registry.k8s.io/ingress-nginx/controller:v1.12.0", []string{"--publish-service=$(POD_NAMESPACE)/gone"}, nil, 1)
	tests := []struct {
		name string
		in   Inputs
		yaml []string
		want outcome
	}{
		{"load balancer with an address", ingress, []string{nginx, ctrl, lbServiceYAML("ingress-nginx", "lb", "ctrl", "LoadBalancer", "", "lb.example.com")},
			outcome{StatusPass, []string{"Service ingress-nginx/lb: lb.example.com"}}},
		{"pending", ingress, []string{nginx, ctrl, lbServiceYAML("ingress-nginx", "lb", "ctrl", "LoadBalancer", "", "")},
			outcome{StatusFail, []string{"Service ingress-nginx/lb EXTERNAL-IP is <pending>"}}},
		{"NodePort only", ingress, []string{nginx, ctrl, lbServiceYAML("ingress-nginx", "np", "ctrl", "NodePort", "", "")},
			outcome{StatusFail, []string{"is of type NodePort, which has no external address", "kubectl patch svc np -n ingress-nginx"}}},
		{"no Service", ingress, []string{nginx, ctrl},
			outcome{StatusFail, []string{"no LoadBalancer Service found for the NGINX Community (ingress-nginx) controller"}}},
		{"published Service missing", ingress, []string{nginx, published},
			outcome{StatusFail, []string{"the controller publishes Service ingress-nginx/gone, which does not exist"}}},
		{"no controller", ingress, []string{nginx},
			outcome{StatusSkip, []string{"no controller workload for IngressClass nginx (see ingress-controller)"}}},
		{"ALB: one load balancer per Ingress", Inputs{AccessMode: AccessIngress, IngressClass: "alb"}, []string{ingressClassYAML("alb", ControllerALB)},
			outcome{StatusSkip, []string{"AWS ALB creates one load balancer per Ingress"}}},
		{"tunnel mode", Inputs{AccessMode: AccessTunnel}, nil, outcome{StatusSkip, []string{NotApplicable + "access mode is tunnel"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.expect(t, newKit(t, tt.yaml...).with(tt.in).run(IngressExternalAddressCheck()))
		})
	}
}
