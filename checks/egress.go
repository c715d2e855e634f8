package checks

import (
	"cmp"
	"context"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// destination is one place a rendered pod connects to.
type destination struct {
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

// label names the destination with its host: "the platform
// (g.codefresh.io)".
func (d destination) label() string {
	if d.URL.Host == "" {
		return d.What
	}
	return d.What + " (" + d.URL.Host + ")"
}

// podEgress is what one rendered pod needs to reach and how: its proxy
// environment, its CA mounts and its destinations.
type podEgress struct {
	Pod chart.Pod
	// Proxy is the pod's proxy environment (HTTP_PROXY, HTTPS_PROXY,
	// NO_PROXY, either case; the first container that sets them).
	HTTPProxy, HTTPSProxy, NoProxy string
	Proxied                        bool
	// NoProxyFrom names the Secret and key NO_PROXY is read from (its
	// value is then never printed); "" when it is not a Secret's.
	NoProxyFrom string
	// MountsCA is true when a volume of the pod is the platform CA Secret.
	MountsCA bool
	// CallsAPI is true when the pod calls the Kubernetes API server (see
	// egressOfRun).
	CallsAPI bool
	Dests    []destination
}

// egressOfRun works out every rendered pod's egress, once per snapshot:
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
//
// It reads the run's rendering first (imagesOfRun: skip is set when there
// is none to read).
func egressOfRun(ctx context.Context, env *Env) (ri *renderedImages, pods []podEgress, skip *Result, err error) {
	if ri, skip, err = imagesOfRun(ctx, env); skip != nil || err != nil {
		return nil, nil, skip, err
	}
	pods, err = memoOr(env, "egress/pods", func() ([]podEgress, error) {
		apiIP := ""
		if svc, found, err := env.Cluster.Service("default", "kubernetes"); err != nil {
			return nil, err
		} else if found && len(svc.ClusterIPs) > 0 {
			apiIP = svc.ClusterIPs[0]
		}
		in := env.Inputs
		ro := readRendered(ri.r, in.Namespace)
		envSrc := ri.r.EnvSources()
		platform, _ := url.Parse(in.PlatformURL)
		tunnelHost, tunnelPort := plan.HostPort(in.TunnelServer, "443")
		out := make([]podEgress, 0, len(ri.pods))
		for _, p := range ri.pods {
			e := podEgress{Pod: p}
			var text strings.Builder
			mount := func(kind, name string) {
				text.WriteString(ro.text[kind+"/"+name])
				if kind == "Secret" && in.PlatformCASecret != "" && name == in.PlatformCASecret {
					e.MountsCA = true
				}
			}
			for _, v := range p.Spec.Volumes {
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
			seen := map[string]bool{}
			add := func(d destination) {
				if k := d.What + " " + d.URL.String(); !seen[k] {
					seen[k] = true
					e.Dests = append(e.Dests, d)
				}
			}
			for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
				text.WriteString(strings.Join(c.Args, "\n") + "\n" + strings.Join(c.Command, "\n") + "\n")
				for _, ev := range envSrc.ContainerEnv(c) {
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
					if d, ok := serviceDestination(v, ro.services); ok {
						add(d)
					}
				}
			}
			t := withoutCORS(text.String())
			if platform != nil && platform.Host != "" && strings.Contains(t, platform.Host) {
				add(destination{URL: platform, What: "the platform", External: true})
			}
			if in.AccessMode == AccessTunnel && p.Hook == "" && tunnelHost != "" && strings.Contains(t, tunnelHost) {
				add(destination{URL: &url.URL{Scheme: "https", Host: net.JoinHostPort(tunnelHost, tunnelPort)}, What: "the tunnel server", External: true})
			}
			if p.Labels["app.kubernetes.io/component"] == plan.RepoServerComponent {
				if len(ro.repos) == 0 {
					add(destination{URL: &url.URL{Scheme: "https"}, What: "the Git provider (no repository URL in the values: argo-cd.configs.repositories, credentialTemplates)", External: true})
				}
				for _, r := range ro.repos {
					add(destination{URL: r.url, What: "the Git provider", External: true, Proxy: r.proxy})
				}
			}
			e.CallsAPI = ro.callsAPI(p, podNamespace(p, in))
			if apiIP != "" && e.CallsAPI {
				add(destination{URL: &url.URL{Scheme: "https", Host: net.JoinHostPort(apiIP, "443")}, What: "the API server"})
			}
			out = append(out, e)
		}
		return out, nil
	})
	return ri, pods, nil, err
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

// gitRepository is a repository or credential template of the release's
// Argo CD Secrets.
type gitRepository struct {
	url   *url.URL
	proxy string
}

// renderedObjects is what the egress checks read of a rendering besides its
// pods.
type renderedObjects struct {
	// text is each ConfigMap's and Secret's data ("Kind/name"), joined.
	text     map[string]string
	services map[string]renderedService
	repos    []gitRepository
	// bound are the ServiceAccounts ("namespace/name") a RoleBinding or
	// ClusterRoleBinding of the release names; automount their
	// automountServiceAccountToken, when set.
	bound     map[string]bool
	automount map[string]bool
}

// readRendered reads the ConfigMaps, Secrets, Services, ServiceAccounts and
// role bindings of a rendering (hooks included) whose namespace, when the
// manifest leaves it out, is ns.
func readRendered(r *chart.Rendering, ns string) renderedObjects {
	ro := renderedObjects{text: map[string]string{}, services: renderedServices(r), bound: map[string]bool{}, automount: map[string]bool{}}
	for _, objs := range [][]chart.Object{r.Objects, r.Hooks} {
		for _, o := range objs {
			ons := o.Namespace
			if ons == "" {
				ons = ns
			}
			switch o.Kind {
			case "ConfigMap":
				var cm corev1.ConfigMap
				if yaml.Unmarshal([]byte(o.Doc), &cm) == nil {
					ro.text["ConfigMap/"+o.Name] = joinValues(cm.Data)
				}
			case "Secret":
				s, data, err := chart.DecodeSecret(o.Doc)
				if err != nil {
					continue
				}
				ro.text["Secret/"+o.Name] = joinValues(data)
				switch s.Labels[plan.RepoSecretTypeLabel] {
				case "repository", "repo-creds":
					if u := repositoryURL(data["url"]); u != nil {
						ro.repos = append(ro.repos, gitRepository{url: u, proxy: data["proxy"]})
					}
				}
			case "ServiceAccount":
				var sa corev1.ServiceAccount
				if yaml.Unmarshal([]byte(o.Doc), &sa) == nil && sa.AutomountServiceAccountToken != nil {
					ro.automount[ons+"/"+o.Name] = *sa.AutomountServiceAccountToken
				}
			case "RoleBinding", "ClusterRoleBinding":
				var b rbacv1.RoleBinding // the subjects of both kinds
				if yaml.Unmarshal([]byte(o.Doc), &b) != nil {
					continue
				}
				for _, s := range b.Subjects {
					if s.Kind == rbacv1.ServiceAccountKind {
						ro.bound[cmp.Or(s.Namespace, ons)+"/"+s.Name] = true
					}
				}
			}
		}
	}
	sort.Slice(ro.repos, func(i, j int) bool { return ro.repos[i].url.String() < ro.repos[j].url.String() })
	return ro
}

// callsAPI reports whether pod p (in namespace ns) calls the API server:
// its ServiceAccount's token is mounted and the release binds a role to
// that ServiceAccount.
func (ro renderedObjects) callsAPI(p chart.Pod, ns string) bool {
	sa := p.ServiceAccount()
	mounted := true
	if m, ok := ro.automount[ns+"/"+sa]; ok {
		mounted = m
	}
	if p.Spec.AutomountServiceAccountToken != nil {
		mounted = *p.Spec.AutomountServiceAccountToken
	}
	return mounted && ro.bound[ns+"/"+sa]
}

// repositoryURL reads a repository URL as the repo-server dials it: an
// https:// or http:// URL (a port added), ssh://, or Git's scp-like
// git@host:path (ssh, port 22); nil when it is none of those.
func repositoryURL(s string) *url.URL {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if !strings.Contains(s, "://") {
		// git@github.com:org/repo.git
		at, rest, _ := strings.Cut(s, "@")
		if rest == "" {
			rest = at
		}
		host, _, ok := strings.Cut(rest, ":")
		if !ok || host == "" {
			return nil
		}
		return &url.URL{Scheme: "ssh", Host: net.JoinHostPort(host, "22")}
	}
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "ssh": "22"}[u.Scheme]
		if port == "" {
			port = "443"
		}
	}
	scheme := u.Scheme
	if scheme != "http" && scheme != "ssh" {
		scheme = "https"
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(u.Hostname(), port)}
}

// joinValues joins a map's values in key order, one a line.
func joinValues(m map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(m) {
		b.WriteString(m[k] + "\n")
	}
	return b.String()
}

// renderedService is a Service the release renders: its selector and
// ports (port -> targetPort).
type renderedService struct {
	Selector map[string]string
	Ports    map[int32]corev1.ServicePort
}

// renderedServices reads the Services of a rendering by name.
func renderedServices(r *chart.Rendering) map[string]renderedService {
	out := map[string]renderedService{}
	for _, o := range r.Objects {
		if o.Kind != "Service" {
			continue
		}
		var s corev1.Service
		if yaml.Unmarshal([]byte(o.Doc), &s) != nil {
			continue
		}
		rs := renderedService{Selector: s.Spec.Selector, Ports: map[int32]corev1.ServicePort{}}
		for _, p := range s.Spec.Ports {
			rs.Ports[p.Port] = p
		}
		out[o.Name] = rs
	}
	return out
}

// serviceDestination reads an environment value as an in-cluster
// destination: a URL or host:port whose host is a rendered Service (by its
// short name, or name.namespace[.svc[.domain]]).
func serviceDestination(v string, services map[string]renderedService) (destination, bool) {
	v = strings.TrimSpace(v)
	if v == "" || strings.ContainsAny(v, " \n") {
		return destination{}, false
	}
	raw := v
	if !strings.Contains(v, "://") {
		raw = "http://" + v
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return destination{}, false
	}
	name := strings.SplitN(u.Hostname(), ".", 2)[0]
	if _, ok := services[name]; !ok {
		return destination{}, false
	}
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		u.Host = net.JoinHostPort(u.Hostname(), port)
	}
	return destination{URL: u, What: "Service " + name, Service: name}, true
}

// port returns a destination's port: its URL's, else its scheme's.
func (d destination) port() int32 {
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

// sortedKeys returns m's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
