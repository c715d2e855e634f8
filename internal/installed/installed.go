package installed

import (
	"net/url"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// Names the gitops-runtime chart renders (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/ingress.yaml, https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/codefresh-cm.yaml).
const (
	// IngressName is the Ingress the chart renders in ingress mode.
	IngressName = "codefresh-gitops-runtime"
	// LegacyIngressName is the Ingress of CLI-installed runtimes
	// (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Patch certificate secret": ingress-master).
	LegacyIngressName = "ingress-master"
	// TunnelSubdomainHost is the default tunnel-client subdomain host: a
	// runtime URL under it means tunnel mode (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl#L336-L369).
	TunnelSubdomainHost = "tunnels.cf-cd.com"
)

// Cluster is what Read reads of the cluster (cluster.Snapshot has it).
type Cluster interface {
	// ConfigMap gets one ConfigMap (Exists false when it does not exist).
	ConfigMap(namespace, name string) (cluster.ConfigMap, error)
	// Ingress gets one Ingress (found false when it does not exist).
	Ingress(namespace, name string) (in cluster.Ingress, found bool, err error)
	IngressClasses() ([]cluster.IngressClass, error)
}

// Facts is what the chart actually rendered, read from the cluster after
// install, merged with the inputs.
type Facts struct {
	// ConfigMap is codefresh-cm's data (nil when absent).
	ConfigMap map[string]string
	// Ingress is the runtime Ingress (codefresh-gitops-runtime, else
	// ingress-master) when IngressFound.
	Ingress      cluster.Ingress
	IngressFound bool
	// Mode is the access mode: ingress when a runtime Ingress exists, else the
	// input mode unless codefresh-cm says otherwise.
	Mode plan.AccessMode
	// Host is the runtime host (no scheme, no port).
	Host string
	// Class is the runtime Ingress's class (else the input class);
	// Controller is that IngressClass's spec.controller ("" when unknown).
	Class, Controller string
	ClassFound        bool
}

// Read reads codefresh-cm (plan.ConfigMapName), the runtime Ingress and its
// IngressClass in in.Namespace and derives the facts. An IngressClass list
// refused (forbidden) leaves the controller unknown; other errors are
// returned.
func Read(c Cluster, in plan.Install) (Facts, error) {
	var f Facts
	cm, err := c.ConfigMap(in.Namespace, plan.ConfigMapName)
	if err != nil {
		return f, err
	}
	f.ConfigMap = cm.Data
	for _, name := range []string{IngressName, LegacyIngressName} {
		ing, found, err := c.Ingress(in.Namespace, name)
		if err != nil {
			return f, err
		}
		if found {
			f.Ingress, f.IngressFound = ing, true
			break
		}
	}
	cmHost := HostOf(cm.Data["ingressHost"])
	f.Mode = modeOf(in, f.IngressFound, cmHost)
	f.Host = hostOf(in, f, cmHost)
	f.Class = in.IngressClass
	if f.IngressFound && f.Ingress.Class != "" {
		f.Class = f.Ingress.Class
	}
	if f.Class != "" {
		classes, err := c.IngressClasses()
		if err != nil && !cluster.IsForbidden(err) {
			return f, err
		}
		for _, ic := range classes {
			if ic.Name == f.Class {
				f.Controller, f.ClassFound = ic.Controller, true
			}
		}
	}
	return f, nil
}

// modeOf is the access mode: ingress when a runtime Ingress exists; the
// input mode when it is other than tunnel; service-mesh when codefresh-cm's
// runtime URL (host cmHost) is not a tunnel one and no Ingress was
// rendered (global.runtime.ingressUrl); else the input mode.
func modeOf(in plan.Install, ingressFound bool, cmHost string) plan.AccessMode {
	switch {
	case ingressFound:
		return plan.AccessIngress
	case in.AccessMode != "" && in.AccessMode != plan.AccessTunnel:
	case cmHost != "" && !strings.HasSuffix(cmHost, "."+TunnelSubdomainHost):
		return plan.AccessServiceMesh
	}
	return in.AccessMode
}

// hostOf is the runtime host: --ingress-host (the input host), the input
// URL's in service-mesh mode, the runtime Ingress's first host, else
// codefresh-cm's (cmHost).
func hostOf(in plan.Install, f Facts, cmHost string) string {
	switch {
	case in.IngressHost != "":
		return in.IngressHost
	case in.IngressURL != "" && f.Mode == plan.AccessServiceMesh:
		return HostOf(in.IngressURL)
	case f.IngressFound && len(f.Ingress.Hosts) > 0:
		return f.Ingress.Hosts[0]
	}
	return cmHost
}

// HostOf returns the host of a URL or bare host name, without port ("" for
// "" or a string that does not parse).
func HostOf(s string) string {
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
