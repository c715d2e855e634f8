package checks

import "testing"

func TestIngressTCP(t *testing.T) {
	ingress := Inputs{AccessMode: AccessIngress, IngressClass: "nginx", IngressHost: "rt.example.com"}
	nginx := ingressClassYAML("nginx", ControllerNginxCommunity)
	ctrl := controllerYAML("Deployment", "ingress-nginx", "ctrl", "registry.k8s.io/ingress-nginx/controller:v1.12.0", nil, nil, 1)
	awsNode := "apiVersion: v1\nkind: Node\nmetadata: {name: ip-10-0-0-1}\nspec: {providerID: aws:///eu-west-1a/i-0abc}\n"
	gceNode := "apiVersion: v1\nkind: Node\nmetadata: {name: gke-1}\nspec: {providerID: gce://p/z/gke-1}\n"
	svc := func(ann string) string {
		return lbServiceYAML("ingress-nginx", "lb", "ctrl", "LoadBalancer", ann, "lb.example.com")
	}
	tests := []struct {
		name string
		in   Inputs
		yaml []string
		want outcome
	}{
		{"NLB", ingress, []string{awsNode, nginx, ctrl, svc(`{service.beta.kubernetes.io/aws-load-balancer-type: nlb}`)},
			outcome{StatusPass, []string{"service.beta.kubernetes.io/aws-load-balancer-type: nlb"}}},
		{"backend protocol tcp", ingress, []string{awsNode, nginx, ctrl, svc(`{service.beta.kubernetes.io/aws-load-balancer-backend-protocol: tcp}`)},
			outcome{StatusPass, []string{"aws-load-balancer-backend-protocol: tcp"}}},
		{"neither", ingress, []string{awsNode, nginx, ctrl, svc("")},
			outcome{StatusFail, []string{"has neither", "kubectl annotate svc lb -n ingress-nginx"}}},
		{"off AWS", ingress, []string{gceNode, nginx, ctrl, svc("")},
			outcome{StatusSkip, []string{"not on AWS"}}},
		{"another controller", Inputs{AccessMode: AccessIngress, IngressClass: "traefik"}, []string{awsNode, ingressClassYAML("traefik", ControllerTraefik)},
			outcome{StatusSkip, []string{"the controller is Traefik"}}},
		{"service-mesh mode", Inputs{AccessMode: AccessServiceMesh}, nil, outcome{StatusSkip, []string{NotApplicable + "access mode is service-mesh"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.expect(t, newKit(t, tt.yaml...).with(tt.in).run(IngressTCPCheck()))
		})
	}
}
