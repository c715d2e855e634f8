package plan

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
)

// Chart defaults of the gitops-runtime chart (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/values.yaml,
// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl).
const (
	DefaultIngressClass    = "nginx"                      // global.runtime.ingress.className, values.yaml L62
	DefaultIngressProtocol = "https"                      // global.runtime.ingress.protocol, L59
	DefaultPlatformURL     = "https://g.codefresh.io"     // global.codefresh.url, L5
	DefaultTunnelServer    = "register-tunnels.cf-cd.com" // tunnel-client.tunnelServer.host, L433
	DefaultArgoCDUser      = "admin"                      // global.integrations.argo-cd.server.auth.username
	DefaultArgoCDAuthType  = "password"                   // global.integrations.argo-cd.server.auth.type
)

// IngressTLS is one entry of global.runtime.ingress.tls: the TLS Secret in
// the runtime namespace and the hosts its certificate must cover. Hosts is
// nil when the entry names none (the ingress host is meant) and empty when
// it names only non-strings.
type IngressTLS struct {
	SecretName string
	Hosts      []string
}

// Secret is a value that is never printed: fmt (every verb) and JSON show
// "[redacted]" when it is set, "" when it is not; Reveal returns the value
// for the one call that must send it.
type Secret string

// Reveal returns the secret value.
func (s Secret) Reveal() string { return string(s) }

// String returns "[redacted]", or "" for an empty Secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// GoString is String, for %#v.
func (s Secret) GoString() string { return s.String() }

// MarshalJSON encodes String.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// Planned is what the chart would derive from the merged values.
type Planned struct {
	Mode AccessMode
	// IngressHost is global.runtime.ingress.hosts[0] (ingress mode).
	IngressHost string
	// IngressClass is global.runtime.ingress.className (default nginx).
	IngressClass string
	// Protocol is global.runtime.ingress.protocol (default https).
	Protocol string
	// IngressURL is the runtime URL in service-mesh mode: ingressUrl, or
	// <httpRoute.protocol>://<httpRoute.hostnames[0]> when httpRoute is on.
	IngressURL string
	// HTTPRoute is true when global.runtime.httpRoute.enabled routes the
	// runtime (Gateway API); the plugin treats it as service-mesh mode: the
	// runtime URL is routed by objects the chart does not check.
	HTTPRoute bool
	// SkipIngressValidation is global.runtime.ingress.skipValidation.
	SkipIngressValidation bool
	// ExistingArgoCD is argo-cd.enabled=false (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/values.yaml, "BYOA").
	ExistingArgoCD bool
	// RuntimeName is global.runtime.name ("" when absent).
	RuntimeName string
	// SkipValidation is installer.skipValidation: the chart renders no
	// validate-values hook; SkipUsageValidation is
	// installer.skipUsageValidation: no validate-usage hook
	// (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/values.yaml#L244-L248).
	SkipValidation, SkipUsageValidation bool
	// PlainUserToken is true when global.codefresh.userToken.token holds
	// the token itself (not a secretKeyRef).
	PlainUserToken bool
	// UserTokenSecret and UserTokenKey are
	// global.codefresh.userToken.secretKeyRef's name and key ("" when unset).
	UserTokenSecret, UserTokenKey string
	// PlatformURL is global.codefresh.url (default https://g.codefresh.io);
	// AccountID is global.codefresh.accountId.
	PlatformURL, AccountID string
	// SingleNamespace is global.runtime.singleNamespace: the runtime manages
	// only its own namespace, as every runtime of a cluster with several must
	// (chart README, "Multi Runtime Installation",
	// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/README.md#multi-runtime-installation).
	SingleNamespace bool
	// TunnelServer is tunnel-client.tunnelServer.host (default
	// register-tunnels.cf-cd.com), "host" or "host:port".
	TunnelServer string
	// IngressTLS are the entries of global.runtime.ingress.tls that name a
	// secretName, in order.
	IngressTLS []IngressTLS
	// IngressAnnotations is global.runtime.ingress.annotations, each value
	// printed as the chart's template would print it.
	IngressAnnotations map[string]string
	// ArgoCDAuthType is global.integrations.argo-cd.server.auth.type
	// (default "password"); ArgoCDUser is its username (default "admin").
	ArgoCDAuthType, ArgoCDUser string
	// UserToken is global.codefresh.userToken.token, the plain token.
	UserToken Secret
	// ImageRegistry is global.imageRegistry: the registry the user means
	// the images to come from ("" = each image's own).
	ImageRegistry string
	// HTTPProxy, HTTPSProxy and NoProxy are global.httpProxy, httpsProxy
	// and noProxy, the proxy the chart hands some components.
	HTTPProxy, HTTPSProxy, NoProxy string
	// PlatformCA is true when a CA bundle for the platform is configured
	// (global.codefresh.tls.caCerts.secret.create, or
	// ...caCerts.secretKeyRef with a name).
	PlatformCA bool
	// PlatformCASecret is the Secret of the platform CA bundle:
	// ...caCerts.secretKeyRef.name, else codefresh-tls-certs when the chart
	// creates it ("" when none is configured).
	PlatformCASecret string
	// InstallsCRDs is true when the values leave on any of the CRDs the
	// chart installs (argo-cd.crds.install, argo-workflows.crds.install,
	// gitops-operator.crds.install, each true by default, for an enabled
	// component): the cluster-wide parts only the first runtime installs.
	InstallsCRDs bool
}

