package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// gitRepository is the Argo CD repository the proxied values name: the Git
// provider the repo-server clones from.
const gitRepository = "https://git.corp.example/platform/runtime.git"

// proxiedValues are the chart's values with the global proxy set to
// proxyURL (and global.noProxy empty, the chart's default) and one Argo CD
// repository.
func proxiedValues(proxyURL string) string {
	return renderingValues + `  httpProxy: ` + proxyURL + `
  httpsProxy: ` + proxyURL + `
argo-cd:
  configs:
    repositories:
      runtime:
        url: ` + gitRepository + `
`
}

// leakEntry matches what egress-config says a proxied pod sends to the
// proxy: "Kind/name sends WHAT (HOST:PORT), WHAT (HOST:PORT) to the proxy".
var (
	leakEntry = regexp.MustCompile(`(\w+/[a-z0-9.-]+)(?: \(hook\))? sends (.*?) to the proxy`)
	hostPort  = regexp.MustCompile(`\(([^()\s]+:[0-9]+)\)`)
)

// egressSteps: egress-config with the chart's global proxy set to a
// forward proxy on 127.0.0.1, judged against what a Go HTTP client with
// each pod's rendered environment does (net/http's own proxy selection):
//  1. the plugin fails, naming the pods the global proxy does not reach
//     that call outside (gitops-operator the platform, tunnel-client the
//     tunnel server, the repo-server the Git provider the values name) with
//     the value that gives each one, and for each proxied pod the
//     in-cluster destinations its NO_PROXY does not cover; those and only
//     those reach the proxy from a client with the pod's environment
//     (`helm template`); internal-router, which names the platform only as
//     a CORS origin, is not named;
//  2. with exactly the flags the plugin printed, it passes (replayed from a
//     bundle); in `helm template` each of those pods now sends its outside
//     destination to the proxy and no in-cluster one.
func egressSteps(t *testing.T, c *tc.Cluster) {
	const ns = "proxied"
	proxy := startForwardProxy(t)
	values := chartValues(t, proxiedValues(proxy.URL))
	args := []string{"--only", "egress-config", "--chart", fixtureChart(t), "-f", values, "--release-name", runtimeRelease, "-n", ns}

	// 1.
	res, doc := c.RunJSON(t, nil, args...)
	wantCode(t, res, 1)
	ec := wantStatus(t, doc, "egress-config", "fail",
		"Deployment/gitops-operator calls the platform (g.codefresh.io) with no proxy", "the value that gives it one: gitops-operator.env",
		"Deployment/codefresh-tunnel-client calls the tunnel server (register-tunnels.cf-cd.com:443) with no proxy", "the value that gives it one: tunnel-client.env",
		"Deployment/argo-cd-repo-server calls the Git provider (git.corp.example:443) with no proxy", "the value that gives it one: argo-cd.repoServer.env",
		"Deployment/argo-gateway sends", "to the proxy: NO_PROXY (empty) does not cover them")
	if strings.Contains(ec.Message, "Deployment/internal-router") {
		t.Errorf("internal-router names the platform only as a CORS origin: %s", ec.Message)
	}
	outside := map[string]string{ // the pods to proxy, and what each calls outside
		"Deployment/gitops-operator":         "https://g.codefresh.io/",
		"Deployment/codefresh-tunnel-client": "https://register-tunnels.cf-cd.com:443/",
		"Deployment/argo-cd-repo-server":     "https://git.corp.example/",
	}
	leaks := map[string][]string{} // workload -> host:port sent to the proxy
	for _, m := range leakEntry.FindAllStringSubmatch(ec.Message, -1) {
		for _, hp := range hostPort.FindAllStringSubmatch(m[2], -1) {
			leaks[m[1]] = appendUnique(leaks[m[1]], hp[1])
		}
	}
	if len(leaks) < 4 {
		t.Fatalf("egress-config names %d proxied pods with leaks: %s", len(leaks), ec.Message)
	}
	pods, cms := renderedManifest(t, helmTemplate(t, ns, values))
	for w, dests := range leaks {
		env := podProxyEnv(t, pods, cms, w)
		got := viaProxy(t, proxy, env, urlsOf(dests))
		if strings.Join(got, " ") != strings.Join(sortedCopy(dests), " ") {
			t.Errorf("%s (env %v): a Go client sends %v to the proxy; egress-config says %v", w, env, got, sortedCopy(dests))
		}
	}

	// 2.
	sets := hintFlags(t, ec.Hint)
	res, doc = c.RunJSONReplayed(t, nil, append(append([]string(nil), args...), sets...)...)
	wantCode(t, res, 0)
	wantStatus(t, doc, "egress-config", "pass", "are proxied; NO_PROXY covers the in-cluster destinations")
	pods, cms = renderedManifest(t, helmTemplate(t, ns, values, sets...))
	for w, dests := range leaks {
		env := podProxyEnv(t, pods, cms, w)
		if got := viaProxy(t, proxy, env, urlsOf(dests)); len(got) != 0 {
			t.Errorf("with %v, %s (env %v) still sends %v to the proxy", sets, w, env, got)
		}
	}
	for w, u := range outside {
		env := podProxyEnv(t, pods, cms, w)
		host := strings.TrimSuffix(strings.TrimPrefix(u, "https://"), "/")
		if !strings.Contains(host, ":") {
			host += ":443"
		}
		if got := viaProxy(t, proxy, env, []string{u}); strings.Join(got, " ") != host {
			t.Errorf("with the printed values %s (env %v) sends %v to the proxy, want %s", w, env, got, host)
		}
	}
}

