package checks

import (
	"net/url"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// Names the gitops-runtime chart renders (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/ingress.yaml, https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/codefresh-cm.yaml).
const (
	// RuntimeIngressName is the Ingress the chart renders in ingress mode.
	RuntimeIngressName = "codefresh-gitops-runtime"
	// LegacyRuntimeIngressName is the Ingress of CLI-installed runtimes
	// (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Patch certificate secret": ingress-master).
	LegacyRuntimeIngressName = "ingress-master"
	// CodefreshConfigMap holds ingressHost (the runtime URL), ingressClassName
	// and version (the runtime's appVersion).
	CodefreshConfigMap = plan.ConfigMapName
	// CodefreshTokenSecret is created by cap-app-proxy when the runtime
	// registers; gitops-operator, argo-gateway and the event reporters cannot
	// start without it (https://github.com/codefresh-io/gitops-runtime-helm/tree/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_components, https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_components/gitops-operator/_env.yaml).
	CodefreshTokenSecret = plan.TokenSecretName
	// TunnelSubdomainHost is the default tunnel-client subdomain host: a
	// runtime URL under it means tunnel mode (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl#L336-L369).
	TunnelSubdomainHost = "tunnels.cf-cd.com"
)

// RuntimeFacts is what the chart actually rendered, read from the cluster
// after install, merged with the inputs: flags win where the user gave them,
// otherwise the cluster tells (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl#L336-L369: codefresh-cm.ingressHost;
// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/ingress.yaml: the runtime Ingress and its class and host).
type RuntimeFacts struct {
	// ConfigMap is codefresh-cm's data (nil when absent).
	ConfigMap map[string]string
	// Ingress is the runtime Ingress (codefresh-gitops-runtime, else
	// ingress-master) when IngressFound.
	Ingress      cluster.Ingress
	IngressFound bool
	// Mode is the access mode: ingress when a runtime Ingress exists, else the
	// input mode unless codefresh-cm says otherwise.
	Mode AccessMode
	// Host is the runtime host (no scheme, no port).
	Host string
	// Class is the runtime Ingress's class (else the input class);
	// Controller is that IngressClass's spec.controller ("" when unknown).
	Class, Controller string
	ClassFound        bool
}

// runtimeFacts reads codefresh-cm, the runtime Ingress and its IngressClass
// once per run (memoised on the snapshot) and derives the facts.
func runtimeFacts(env *Env) (RuntimeFacts, error) {
	in := env.Inputs
	return cluster.Memo(env.Cluster, "post/runtime-facts", func() (RuntimeFacts, error) {
		var f RuntimeFacts
		cm, err := env.Cluster.ConfigMap(in.Namespace, CodefreshConfigMap)
		if err != nil {
			return f, err
		}
		f.ConfigMap = cm.Data
		for _, name := range []string{RuntimeIngressName, LegacyRuntimeIngressName} {
			ing, found, err := env.Cluster.Ingress(in.Namespace, name)
			if err != nil {
				return f, err
			}
			if found {
				f.Ingress, f.IngressFound = ing, true
				break
			}
		}
		cmHost := hostOf(cm.Data["ingressHost"])
		f.Mode = in.AccessMode
		switch {
		case f.IngressFound:
			f.Mode = AccessIngress
		case in.AccessMode != "" && in.AccessMode != AccessTunnel:
		case cmHost != "" && !strings.HasSuffix(cmHost, "."+TunnelSubdomainHost):
			// The chart wrote a runtime URL that is not a tunnel one and
			// rendered no Ingress: global.runtime.ingressUrl (service mesh).
			f.Mode = AccessServiceMesh
		}
		switch {
		case in.IngressHost != "":
			f.Host = in.IngressHost
		case in.IngressURL != "" && f.Mode == AccessServiceMesh:
			f.Host = hostOf(in.IngressURL)
		case f.IngressFound && len(f.Ingress.Hosts) > 0:
			f.Host = f.Ingress.Hosts[0]
		default:
			f.Host = cmHost
		}
		f.Class = in.IngressClass
		if f.IngressFound && f.Ingress.Class != "" {
			f.Class = f.Ingress.Class
		}
		if f.Class != "" {
			classes, err := env.Cluster.IngressClasses()
			if err != nil && !cluster.IsForbidden(err) {
				return f, err
			}
			for _, c := range classes {
				if c.Name == f.Class {
					f.Controller, f.ClassFound = c.Controller, true
				}
			}
		}
		return f, nil
	})
}

// hostOf returns the host of a URL or bare host name, without port.
func hostOf(s string) string {
	if s == "" {
		return ""
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// ingressRef is the ObjectRef of the runtime Ingress.
func (f RuntimeFacts) ingressRef() ObjectRef {
	return ObjectRef{Kind: "Ingress", Namespace: f.Ingress.Namespace, Name: f.Ingress.Name}
}
