package netpol

import (
	"net"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// Destination is one place a rendered pod connects to.
type Destination struct {
	// URL is what the pod dials ("https://g.codefresh.io",
	// "http://cap-app-proxy:3017", "https://10.96.0.1:443"); its Host is
	// empty for a Git provider the values do not name.
	URL *url.URL
	// What names it: "the platform", "the tunnel server", "the Git
	// provider", "Service cap-app-proxy", "the API server".
	What string
	// External is true for a destination outside the cluster.
	External bool
	// Service is the rendered Service an in-cluster destination is ("" for
	// others).
	Service string
	// Proxy is the proxy the destination is reached through whatever the
	// pod's environment says (an Argo CD repository's proxy field); "" for
	// none.
	Proxy string
}

// The names (Destination.What) of the destinations the egress of a pod
// holds besides Services.
const (
	WhatPlatform  = "the platform"
	WhatTunnel    = "the tunnel server"
	WhatGit       = "the Git provider"
	WhatAPIServer = "the API server"
)

// Label names the destination with its host: "the platform
// (g.codefresh.io)".
func (d Destination) Label() string {
	if d.URL.Host == "" {
		return d.What
	}
	return d.What + " (" + d.URL.Host + ")"
}

// Port returns a destination's port: its URL's, else its scheme's (http 80,
// ssh 22, else 443).
func (d Destination) Port() int32 {
	if n, err := strconv.Atoi(d.URL.Port()); err == nil {
		return int32(n)
	}
	switch d.URL.Scheme {
	case "http":
		return 80
	case "ssh":
		return 22
	}
	return 443
}

// PortOf is the port a URL is dialled at (see Destination.Port).
func PortOf(u *url.URL) int32 { return Destination{URL: u}.Port() }

// PodEgress is what one rendered pod needs to reach and how: its proxy
// environment, its CA mounts and its destinations.
type PodEgress struct {
	Pod chart.Pod
	// Proxy is the pod's proxy environment (HTTP_PROXY, HTTPS_PROXY,
	// NO_PROXY, either case; the last container that sets them).
	HTTPProxy, HTTPSProxy, NoProxy string
	Proxied                        bool
	// NoProxyFrom names the Secret and key NO_PROXY is read from (its
	// value is then never printed); "" when it is not a Secret's.
	NoProxyFrom string
	// MountsCA is true when a volume of the pod is the platform CA Secret.
	MountsCA bool
	// CallsAPI is true when the pod calls the Kubernetes API server (see
	// Egress).
	CallsAPI bool
	Dests    []Destination
}

// Release is what the egress of a rendering depends on besides the
// rendering itself.
type Release struct {
	// Namespace is the release namespace: that of a manifest that names
	// none.
	Namespace string
	// PlatformURL is global.codefresh.url; TunnelServer the tunnel
	// server's host[:port] (port 443 by default), called in tunnel mode
	// (Tunnel) only.
	PlatformURL, TunnelServer string
	Tunnel                    bool
	// PlatformCASecret is the Secret of the platform CA ("" for none).
	PlatformCASecret string
	// APIServerIP is the ClusterIP of Service default/kubernetes ("": not
	// known, and the API server is no destination).
	APIServerIP string
}

// Egress works out the egress of every pod of a rendering (pods, hooks
// included, as chart.Rendering.Images reads them):
//   - the platform, when the pod's environment, args or mounted
//     configuration (ConfigMaps and Secrets of the release, projected ones
//     too) name its host; a CORS origin (internal-router's
//     Access-Control-Allow-Origin, app-proxy's CORS) is not a call;
//   - the tunnel server, likewise, in tunnel mode, for a pod that is not a
//     hook (tunnel-client's frpc.ini names it; the hooks' values dump names
//     it without calling it);
//   - the Git provider, for Argo CD's repo-server: each repository and
//     credential template URL the release's Argo CD Secrets hold
//     (argo-cd.configs.repositories, credentialTemplates), or one the
//     values do not name;
//   - the in-cluster Services its environment names;
//   - the API server (its ClusterIP and port 443, as client-go dials it
//     from KUBERNETES_SERVICE_HOST) for a pod that calls it: its
//     ServiceAccount token is mounted (automountServiceAccountToken of the
//     pod, else of its ServiceAccount, true by default) and the chart
//     grants that ServiceAccount API permissions (it is a subject of a
//     RoleBinding or ClusterRoleBinding the release renders, e.g.
//     https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/app-proxy/rbac.yaml):
//     the chart binds a role to the components that talk to the API server
//     and to no other (redis, internal-router, Argo CD's dex have none).
func Egress(r *chart.Rendering, pods []chart.Pod, rel Release) []PodEgress {
	er := egressReader{rel: rel, ro: readRendered(r, rel.Namespace), env: r.EnvSources()}
	er.platform, _ = url.Parse(rel.PlatformURL)
	er.tunnelHost, er.tunnelPort = plan.HostPort(rel.TunnelServer, "443")
	out := make([]PodEgress, 0, len(pods))
	for _, p := range pods {
		out = append(out, er.pod(p))
	}
	return out
}

// egressReader reads the egress of the pods of one rendering.
type egressReader struct {
	rel                    Release
	ro                     renderedObjects
	env                    *chart.EnvSources
	platform               *url.URL
	tunnelHost, tunnelPort string
}

// pod reads the egress of pod p.
func (er *egressReader) pod(p chart.Pod) PodEgress {
	e := PodEgress{Pod: p}
	var text strings.Builder
	er.mounts(&e, &text)
	seen := map[string]bool{}
	add := func(d Destination) {
		if k := d.What + " " + d.URL.String(); !seen[k] {
			seen[k] = true
			e.Dests = append(e.Dests, d)
		}
	}
	er.containers(&e, &text, add)
	t := withoutCORS(text.String())
	if er.platform != nil && er.platform.Host != "" && strings.Contains(t, er.platform.Host) {
		add(Destination{URL: er.platform, What: WhatPlatform, External: true})
	}
	if er.rel.Tunnel && p.Hook == "" && er.tunnelHost != "" && strings.Contains(t, er.tunnelHost) {
		add(Destination{URL: &url.URL{Scheme: "https", Host: net.JoinHostPort(er.tunnelHost, er.tunnelPort)}, What: WhatTunnel, External: true})
	}
	if p.Labels["app.kubernetes.io/component"] == plan.RepoServerComponent {
		if len(er.ro.repos) == 0 {
			add(Destination{URL: &url.URL{Scheme: "https"}, What: WhatGit + " (no repository URL in the values: argo-cd.configs.repositories, credentialTemplates)", External: true})
		}
		for _, r := range er.ro.repos {
			add(Destination{URL: r.url, What: WhatGit, External: true, Proxy: r.proxy})
		}
	}
	e.CallsAPI = er.ro.callsAPI(p, PodNamespace(p, er.rel.Namespace))
	if er.rel.APIServerIP != "" && e.CallsAPI {
		add(Destination{URL: &url.URL{Scheme: "https", Host: net.JoinHostPort(er.rel.APIServerIP, "443")}, What: WhatAPIServer})
	}
	return e
}

// mounts writes the data of the ConfigMaps and Secrets e's pod mounts
// (projected ones too) to text, and sets e.MountsCA.
func (er *egressReader) mounts(e *PodEgress, text *strings.Builder) {
	mount := func(kind, name string) {
		text.WriteString(er.ro.text[kind+"/"+name])
		if kind == "Secret" && er.rel.PlatformCASecret != "" && name == er.rel.PlatformCASecret {
			e.MountsCA = true
		}
	}
	for _, v := range e.Pod.Spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			mount("ConfigMap", v.ConfigMap.Name)
		case v.Secret != nil:
			mount("Secret", v.Secret.SecretName)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				switch {
				case s.ConfigMap != nil:
					mount("ConfigMap", s.ConfigMap.Name)
				case s.Secret != nil:
					mount("Secret", s.Secret.Name)
				}
			}
		}
	}
}

