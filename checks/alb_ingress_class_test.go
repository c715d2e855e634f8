package checks

import "testing"

func TestALBIngressClass(t *testing.T) {
	alb := Inputs{AccessMode: AccessIngress, IngressClass: "alb"}
	tests := []struct {
		name string
		in   Inputs
		yaml []string
		want outcome
	}{
		{"ALB class", alb, []string{ingressClassYAML("alb", ControllerALB)}, outcome{StatusPass, []string{"IngressClass alb has spec.controller ingress.k8s.aws/alb"}}},
		{"named alb, other controller", alb, []string{ingressClassYAML("alb", ControllerNginxCommunity)},
			outcome{StatusFail, []string{"IngressClass alb has spec.controller k8s.io/ingress-nginx, not ingress.k8s.aws/alb", "kubectl apply -f -"}}},
		{"named alb, missing", alb, nil, outcome{StatusFail, []string{"IngressClass alb does not exist"}}},
		{"not ALB", Inputs{AccessMode: AccessIngress, IngressClass: "nginx"}, []string{ingressClassYAML("nginx", ControllerNginxCommunity)},
			outcome{StatusSkip, []string{"IngressClass nginx is not an AWS ALB class"}}},
		{"tunnel mode", Inputs{AccessMode: AccessTunnel, IngressClass: "alb"}, []string{ingressClassYAML("alb", ControllerALB)},
			outcome{StatusSkip, []string{NotApplicable + "access mode is tunnel"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.expect(t, newKit(t, tt.yaml...).with(tt.in).run(ALBIngressClassCheck()))
		})
	}
}
