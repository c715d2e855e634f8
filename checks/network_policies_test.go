package checks

import "testing"

func TestNetworkPolicies(t *testing.T) {
	c := imageChart(t)
	base := `apiVersion: v1
kind: Service
metadata: {name: kubernetes, namespace: default}
spec: {clusterIP: 10.96.0.1, clusterIPs: [10.96.0.1], ports: [{port: 443}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: kubernetes, namespace: default, labels: {kubernetes.io/service-name: kubernetes}}
addressType: IPv4
endpoints: [{addresses: [192.0.2.10]}]
ports: [{name: https, port: 6443, protocol: TCP}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec: {selector: {k8s-app: kube-dns}, ports: [{port: 53, protocol: UDP}]}`
	t.Run("no policies", func(t *testing.T) {
		r := newKit(t, base).with(imageInputs(t)).withChart(c).run(NetworkPolicies())
		outcome{StatusPass, []string{"no NetworkPolicy in namespace codefresh"}}.expect(t, r)
	})
	admitting := `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: runtime-egress, namespace: codefresh}
spec:
  podSelector: {}
  policyTypes: [Egress, Ingress]
  ingress: [{from: [{podSelector: {}}]}]
  egress:
  - to: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}}}]
    ports: [{protocol: UDP, port: 53}]
  - to: [{podSelector: {}}]
  - to: [{ipBlock: {cidr: 192.0.2.10/32}}]
    ports: [{port: 6443}]
  - to: [{ipBlock: {cidr: 0.0.0.0/0, except: [10.0.0.0/8]}}]
    ports: [{port: 443}]`
	t.Run("policies that admit every flow", func(t *testing.T) {
		r := newKit(t, base, admitting).with(imageInputs(t)).withChart(c).run(NetworkPolicies())
		outcome{StatusPass, []string{"admit the"}}.expect(t, r)
	})
	t.Run("the API server's Service port, not its endpoint port", func(t *testing.T) {
		svcPort := `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: api-443, namespace: codefresh}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
  - to: [{namespaceSelector: {}}]
    ports: [{protocol: UDP, port: 53}]
  - to: [{podSelector: {}}]
  - to: [{ipBlock: {cidr: 0.0.0.0/0}}]
    ports: [{port: 443}]`
		r := newKit(t, base, svcPort).with(imageInputs(t)).withChart(c).run(NetworkPolicies())
		// The pods that call the API server: bound to a role by the chart,
		// their token mounted (not ctrl's, not op's, whose ServiceAccount
		// has no binding).
		outcome{StatusFail, []string{"the API server (endpoint 192.0.2.10:6443): egress denied by api-443 (Deployment/app, Job/validate-values (hook))"}}.expect(t, r)
	})
}
