package checks

import "testing"

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
		{"address reported", post, []string{runtimeIngressYAML(RuntimeIngressName, "203.0.113.7")},
			outcome{StatusPass, []string{"Ingress codefresh/" + RuntimeIngressName + " has address 203.0.113.7"}}},
		{"legacy Ingress with an address", post, []string{runtimeIngressYAML(LegacyRuntimeIngressName, "203.0.113.7")},
			outcome{StatusPass, []string{"Ingress codefresh/" + LegacyRuntimeIngressName}}},
		{"no address", post, []string{runtimeIngressYAML(RuntimeIngressName, "")},
			outcome{StatusFail, []string{"(class nginx) has no address in status.loadBalancer.ingress", "--only ingress-report-status --ingress-class nginx"}}},
		{"ingress mode, no Ingress", Inputs{AccessMode: AccessIngress}, nil,
			outcome{StatusFail, []string{"no runtime Ingress (" + RuntimeIngressName + " or " + LegacyRuntimeIngressName + ") in namespace codefresh"}}},
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
