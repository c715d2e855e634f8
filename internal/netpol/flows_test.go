package netpol

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestFlows: DNS first, then each destination: the API server at its
// endpoints, an external host (an IP when its address is one, through the
// pod's proxy when its environment sends it there), a Service at the pod
// it selects on the targetPort.
func TestFlows(t *testing.T) {
	r, pods := rendering(t, egressManifest)
	rtLabels := map[string]string{"kubernetes.io/metadata.name": "rt"}
	s := Surroundings{
		Namespace: "rt", NSLabels: rtLabels,
		DNS:       []DNSService{{Service: cluster.Service{Namespace: "kube-system", Name: "kube-dns", Selector: map[string]string{"k8s-app": "kube-dns"}}, NSLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}}},
		APIServer: []cluster.Endpoint{{IP: "192.0.2.10", Port: 6443}},
		Services:  RenderedServices(r), Pods: pods,
	}
	app := Egress(r, pods, Release{Namespace: "rt", PlatformURL: "https://g.codefresh.io", APIServerIP: "10.96.0.1"})[0]
	src := Endpoint{Namespace: "rt", NSLabels: rtLabels, Labels: app.Pod.Labels}
	var got []string
	flows := Flows(src, app, s)
	for _, f := range flows {
		got = append(got, f.What)
	}
	want := []string{
		"DNS kube-system/kube-dns (UDP 53)",
		"Service op (Deployment/op, port 9090)",
		"the platform (g.codefresh.io) through the proxy proxy.corp:3128, port 3128",
		"the API server (endpoint 192.0.2.10:6443)",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("flows %q, want %q", got, want)
	}
	if dns := flows[0].Conn; dns.Protocol != corev1.ProtocolUDP || dns.Port != 53 || dns.To.Namespace != "kube-system" || flows[0].Ingress {
		t.Errorf("DNS flow %+v", flows[0])
	}
	if svc := flows[1]; !svc.Ingress || svc.Conn.To.Labels["app"] != "op" || svc.Conn.Port != 9090 {
		t.Errorf("Service flow %+v", svc)
	}
	if api := flows[3].Conn; api.To.IP.String() != "192.0.2.10" || api.Port != 6443 {
		t.Errorf("API server flow %+v", api)
	}
	// A proxy given by IP is an address a policy's ipBlock can admit.
	app.HTTPSProxy = "http://198.51.100.7:3128"
	if f := Flows(src, app, Surroundings{})[0]; f.Conn.To.IP.String() != "198.51.100.7" || f.Conn.To.External {
		t.Errorf("proxy by address: %+v", f)
	}
}

func TestFlowJudge(t *testing.T) {
	var pol networkingv1.NetworkPolicy
	if err := yaml.Unmarshal([]byte(`{metadata: {name: only-dns, namespace: rt}, spec: {podSelector: {}, policyTypes: [Egress, Ingress], egress: [{ports: [{protocol: UDP, port: 53}]}]}}`), &pol); err != nil {
		t.Fatal(err)
	}
	src := Endpoint{Namespace: "rt", Labels: map[string]string{"app": "a"}}
	dns := Flow{Conn: Connection{From: src, To: Endpoint{Namespace: "kube-system"}, Port: 53, Protocol: corev1.ProtocolUDP}}
	if d := dns.Judge([]networkingv1.NetworkPolicy{pol}); d != nil {
		t.Errorf("DNS denied: %+v", d)
	}
	ext := Flow{Conn: Connection{From: src, To: Endpoint{External: true}, Port: 443}}
	if d := ext.Judge([]networkingv1.NetworkPolicy{pol}); d == nil || d.Dir != networkingv1.PolicyTypeEgress || strings.Join(d.Policies, ",") != "only-dns" {
		t.Errorf("external: %+v", d)
	}
	// Egress admitted, the destination pod's ingress denied.
	pol.Spec.Egress = append(pol.Spec.Egress, networkingv1.NetworkPolicyEgressRule{})
	svc := Flow{Conn: Connection{From: src, To: Endpoint{Namespace: "rt", Labels: map[string]string{"app": "b"}}, Port: 8080}, Ingress: true}
	if d := svc.Judge([]networkingv1.NetworkPolicy{pol}); d == nil || d.Dir != networkingv1.PolicyTypeIngress {
		t.Errorf("ingress: %+v", d)
	}
}

