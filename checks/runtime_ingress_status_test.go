package checks

import (
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/installed"
)

// runtimeIngressYAML is the chart's runtime Ingress of class nginx for
// rt.example.com, with address (none when "").
func runtimeIngressYAML(name, address string) string {
	status := ""
	if address != "" {
		status = "status: {loadBalancer: {ingress: [{ip: " + address + "}]}}"
	}
	return "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {namespace: codefresh, name: " + name + "}\n" +
		"spec: {ingressClassName: nginx, rules: [{host: rt.example.com}]}\n" + status + "\n"
}

func TestRuntimeIngressStatus(t *testing.T) {
	post := Inputs{AccessMode: AccessTunnel}
	tests := []struct {
		name string
		in   Inputs
		yaml []string
		want outcome
	}{
		{"address reported", post, []string{runtimeIngressYAML(installed.IngressName, "203.0.113.7")},
			outcome{StatusPass, []string{"Ingress codefresh/" + installed.IngressName + " has address 203.0.113.7"}}},
		{"legacy Ingress with an address", post, []string{runtimeIngressYAML(installed.LegacyIngressName, "203.0.113.7")},
			outcome{StatusPass, []string{"Ingress codefresh/" + installed.LegacyIngressName}}},
		{"no address", post, []string{runtimeIngressYAML(installed.IngressName, "")},
			outcome{StatusFail, []string{"(class nginx) has no address in status.loadBalancer.ingress", "--only ingress-report-status --ingress-class nginx"}}},
		{"ingress mode, no Ingress", Inputs{AccessMode: AccessIngress}, nil,
			outcome{StatusFail, []string{"no runtime Ingress (" + installed.IngressName + " or " + installed.LegacyIngressName + ") in namespace codefresh"}}},
		{"tunnel runtime", post, nil,
			outcome{StatusSkip, []string{"not in ingress mode (access mode tunnel)"}}},
		{"not before install", Inputs{AccessMode: AccessIngress}, nil,
			outcome{StatusSkip, []string{NotApplicable + "runs after the install only"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mode := ModePost
			if tt.name == "not before install" {
				mode = ModePre
			}
			tt.want.expect(t, newKit(t, tt.yaml...).with(tt.in).inMode(mode).run(RuntimeIngressStatus()))
		})
	}
}
