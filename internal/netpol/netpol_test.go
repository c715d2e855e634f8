package netpol

import (
	"net"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"
)

// TestNetPolSemantics holds the evaluator to the rules the Kubernetes
// documentation gives (https://kubernetes.io/docs/concepts/services-networking/network-policies/),
// one case per rule.
func TestNetPolSemantics(t *testing.T) {
	pol := func(doc string) networkingv1.NetworkPolicy {
		var p networkingv1.NetworkPolicy
		if err := yaml.Unmarshal([]byte(doc), &p); err != nil {
			t.Fatal(err)
		}
		if p.Namespace == "" {
			p.Namespace = "rt"
		}
		return p
	}
	src := Endpoint{Namespace: "rt", NSLabels: map[string]string{"kubernetes.io/metadata.name": "rt"}, Labels: map[string]string{"app": "a"}}
	peer := Endpoint{Namespace: "rt", NSLabels: src.NSLabels, Labels: map[string]string{"app": "b"}, NamedPorts: map[string]int32{"http": 8080}}
	other := Endpoint{Namespace: "other", NSLabels: map[string]string{"kubernetes.io/metadata.name": "other", "team": "x"}, Labels: map[string]string{"app": "b"}}
	api := Endpoint{IP: net.ParseIP("192.0.2.10")}
	ext := Endpoint{External: true}
	for _, c := range []struct {
		name     string
		policies []string
		to       Endpoint
		port     int32
		proto    corev1.Protocol
		egress   bool // else ingress into to
		want     bool
	}{
		{"no policy: not isolated", nil, peer, 80, "", true, true},
		{"ingress-only policy (default policyTypes) does not isolate egress", []string{`{metadata: {name: p}, spec: {podSelector: {}}}`}, peer, 80, "", true, true},
		{"egress rules make the default policyTypes include Egress", []string{`{metadata: {name: p}, spec: {podSelector: {}, egress: [{to: [{podSelector: {matchLabels: {app: c}}}]}]}}`}, peer, 80, "", true, false},
		{"policyTypes [Egress] with no rules denies all egress", []string{`{metadata: {name: p}, spec: {podSelector: {}, policyTypes: [Egress]}}`}, peer, 80, "", true, false},
		{"a policy that does not select the pod does not isolate it", []string{`{metadata: {name: p}, spec: {podSelector: {matchLabels: {app: z}}, policyTypes: [Egress]}}`}, peer, 80, "", true, true},
		{"policies are additive", []string{`{metadata: {name: p}, spec: {podSelector: {}, policyTypes: [Egress]}}`, `{metadata: {name: q}, spec: {podSelector: {}, egress: [{}]}}`}, peer, 80, "", true, true},
		{"podSelector peer: same namespace only", []string{`{metadata: {name: p}, spec: {podSelector: {}, egress: [{to: [{podSelector: {matchLabels: {app: b}}}]}]}}`}, other, 80, "", true, false},
		{"namespaceSelector peer", []string{`{metadata: {name: p}, spec: {podSelector: {}, egress: [{to: [{namespaceSelector: {matchLabels: {team: x}}}]}]}}`}, other, 80, "", true, true},
		{"namespaceSelector and podSelector in one peer: both must match", []string{`{metadata: {name: p}, spec: {podSelector: {}, egress: [{to: [{namespaceSelector: {matchLabels: {team: x}}, podSelector: {matchLabels: {app: c}}}]}]}}`}, other, 80, "", true, false},
		{"ports: protocol defaults to TCP", []string{`{metadata: {name: p}, spec: {podSelector: {}, egress: [{ports: [{port: 53}]}]}}`}, peer, 53, corev1.ProtocolUDP, true, false},
		{"ports: endPort range", []string{`{metadata: {name: p}, spec: {podSelector: {}, egress: [{ports: [{port: 8000, endPort: 9000}]}]}}`}, peer, 8080, "", true, true},
		{"ports: a named port of the destination", []string{`{metadata: {name: p}, spec: {podSelector: {}, egress: [{ports: [{port: http}]}]}}`}, peer, 8080, "", true, true},
		{"ipBlock admits an address in the CIDR", []string{`{metadata: {name: p}, spec: {podSelector: {}, egress: [{to: [{ipBlock: {cidr: 192.0.2.0/24}}]}]}}`}, api, 6443, "", true, true},
		{"ipBlock except", []string{`{metadata: {name: p}, spec: {podSelector: {}, egress: [{to: [{ipBlock: {cidr: 192.0.2.0/24, except: [192.0.2.10/32]}}]}]}}`}, api, 6443, "", true, false},
		{"ipBlock does not select pods", []string{`{metadata: {name: p}, spec: {podSelector: {}, egress: [{to: [{ipBlock: {cidr: 0.0.0.0/0}}]}]}}`}, peer, 80, "", true, false},
		{"an unknown external address: only 0.0.0.0/0 admits it", []string{`{metadata: {name: p}, spec: {podSelector: {}, egress: [{to: [{ipBlock: {cidr: 198.51.100.0/24}}]}]}}`}, ext, 443, "", true, false},
		{"pod selectors do not admit an address", []string{`{metadata: {name: p}, spec: {podSelector: {}, egress: [{to: [{namespaceSelector: {}}]}]}}`}, api, 6443, "", true, false},
		{"ingress: from a pod of the namespace", []string{`{metadata: {name: p}, spec: {podSelector: {matchLabels: {app: b}}, ingress: [{from: [{podSelector: {matchLabels: {app: a}}}]}]}}`}, peer, 80, "", false, true},
		{"ingress: default-deny", []string{`{metadata: {name: p}, spec: {podSelector: {}}}`}, peer, 80, "", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ps []networkingv1.NetworkPolicy
			for _, d := range c.policies {
				ps = append(ps, pol(d))
			}
			conn := Connection{From: src, To: c.to, Port: c.port, Protocol: c.proto}
			v := Judge(ps, conn, networkingv1.PolicyTypeIngress)
			if c.egress {
				v = Judge(ps, conn, networkingv1.PolicyTypeEgress)
			}
			if v.Allowed != c.want {
				t.Errorf("allowed %v, want %v (%+v)", v.Allowed, c.want, v)
			}
		})
	}
}