func TestProxyFor(t *testing.T) {
	p := PodEgress{Proxied: true, HTTPSProxy: "http://proxy.corp", NoProxy: ".svc,op"}
	for _, c := range []struct {
		dest, own, want string
	}{
		{"https://g.codefresh.io", "", "http://proxy.corp:80"},
		{"http://op:8080", "", ""},
		{"ssh://github.com:22", "", ""},
		{"https://github.com:443", "https://git-proxy.corp", "https://git-proxy.corp:443"},
	} {
		got := ""
		if u := ProxyFor(p, Destination{URL: mustURL(t, c.dest), Proxy: c.own}); u != nil {
			got = u.String()
		}
		if got != c.want {
			t.Errorf("ProxyFor(%s, own %q) = %q, want %q", c.dest, c.own, got, c.want)
		}
	}
}

// TestProxyFindings: the release's proxy reaches app, not op, which calls
// the platform directly; app's NO_PROXY sends Service op and the API
// server to the proxy; op lacks the platform CA.
func TestProxyFindings(t *testing.T) {
	platform := Destination{URL: mustURL(t, "https://g.codefresh.io"), What: WhatPlatform, External: true}
	svc := Destination{URL: mustURL(t, "http://op:8080"), What: "Service op", Service: "op"}
	api := Destination{URL: mustURL(t, "https://10.96.0.1:443"), What: WhatAPIServer}
	git := Destination{URL: mustURL(t, "https://github.com:443"), What: WhatGit, External: true, Proxy: "http://git-proxy"}
	pods := []PodEgress{
		{Proxied: true, HTTPProxy: "http://proxy.corp:3128", HTTPSProxy: "http://proxy.corp:3128", NoProxy: ".svc", MountsCA: true, Dests: []Destination{svc, platform, api}},
		{Dests: []Destination{platform, svc}},
		{Dests: []Destination{git}},
	}
	rep := ProxyFindings(pods, Proxy{NoProxy: ".svc,op"}, true)
	if rep.Proxy.HTTPS != "http://proxy.corp:3128" || !rep.Proxy.Set() {
		t.Errorf("the release's proxy, from the first proxied pod: %+v", rep.Proxy)
	}
	if rep.External != 2 || rep.Proxied != 1 {
		t.Errorf("external %d, proxied %d", rep.External, rep.Proxied)
	}
	if f := rep.Pods[0]; f.Direct != nil || !slices.Equal(f.Leaks, []string{"Service op (op:8080)", "the API server (10.96.0.1:443)"}) || f.NoCA {
		t.Errorf("app: %+v", f)
	}
	// op gets global's NO_PROXY, which covers op but not the API server.
	if f := rep.Pods[1]; !slices.Equal(f.Direct, []string{"the platform (g.codefresh.io)"}) || f.Leaks != nil || !f.NoCA {
		t.Errorf("op: %+v", f)
	}
	if f := rep.Pods[2]; f.Direct != nil || f.NoCA {
		t.Errorf("repo, with its repository's own proxy: %+v", f)
	}
	if !slices.Equal(rep.NoProxyAdd, []string{"10.96.0.1", "op"}) {
		t.Errorf("NO_PROXY to add %q", rep.NoProxyAdd)
	}
	if rep := ProxyFindings(pods[1:], Proxy{}, false); rep.Proxy.Set() || rep.Pods[0].Direct != nil || rep.NoProxyAdd != nil {
		t.Errorf("no proxy anywhere: %+v", rep)
	}
}
