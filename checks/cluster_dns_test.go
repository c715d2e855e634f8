package checks

import "testing"

func TestClusterDNS(t *testing.T) {
	c := imageChart(t)
	kubeDNS := `apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec: {selector: {k8s-app: kube-dns}, ports: [{port: 53, protocol: UDP}]}`
	rke2 := `apiVersion: v1
kind: Service
metadata: {name: rke2-coredns-rke2-coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec: {selector: {k8s-app: kube-dns}, ports: [{port: 53, protocol: UDP}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: rke2-coredns-rke2-coredns, namespace: kube-system}
data:
  Corefile: |
    .:53 {
        kubernetes corp.internal in-addr.arpa ip6.arpa {
          pods insecure
        }
    }`
	t.Run("kube-dns", func(t *testing.T) {
		r := newKit(t, kubeDNS).with(imageInputs(t)).withChart(c).run(ClusterDNS())
		outcome{StatusPass, []string{"kube-dns.kube-system.svc.cluster.local", "Service kube-system/kube-dns exists"}}.expect(t, r)
	})
	t.Run("RKE2: another Service name and cluster domain", func(t *testing.T) {
		r := newKit(t, rke2).with(imageInputs(t)).withChart(c).run(ClusterDNS())
		outcome{StatusFail, []string{"Service kube-system/kube-dns does not exist", "kube-system/rke2-coredns-rke2-coredns",
			"the cluster domain is corp.internal", "--set internal-router.dnsService=rke2-coredns-rke2-coredns", "--set internal-router.clusterDomain=corp.internal"}}.expect(t, r)
	})
	t.Run("no DNS Service at all", func(t *testing.T) {
		r := newKit(t).with(imageInputs(t)).withChart(c).run(ClusterDNS())
		outcome{StatusFail, []string{"no Service is labelled k8s-app=kube-dns"}}.expect(t, r)
	})
	t.Run("IPv6 single-stack with the router's IPv6 off", func(t *testing.T) {
		v6 := `apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec: {selector: {k8s-app: kube-dns}, ports: [{port: 53, protocol: UDP}], ipFamilies: [IPv6], clusterIPs: ["fd00::a"]}`
		r := newKit(t, v6).with(imageInputs(t)).withChart(c).run(ClusterDNS())
		outcome{StatusWarn, []string{"IPv6 single-stack", "internal-router.ipv6.enabled=true"}}.expect(t, r)
	})
}
