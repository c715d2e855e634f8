package checks

import (
	"strings"
	"testing"
)

// virtualServiceYAML routes each of paths on host to internal-router:80.
func virtualServiceYAML(host string, paths ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {namespace: codefresh, name: runtime}\nspec:\n  hosts: [" + host + "]\n  gateways: [istio-system/gw]\n  http:\n")
	for _, p := range paths {
		b.WriteString("  - match: [{uri: {prefix: " + p + "}}]\n    route: [{destination: {host: internal-router, port: {number: 80}}}]\n")
	}
	return b.String()
}

const (
	istioVSCRD = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: virtualservices.networking.istio.io}\n"
	runtimeCM  = "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: codefresh, name: codefresh-cm}\ndata: {ingressHost: \"https://rt.example.com\", version: \"0.1.70\"}\n"
)

// TestIstioVirtualService runs after the install in service-mesh mode (the
// chart's codefresh-cm names a non-tunnel host and no Ingress exists).
func TestIstioVirtualService(t *testing.T) {
	post := Inputs{AccessMode: AccessTunnel}
	all := []string{"/webhooks", "/app-proxy", "/workflows"}
	tests := []struct {
		name string
		yaml []string
		want outcome
	}{
		{"every path routed", []string{runtimeCM, istioVSCRD, virtualServiceYAML("rt.example.com", all...)},
			outcome{StatusPass, []string{"VirtualService runtime routes host rt.example.com as runtime 0.1.70 needs"}}},
		{"a path missing", []string{runtimeCM, istioVSCRD, virtualServiceYAML("rt.example.com", "/webhooks", "/app-proxy")},
			outcome{StatusFail, []string{"VirtualService runtime for host rt.example.com", "/workflows"}}},
		{"another host", []string{runtimeCM, istioVSCRD, virtualServiceYAML("other.example.com", all...)},
			outcome{StatusFail, []string{"no VirtualService in namespace codefresh for host rt.example.com"}}},
		{"no Istio API", []string{runtimeCM},
			outcome{StatusSkip, []string{"service-mesh mode without Istio: the networking.istio.io VirtualService API is not served"}}},
		{"tunnel runtime", nil, outcome{StatusSkip, []string{"access mode tunnel does not route through Istio"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.expect(t, newKit(t, tt.yaml...).with(post).inMode(ModePost).run(IstioVirtualService()))
		})
	}
}
