package netpol

import (
	"net"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The NetworkPolicy semantics of networking.k8s.io/v1, as documented
// (https://kubernetes.io/docs/concepts/services-networking/network-policies/),
// evaluated for one connection (Judge). No maintained Go library evaluates
// them (the network-policy-api project's Policy Assistant is not published
// as a Go module), so this is small and table-tested against the documented
// rules (netpol_test.go):
//   - a pod is isolated for a direction when a policy of its namespace
//     selects it (podSelector) and lists that direction in policyTypes
//     (by default Ingress, and Egress when the policy has egress rules);
//   - an isolated pod's connection is allowed when a rule of any selecting
//     policy admits it: every peer when the rule names none, every port
//     when it names none; policies are additive;
//   - a peer is a podSelector (pods of the policy's namespace), a
//     namespaceSelector (every pod of the matching namespaces), both (the
//     matching pods of the matching namespaces), or an ipBlock (addresses
//     in the CIDR and not in its except list; not pods: their addresses are
//     not known before they run);
//   - a port is a protocol (TCP by default), a number or a name of the
//     destination container's ports, and an optional endPort.

// Endpoint is one side of a connection: a pod (labels, namespace and its
// namespace's labels) or an address outside the pod network.
type Endpoint struct {
	// Pod: the pod's namespace, the namespace's labels, the pod's labels.
	Namespace string
	NSLabels  map[string]string
	Labels    map[string]string
	// IP is set for an address (the API server, an external host whose
	// address is known); External marks a host outside the cluster whose
	// address is not known: only a rule admitting every address (no peer,
	// or an ipBlock of prefix length 0) admits it.
	IP       net.IP
	External bool
	// NamedPorts are the destination container's ports by name.
	NamedPorts map[string]int32
}

// IsPod reports whether e is a pod (neither an address nor an external host).
func (e Endpoint) IsPod() bool { return e.IP == nil && !e.External }

// Connection is one flow to judge: from, to, the destination port and
// protocol (TCP when empty).
type Connection struct {
	From, To Endpoint
	Port     int32
	Protocol corev1.Protocol
}

// Verdict is what the policies of one side decide.
type Verdict struct {
	// Isolated is true when a policy selects the pod for the direction.
	Isolated bool
	// Allowed is true when the pod is not isolated or a rule admits the
	// connection.
	Allowed bool
	// Selecting names the policies that select the pod for the direction.
	Selecting []string
}

// Judge judges one direction of conn under policies (those of the judged
// pod's namespace; others are ignored): its egress from conn.From, whose
// rules' peers must admit conn.To, or its ingress into conn.To, whose rules'
// peers must admit conn.From.
func Judge(policies []networkingv1.NetworkPolicy, conn Connection, dir networkingv1.PolicyType) Verdict {
	pod, peer := conn.From, conn.To
	if dir == networkingv1.PolicyTypeIngress {
		pod, peer = conn.To, conn.From
	}
	return policiesVerdict(policies, pod, dir, func(p networkingv1.NetworkPolicy) bool {
		for _, r := range policyRules(p, dir) {
			if peersAdmit(r.peers, p.Namespace, peer) && portsAdmit(r.ports, conn) {
				return true
			}
		}
		return false
	})
}

// rule is one egress or ingress rule: its peers (to or from) and ports.
type rule struct {
	peers []networkingv1.NetworkPolicyPeer
	ports []networkingv1.NetworkPolicyPort
}

// policyRules returns p's rules for dir.
func policyRules(p networkingv1.NetworkPolicy, dir networkingv1.PolicyType) []rule {
	var out []rule
	if dir == networkingv1.PolicyTypeEgress {
		for _, r := range p.Spec.Egress {
			out = append(out, rule{r.To, r.Ports})
		}
		return out
	}
	for _, r := range p.Spec.Ingress {
		out = append(out, rule{r.From, r.Ports})
	}
	return out
}

func policiesVerdict(policies []networkingv1.NetworkPolicy, pod Endpoint, dir networkingv1.PolicyType, admits func(networkingv1.NetworkPolicy) bool) Verdict {
	v := Verdict{Allowed: true}
	for _, p := range policies {
		if p.Namespace != pod.Namespace || !hasType(p, dir) || !policySelects(&p.Spec.PodSelector, pod.Labels) {
			continue
		}
		if !v.Isolated {
			v.Isolated, v.Allowed = true, false
		}
		v.Selecting = append(v.Selecting, p.Name)
		if admits(p) {
			v.Allowed = true
		}
	}
	return v
}

// hasType reports whether p applies to dir: its policyTypes, or by default
// Ingress always and Egress when it has egress rules.
func hasType(p networkingv1.NetworkPolicy, dir networkingv1.PolicyType) bool {
	if len(p.Spec.PolicyTypes) == 0 {
		return dir == networkingv1.PolicyTypeIngress || len(p.Spec.Egress) > 0
	}
	for _, t := range p.Spec.PolicyTypes {
		if t == dir {
			return true
		}
	}
	return false
}

func policySelects(sel *metav1.LabelSelector, l map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(labels.Set(l))
}

// peersAdmit reports whether a rule's peers (none: every peer) admit e,
// for a policy of namespace ns.
func peersAdmit(peers []networkingv1.NetworkPolicyPeer, ns string, e Endpoint) bool {
	if len(peers) == 0 {
		return true
	}
	for _, p := range peers {
		switch {
		case p.IPBlock != nil:
			if ipBlockAdmits(p.IPBlock, e) {
				return true
			}
		case !e.IsPod():
		case p.NamespaceSelector != nil:
			if policySelects(p.NamespaceSelector, e.NSLabels) && (p.PodSelector == nil || policySelects(p.PodSelector, e.Labels)) {
				return true
			}
		case p.PodSelector != nil:
			if e.Namespace == ns && policySelects(p.PodSelector, e.Labels) {
				return true
			}
		}
	}
	return false
}

func ipBlockAdmits(b *networkingv1.IPBlock, e Endpoint) bool {
	_, cidr, err := net.ParseCIDR(b.CIDR)
	if err != nil {
		return false
	}
	if e.External {
		ones, _ := cidr.Mask.Size()
		return ones == 0
	}
	if e.IP == nil || !cidr.Contains(e.IP) {
		return false
	}
	for _, x := range b.Except {
		if _, ex, err := net.ParseCIDR(x); err == nil && ex.Contains(e.IP) {
			return false
		}
	}
	return true
}

// portsAdmit reports whether a rule's ports (none: every port) admit the
// connection's port and protocol.
func portsAdmit(ports []networkingv1.NetworkPolicyPort, conn Connection) bool {
	if len(ports) == 0 {
		return true
	}
	proto := conn.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	for _, p := range ports {
		pp := corev1.ProtocolTCP
		if p.Protocol != nil {
			pp = *p.Protocol
		}
		if pp != proto {
			continue
		}
		if p.Port == nil {
			return true
		}
		port := p.Port.IntVal
		if p.Port.Type == intstr.String {
			n, ok := conn.To.NamedPorts[p.Port.StrVal]
			if !ok {
				continue
			}
			port = n
		}
		end := port
		if p.EndPort != nil {
			end = *p.EndPort
		}
		if conn.Port >= port && conn.Port <= end {
			return true
		}
	}
	return false
}