// podProxyEnv returns the proxy variables of the rendered pod of workload
// ("Kind/name"): those of its first container that sets any.
func podProxyEnv(t *testing.T, pods []renderedPod, cms map[string]map[string]string, workload string) map[string]string {
	t.Helper()
	for _, p := range pods {
		if p.Ref() != workload {
			continue
		}
		for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
			env := map[string]string{}
			for _, e := range c.Env {
				switch strings.ToUpper(e.Name) {
				case "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY":
					v := e.Value
					if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
						v = cms[e.ValueFrom.ConfigMapKeyRef.Name][e.ValueFrom.ConfigMapKeyRef.Key]
					}
					env[e.Name] = v
				}
			}
			if len(env) > 0 {
				return env
			}
		}
		t.Fatalf("%s sets no proxy variable", workload)
	}
	t.Fatalf("helm template renders no %s", workload)
	return nil
}

// urlsOf returns a URL for each host:port: https for port 443, else http.
func urlsOf(hostPorts []string) []string {
	out := make([]string, len(hostPorts))
	for i, hp := range hostPorts {
		scheme := "http"
		if strings.HasSuffix(hp, ":443") {
			scheme = "https"
		}
		out[i] = scheme + "://" + hp + "/"
	}
	return out
}

func sortedCopy(s []string) []string {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return sortedSet(m)
}

