package checks

import "testing"

func TestIngressReportStatus(t *testing.T) {
	in := func(class string) Inputs {
		return Inputs{AccessMode: AccessIngress, IngressClass: class, IngressHost: "rt.example.com"}
	}
	nginxImage := "registry.k8s.io/ingress-nginx/controller:v1.12.0"
	f5Image := "nginx/nginx-ingress:4.0.0"
	traefik := func(args ...string) string {
		return controllerYAML("Deployment", "traefik", "traefik", "traefik:v3.1", append([]string{"--providers.kubernetesingress"}, args...), nil, 1)
	}
	operator := func(enable string) string {
		return "apiVersion: k8s.nginx.org/v1alpha1\nkind: NginxIngressController\nmetadata: {namespace: nginx, name: op}\nspec: {ingressClass: f5, reportIngressStatus: {enable: " + enable + "}}\n"
	}
	tests := []struct {
		name string
		in   Inputs
		yaml []string
		want outcome
	}{
		{"ingress-nginx by default", in("nginx"), []string{ingressClassYAML("nginx", ControllerNginxCommunity), controllerYAML("Deployment", "ingress-nginx", "c", nginxImage, nil, nil, 1)},
			outcome{StatusPass, []string{"NGINX Community (ingress-nginx) reports Ingress status (status updates on (default))"}}},
		{"ingress-nginx --update-status=false", in("nginx"), []string{ingressClassYAML("nginx", ControllerNginxCommunity), controllerYAML("Deployment", "ingress-nginx", "c", nginxImage, []string{"--update-status=false"}, nil, 1)},
			outcome{StatusFail, []string{"Deployment/ingress-nginx/c: --update-status=false disables status updates", "remove --update-status=false"}}},
		{"NGINX by F5 with -report-ingress-status", in("f5"), []string{ingressClassYAML("f5", ControllerNginxF5), controllerYAML("Deployment", "nginx", "nic", f5Image, []string{"-ingress-class=f5", "-report-ingress-status"}, nil, 1)},
			outcome{StatusPass, []string{"(-report-ingress-status)"}}},
		{"NGINX by F5 without it", in("f5"), []string{ingressClassYAML("f5", ControllerNginxF5), controllerYAML("Deployment", "nginx", "nic", f5Image, []string{"-ingress-class=f5"}, nil, 1)},
			outcome{StatusFail, []string{"-report-ingress-status is not set", "kubectl edit deployment nic -n nginx"}}},
		{"NGINX operator enables it", in("f5"), []string{ingressClassYAML("f5", ControllerNginxF5), operator("true")},
			outcome{StatusPass, []string{"NginxIngressController nginx/op has spec.reportIngressStatus.enable: true"}}},
		{"NGINX operator does not", in("f5"), []string{ingressClassYAML("f5", ControllerNginxF5), operator("false")},
			outcome{StatusFail, []string{"NginxIngressController nginx/op does not enable spec.reportIngressStatus"}}},
		{"Traefik publishes its Service", in("traefik"), []string{ingressClassYAML("traefik", ControllerTraefik),
			traefik("--providers.kubernetesingress.ingressendpoint.publishedservice=traefik/traefik"),
			lbServiceYAML("traefik", "traefik", "traefik", "LoadBalancer", "", "")},
			outcome{StatusPass, []string{"Traefik publishes its Service address to Ingress status"}}},
		{"Traefik names a missing Service", in("traefik"), []string{ingressClassYAML("traefik", ControllerTraefik),
			traefik("--providers.kubernetesingress.ingressendpoint.publishedservice=traefik/gone")},
			outcome{StatusFail, []string{"publishedservice names Service traefik/gone, which does not exist"}}},
		{"Traefik without it", in("traefik"), []string{ingressClassYAML("traefik", ControllerTraefik), traefik()},
			outcome{StatusFail, []string{"publishedservice is not set"}}},
		{"ALB: nothing documented", in("alb"), []string{ingressClassYAML("alb", ControllerALB)},
			outcome{StatusSkip, []string{"no report-status setting is documented for AWS ALB"}}},
		{"no controller", in("nginx"), []string{ingressClassYAML("nginx", ControllerNginxCommunity)},
			outcome{StatusSkip, []string{"no controller workload for IngressClass nginx"}}},
		{"tunnel mode", Inputs{AccessMode: AccessTunnel}, nil, outcome{StatusSkip, []string{NotApplicable + "access mode is tunnel"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.expect(t, newKit(t, tt.yaml...).with(tt.in).run(IngressReportStatusCheck()))
		})
	}
}