// containers reads the args, commands and environments of e's pod's init
// containers and containers: the proxy variables into e, every other
// value (not a CORS origin) into text, and each Service a value names to
// add.
func (er *egressReader) containers(e *PodEgress, text *strings.Builder, add func(Destination)) {
	spec := e.Pod.Spec
	for _, c := range append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...) {
		text.WriteString(strings.Join(c.Args, "\n") + "\n" + strings.Join(c.Command, "\n") + "\n")
		for _, ev := range er.env.ContainerEnv(c) {
			v := ev.Value
			switch name := strings.ToUpper(ev.Name); {
			case name == "HTTP_PROXY":
				e.HTTPProxy, e.Proxied = v, e.Proxied || v != ""
				continue
			case name == "HTTPS_PROXY":
				e.HTTPSProxy, e.Proxied = v, e.Proxied || v != ""
				continue
			case name == "NO_PROXY":
				e.NoProxy, e.NoProxyFrom = v, ""
				if ev.Secret {
					e.NoProxyFrom = ev.From
				}
				continue
			case strings.Contains(name, "CORS"), strings.Contains(name, "ORIGIN"):
				continue
			}
			text.WriteString(v + "\n")
			if d, ok := serviceDestination(v, er.ro.services); ok {
				add(d)
			}
		}
	}
}

// PodNamespace is the namespace a rendered pod runs in: its manifest's,
// else the release namespace ns.
func PodNamespace(p chart.Pod, ns string) string {
	if p.Namespace != "" {
		return p.Namespace
	}
	return ns
}

// withoutCORS drops the lines of a configuration that name a CORS origin
// (Access-Control-Allow-Origin, cors: ...): a server that allows the
// platform's pages to call it does not call the platform.
func withoutCORS(s string) string {
	lines := strings.Split(s, "\n")
	kept := lines[:0]
	for _, l := range lines {
		low := strings.ToLower(l)
		if !strings.Contains(low, "cors") && !strings.Contains(low, "allow-origin") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// serviceDestination reads an environment value as an in-cluster
// destination: a URL or host:port whose host is a rendered Service (by its
// short name, or name.namespace[.svc[.domain]]).
func serviceDestination(v string, services map[string]RenderedService) (Destination, bool) {
	v = strings.TrimSpace(v)
	if v == "" || strings.ContainsAny(v, " \n") {
		return Destination{}, false
	}
	raw := v
	if !strings.Contains(v, "://") {
		raw = "http://" + v
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return Destination{}, false
	}
	name := strings.SplitN(u.Hostname(), ".", 2)[0]
	if _, ok := services[name]; !ok {
		return Destination{}, false
	}
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		u.Host = net.JoinHostPort(u.Hostname(), port)
	}
	return Destination{URL: u, What: "Service " + name, Service: name}, true
}