// dnsSteps: cluster-dns on a cluster without a kube-dns Service, then with
// RKE2's CoreDNS Service (rke2-coredns-rke2-coredns, labelled
// k8s-app=kube-dns) and its Corefile:
//  1. no Service labelled k8s-app=kube-dns: fail;
//  2. RKE2's: fail naming it and the values to set;
//  3. `helm template` with exactly those values renders internal-router's
//     resolver as that Service's name (Helm decides), and the plugin
//     passes with them.
func dnsSteps(t *testing.T, c *tc.Cluster) {
	const ns = "dns-check"
	values := chartValues(t, renderingValues)
	args := []string{"--only", "cluster-dns", "--chart", fixtureChart(t), "-f", values, "--release-name", runtimeRelease, "-n", ns}

	// 1.
	res, doc := c.RunJSON(t, nil, args...)
	wantCode(t, res, 1)
	wantStatus(t, doc, "cluster-dns", "fail", "kube-dns.kube-system.svc.cluster.local", "Service kube-system/kube-dns does not exist", "no Service is labelled k8s-app=kube-dns")

	// 2.
	const rke2 = "rke2-coredns-rke2-coredns"
	selector := map[string]string{"app.kubernetes.io/instance": "rke2-coredns", "app.kubernetes.io/name": "rke2-coredns", "k8s-app": "kube-dns"}
	if _, err := c.Kube.CoreV1().Services("kube-system").Create(bg, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: rke2, Labels: selector},
		Spec: corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{
			{Name: "udp-53", Port: 53, Protocol: corev1.ProtocolUDP}, {Name: "tcp-53", Port: 53, Protocol: corev1.ProtocolTCP}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Kube.CoreV1().ConfigMaps("kube-system").Create(bg, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: rke2},
		Data:       map[string]string{"Corefile": ".:53 {\n    errors\n    health\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n      pods insecure\n    }\n    forward . /etc/resolv.conf\n}\n"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res, doc = c.RunJSON(t, nil, args...)
	wantCode(t, res, 1)
	dns := wantStatus(t, doc, "cluster-dns", "fail", "kube-system/"+rke2, "--set internal-router.dnsService="+rke2)

	// 3.
	sets := hintFlags(t, dns.Hint)
	manifest := helmTemplate(t, ns, values, sets...)
	if want := "resolver " + rke2 + ".kube-system.svc.cluster.local"; !strings.Contains(manifest, want) {
		t.Errorf("helm template with %v renders no %q", sets, want)
	}
	res, doc = c.RunJSONReplayed(t, nil, append(append([]string(nil), args...), sets...)...)
	wantCode(t, res, 0)
	wantStatus(t, doc, "cluster-dns", "pass", "Service kube-system/"+rke2+" exists", "cluster domain cluster.local (CoreDNS Corefile)")
}

// policySteps: network-policies on the runtime namespace with live
// NetworkPolicies (the API server validates each) and RKE2's DNS Service
// (dnsSteps):
//  0. no NetworkPolicy, no proxy: network-policies and egress-config pass;
//  1. a default-deny egress policy: fail naming DNS, the API server and
//     the platform flows;
//  2. policies admitting DNS, every address on 443 (the API server's
//     ClusterIP:443 among them) and the namespace's pods: still fail for
//     the API server, whose endpoint address and port are what a policy
//     sees (argo-cd#18356);
//  3. a rule for the endpoint address and port: pass.
func policySteps(t *testing.T, c *tc.Cluster) {
	const ns = "policed"
	c.CreateNamespace(t, ns)
	values := chartValues(t, renderingValues)
	args := []string{"--only", "network-policies", "--chart", fixtureChart(t), "-f", values, "--release-name", runtimeRelease, "-n", ns}

	// 0.
	res, doc := c.RunJSONReplayed(t, nil, "--only", "network-policies,egress-config", "--chart", fixtureChart(t), "-f", values, "--release-name", runtimeRelease, "-n", ns)
	wantCode(t, res, 0)
	wantStatus(t, doc, "network-policies", "pass", "no NetworkPolicy in namespace "+ns)
	wantStatus(t, doc, "egress-config", "pass", "no proxy configured")

	// 1.
	create := func(name string, egress ...networkingv1.NetworkPolicyEgressRule) {
		t.Helper()
		if _, err := c.Kube.NetworkingV1().NetworkPolicies(ns).Create(bg, &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}, Egress: egress},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating NetworkPolicy %s: %v", name, err)
		}
	}
	create("default-deny-egress")
	res, doc = c.RunJSON(t, nil, args...)
	wantCode(t, res, 1)
	wantStatus(t, doc, "network-policies", "fail", "DNS kube-system/rke2-coredns-rke2-coredns (UDP 53): egress denied by default-deny-egress (",
		"the API server (endpoint", "the platform (g.codefresh.io), port 443: egress denied by default-deny-egress (")

	// 2.
	api, err := c.Kube.CoreV1().Services("default").Get(bg, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	port := func(p corev1.Protocol, n int) networkingv1.NetworkPolicyPort {
		v := intstr.FromInt32(int32(n))
		return networkingv1.NetworkPolicyPort{Protocol: &p, Port: &v}
	}
	create("allow-dns", networkingv1.NetworkPolicyEgressRule{
		To: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
		}},
		Ports: []networkingv1.NetworkPolicyPort{port(udp, 53), port(tcp, 53)},
	})
	create("allow-https-and-namespace",
		networkingv1.NetworkPolicyEgressRule{
			To:    []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: api.Spec.ClusterIP + "/32"}}, {IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0"}}},
			Ports: []networkingv1.NetworkPolicyPort{port(tcp, 443)},
		},
		networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}},
	)
	res, doc = c.RunJSON(t, nil, args...)
	wantCode(t, res, 1)
	np := wantStatus(t, doc, "network-policies", "fail", "the API server (endpoint")
	for _, flow := range []string{"DNS", "the platform", "Service "} {
		if strings.Contains(np.Message, flow) {
			t.Errorf("network-policies still denies a %s flow the policies admit: %s", flow, np.Message)
		}
	}

	// 3.
	slices, err := c.Kube.DiscoveryV1().EndpointSlices("default").List(bg, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kubernetes"})
	if err != nil || len(slices.Items) == 0 || len(slices.Items[0].Endpoints) == 0 || len(slices.Items[0].Ports) == 0 {
		t.Fatalf("the API server's EndpointSlice: %v %v", slices, err)
	}
	ep, epPort := slices.Items[0].Endpoints[0].Addresses[0], int(*slices.Items[0].Ports[0].Port)
	if !strings.Contains(np.Message, fmt.Sprintf("the API server (endpoint %s:%d)", ep, epPort)) {
		t.Errorf("network-policies does not name the API server's endpoint %s:%d: %s", ep, epPort, np.Message)
	}
	create("allow-apiserver-endpoint", networkingv1.NetworkPolicyEgressRule{
		To:    []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: ep + "/32"}}},
		Ports: []networkingv1.NetworkPolicyPort{port(tcp, epPort)},
	})
	res, doc = c.RunJSONReplayed(t, nil, args...)
	wantCode(t, res, 0)
	wantStatus(t, doc, "network-policies", "pass", "the 4 NetworkPolicies of namespace "+ns+" admit the")
}
