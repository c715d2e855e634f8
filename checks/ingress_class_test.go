package checks

import "testing"

func TestIngressClass(t *testing.T) {
	ingress := Inputs{AccessMode: AccessIngress, IngressClass: "nginx", IngressHost: "rt.example.com"}
	tests := []struct {
		name string
		in   Inputs
		yaml []string
		want outcome
	}{
		{"supported controller", ingress, []string{ingressClassYAML("nginx", ControllerNginxCommunity)},
			outcome{StatusPass, []string{"IngressClass nginx: k8s.io/ingress-nginx (NGINX Community (ingress-nginx))"}}},
		{"unsupported controller", ingress, []string{ingressClassYAML("nginx", "haproxy.org/ingress-controller")},
			outcome{StatusWarn, []string{"controller haproxy.org/ingress-controller, which Codefresh does not support", "supported controllers: k8s.io/ingress-nginx"}}},
		{"missing, others listed", ingress, []string{ingressClassYAML("traefik", ControllerTraefik), ingressClassYAML("alb", ControllerALB)},
			outcome{StatusFail, []string{"IngressClass nginx not found; the cluster has: alb (ingress.k8s.aws/alb), traefik (traefik.io/ingress-controller)", "--ingress-class"}}},
		{"no class at all", ingress, nil,
			outcome{StatusFail, []string{"the cluster has: none"}}},
		{"tunnel mode", Inputs{AccessMode: AccessTunnel}, []string{ingressClassYAML("nginx", ControllerNginxCommunity)},
			outcome{StatusSkip, []string{NotApplicable + "access mode is tunnel; this check is for ingress"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.expect(t, newKit(t, tt.yaml...).with(tt.in).run(IngressClassCheck()))
		})
	}
}