// Derive applies the chart's precedence (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl#L336-L369, template
// codefresh-gitops-runtime.ingress-url, _helpers.tpl L336-369):
// ingress.enabled → ingress; else httpRoute.enabled → service-mesh with the
// HTTPRoute URL; else tunnel-client.enabled (default true) → tunnel; else
// service-mesh with global.runtime.ingressUrl.
func Derive(v map[string]any) Planned {
	p := Planned{
		IngressClass:          String(v, "global.runtime.ingress.className"),
		Protocol:              String(v, "global.runtime.ingress.protocol"),
		SkipIngressValidation: Bool(v, false, "global.runtime.ingress.skipValidation"),
		ExistingArgoCD:        !Bool(v, true, "argo-cd.enabled"),
		RuntimeName:           String(v, "global.runtime.name"),
		SkipValidation:        Bool(v, false, "installer.skipValidation"),
		SkipUsageValidation:   Bool(v, false, "installer.skipUsageValidation"),
		SingleNamespace:       Bool(v, false, "global.runtime.singleNamespace"),
		UserTokenSecret:       String(v, "global.codefresh.userToken.secretKeyRef.name"),
		UserTokenKey:          String(v, "global.codefresh.userToken.secretKeyRef.key"),
		PlatformURL:           String(v, "global.codefresh.url"),
		AccountID:             String(v, "global.codefresh.accountId"),
		TunnelServer:          String(v, "tunnel-client.tunnelServer.host"),
		ArgoCDAuthType:        String(v, "global.integrations.argo-cd.server.auth.type"),
		ArgoCDUser:            String(v, "global.integrations.argo-cd.server.auth.username"),
		UserToken:             Secret(String(v, "global.codefresh.userToken.token")),
		ImageRegistry:         String(v, "global.imageRegistry"),
		HTTPProxy:             String(v, "global.httpProxy"),
		HTTPSProxy:            String(v, "global.httpsProxy"),
		NoProxy:               String(v, "global.noProxy"),
		PlatformCA: Bool(v, false, "global.codefresh.tls.caCerts.secret.create") ||
			String(v, "global.codefresh.tls.caCerts.secretKeyRef.name") != "",
	}
	p.PlainUserToken = p.UserToken != ""
	if p.PlatformCA {
		p.PlatformCASecret = cmp.Or(String(v, "global.codefresh.tls.caCerts.secretKeyRef.name"), PlatformCASecretName)
	}
	p.PlatformURL = cmp.Or(p.PlatformURL, DefaultPlatformURL)
	p.TunnelServer = cmp.Or(p.TunnelServer, DefaultTunnelServer)
	p.ArgoCDAuthType = cmp.Or(p.ArgoCDAuthType, DefaultArgoCDAuthType)
	p.ArgoCDUser = cmp.Or(p.ArgoCDUser, DefaultArgoCDUser)
	for _, e := range List(v, "global.runtime.ingress.tls") {
		m, _ := e.(map[string]any)
		name, _ := m["secretName"].(string)
		if name == "" {
			continue
		}
		t := IngressTLS{SecretName: name}
		if hs, ok := m["hosts"].([]any); ok && len(hs) > 0 {
			t.Hosts = []string{}
			for _, h := range hs {
				if s, ok := h.(string); ok {
					t.Hosts = append(t.Hosts, s)
				}
			}
		}
		p.IngressTLS = append(p.IngressTLS, t)
	}
	if a := Map(v, "global.runtime.ingress.annotations"); a != nil {
		p.IngressAnnotations = make(map[string]string, len(a))
		for k, x := range a {
			p.IngressAnnotations[k] = fmt.Sprint(x)
		}
	}
	for _, c := range []string{"argo-cd", "argo-workflows", "gitops-operator"} {
		if Bool(v, true, c+".enabled") && Bool(v, true, c+".crds.install") {
			p.InstallsCRDs = true
		}
	}
	if !Has(v, "global.runtime.ingress.className") {
		p.IngressClass = DefaultIngressClass
	}
	p.Protocol = cmp.Or(p.Protocol, DefaultIngressProtocol)
	if hosts := List(v, "global.runtime.ingress.hosts"); len(hosts) > 0 {
		p.IngressHost, _ = hosts[0].(string)
	}
	switch {
	case Bool(v, false, "global.runtime.ingress.enabled"):
		p.Mode = AccessIngress
	case Bool(v, false, "global.runtime.httpRoute.enabled"):
		p.Mode, p.HTTPRoute = AccessServiceMesh, true
		proto := String(v, "global.runtime.httpRoute.protocol")
		if proto == "" {
			proto = DefaultIngressProtocol
		}
		if hn := List(v, "global.runtime.httpRoute.hostnames"); len(hn) > 0 {
			if h, ok := hn[0].(string); ok && h != "" {
				p.IngressURL = proto + "://" + h
			}
		}
	case Bool(v, true, "tunnel-client.enabled"):
		p.Mode = AccessTunnel
	default:
		p.Mode = AccessServiceMesh
		p.IngressURL = String(v, "global.runtime.ingressUrl")
	}
	return p
}

