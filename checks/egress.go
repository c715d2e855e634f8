package checks

import (
	"context"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// destination is one place a rendered pod connects to.
type destination struct {
	// URL is what the pod dials ("https://g.codefresh.io",
	// "http://cap-app-proxy:3017", "https://10.96.0.1:443").
	URL *url.URL
	// What names it: "the platform", "the tunnel server", "Service
	// cap-app-proxy", "the API server".
	What string
	// External is true for a destination outside the cluster.
	External bool
	// Service is the rendered Service an in-cluster destination is ("" for
	// others).
	Service string
}

// podEgress is what one rendered pod needs to reach and how: its proxy
// environment, its CA mounts and its destinations.
type podEgress struct {
	Pod chart.Pod
	// Proxy is the pod's proxy environment (HTTP_PROXY, HTTPS_PROXY,
	// NO_PROXY, either case; the first container that sets them).
	HTTPProxy, HTTPSProxy, NoProxy string
	Proxied                        bool
	// MountsCA is true when a volume of the pod is the platform CA Secret.
	MountsCA bool
	Dests    []destination
}

// egressOfRun works out every rendered pod's egress, once per snapshot:
// the platform and tunnel server when the pod's environment, args or
// mounted configuration name them, the in-cluster Services its environment
// names, and the API server (its ClusterIP and port 443, as client-go
// dials it from KUBERNETES_SERVICE_HOST) for a pod that mounts a
// ServiceAccount token.
func egressOfRun(ctx context.Context, env *Env, ri *renderedImages) ([]podEgress, error) {
	return memoOr(env, "egress/pods", func() ([]podEgress, error) {
		apiIP := ""
		if svc, found, err := env.Cluster.Service("default", "kubernetes"); err != nil {
			return nil, err
		} else if found && len(svc.ClusterIPs) > 0 {
			apiIP = svc.ClusterIPs[0]
		}
		services := renderedServices(ri.r)
		platform, _ := url.Parse(env.Inputs.PlatformURL)
		tunnelHost, tunnelPort := plan.HostPort(env.Inputs.TunnelServer, "443")
		cms := map[string]string{}
		for _, objs := range [][]chart.Object{ri.r.Objects, ri.r.Hooks} {
			for _, o := range objs {
				if o.Kind == "ConfigMap" || o.Kind == "Secret" {
					cms[o.Kind+"/"+o.Name] = o.Doc
				}
			}
		}
		var out []podEgress
		for _, p := range ri.pods {
			e := podEgress{Pod: p}
			var text strings.Builder
			for _, v := range p.Spec.Volumes {
				switch {
				case v.ConfigMap != nil:
					text.WriteString(cms["ConfigMap/"+v.ConfigMap.Name])
				case v.Secret != nil:
					text.WriteString(cms["Secret/"+v.Secret.SecretName])
					if env.Inputs.PlatformCASecret != "" && v.Secret.SecretName == env.Inputs.PlatformCASecret {
						e.MountsCA = true
					}
				case v.Projected != nil:
					for _, s := range v.Projected.Sources {
						if s.Secret != nil && s.Secret.Name == env.Inputs.PlatformCASecret && env.Inputs.PlatformCASecret != "" {
							e.MountsCA = true
						}
					}
				}
			}
			seen := map[string]bool{}
			add := func(d destination) {
				if !seen[d.URL.String()] {
					seen[d.URL.String()] = true
					e.Dests = append(e.Dests, d)
				}
			}
			for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
				text.WriteString(strings.Join(c.Args, "\n") + "\n" + strings.Join(c.Command, "\n") + "\n")
				for _, ev := range c.Env {
					v := ev.Value
					if ev.ValueFrom != nil && ev.ValueFrom.ConfigMapKeyRef != nil {
						v = ri.r.ConfigMapData(ev.ValueFrom.ConfigMapKeyRef.Name)[ev.ValueFrom.ConfigMapKeyRef.Key]
					}
					switch strings.ToUpper(ev.Name) {
					case "HTTP_PROXY":
						e.HTTPProxy, e.Proxied = v, e.Proxied || v != ""
						continue
					case "HTTPS_PROXY":
						e.HTTPSProxy, e.Proxied = v, e.Proxied || v != ""
						continue
					case "NO_PROXY":
						e.NoProxy = v
						continue
					}
					text.WriteString(v + "\n")
					if d, ok := serviceDestination(v, services); ok {
						add(d)
					}
				}
			}
			t := text.String()
			if platform != nil && platform.Host != "" && strings.Contains(t, platform.Host) {
				add(destination{URL: platform, What: "the platform", External: true})
			}
			if env.Inputs.AccessMode == AccessTunnel && tunnelHost != "" && strings.Contains(t, tunnelHost) {
				add(destination{URL: &url.URL{Scheme: "https", Host: net.JoinHostPort(tunnelHost, tunnelPort)}, What: "the tunnel server", External: true})
			}
			if apiIP != "" && (p.Spec.AutomountServiceAccountToken == nil || *p.Spec.AutomountServiceAccountToken) {
				add(destination{URL: &url.URL{Scheme: "https", Host: net.JoinHostPort(apiIP, "443")}, What: "the API server"})
			}
			out = append(out, e)
		}
		return out, nil
	})
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

// port returns a destination's port.
func (d destination) port() int32 {
	n, _ := strconv.Atoi(d.URL.Port())
	return int32(n)
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