// Shortcuts are the plugin's flags that stand for values (README
// "Describing the planned install": flags override values files).
type Shortcuts struct {
	AccessMode            string // tunnel|ingress|service-mesh
	IngressHost           string
	IngressClass          string
	IngressURL            string
	ExistingArgoCD        bool
	SkipIngressValidation bool
}

// ApplyShortcuts writes the shortcuts into v as the equivalent --set
// expressions, so that what is checked is what `helm install` would get with
// the same --set flags. --ingress-host implies ingress mode and --ingress-url
// service-mesh mode unless --access-mode says otherwise. It returns a usage
// error for an unknown access mode.
func ApplyShortcuts(v map[string]any, s Shortcuts) error {
	mode := s.AccessMode
	if mode == "" {
		switch {
		case s.IngressHost != "":
			mode = string(AccessIngress)
		case s.IngressURL != "":
			mode = string(AccessServiceMesh)
		}
	}
	switch AccessMode(mode) {
	case "", AccessIngress, AccessTunnel, AccessServiceMesh:
	default:
		return fmt.Errorf("--access-mode must be tunnel, ingress or service-mesh, not %q", s.AccessMode)
	}
	for _, expr := range shortcutSets(AccessMode(mode)) {
		if err := Set(v, expr); err != nil {
			return err
		}
	}
	// Values with commas or equals signs cannot go through --set syntax
	// unescaped; write them directly.
	if s.IngressHost != "" {
		setPath(v, []any{s.IngressHost}, "global", "runtime", "ingress", "hosts")
	}
	if s.IngressClass != "" {
		setPath(v, s.IngressClass, "global", "runtime", "ingress", "className")
	}
	if s.IngressURL != "" {
		setPath(v, s.IngressURL, "global", "runtime", "ingressUrl")
	}
	if s.ExistingArgoCD {
		setPath(v, false, "argo-cd", "enabled")
	}
	if s.SkipIngressValidation {
		setPath(v, true, "global", "runtime", "ingress", "skipValidation")
	}
	return nil
}

// shortcutSets are the --set expressions that select access mode m.
func shortcutSets(m AccessMode) []string {
	switch m {
	case AccessIngress:
		return []string{"global.runtime.ingress.enabled=true", "global.runtime.httpRoute.enabled=false"}
	case AccessTunnel:
		return []string{"global.runtime.ingress.enabled=false", "global.runtime.httpRoute.enabled=false", "tunnel-client.enabled=true"}
	case AccessServiceMesh:
		return []string{"global.runtime.ingress.enabled=false", "tunnel-client.enabled=false"}
	}
	return nil
}

func setPath(v map[string]any, val any, keys ...string) {
	cur := v
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	cur[keys[len(keys)-1]] = val
}

// HostPort splits a host that may carry a port ("h:8443") into host and port,
// with def as the port when none is given.
func HostPort(hostport, def string) (string, string) {
	if i := strings.LastIndexByte(hostport, ':'); i > 0 && !strings.Contains(hostport[i+1:], "]") && !strings.Contains(hostport[:i], ":") {
		return hostport[:i], hostport[i+1:]
	}
	return hostport, def
}
