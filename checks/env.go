package checks

import (
	"context"
	"net"
	"os/exec"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/proc"
)

// Inputs describe the planned install (README "Usage"). Defaults are
// the chart's: runtime name "codefresh", namespace "codefresh", release
// "cf-gitops-runtime".
type Inputs struct {
	RuntimeName string
	Namespace   string
	// NamespaceExplicit is true when the user gave the namespace (-n).
	NamespaceExplicit bool
	ReleaseName       string

	// Values are the merged chart values (-f, --set and the shortcuts applied,
	// in Helm's order); nil when none were given. Read them through the
	// helpers of internal/values (values.String, values.Map, ...), never by
	// hand-walking maps elsewhere.
	Values map[string]any
	// AccessMode is derived from Values as the chart does, or set by
	// --access-mode: tunnel (the chart's default), ingress or service-mesh.
	AccessMode AccessMode
	// IngressHost is global.runtime.ingress.hosts[0] (or --ingress-host).
	IngressHost string
	// IngressClass is global.runtime.ingress.className (or --ingress-class;
	// chart default "nginx").
	IngressClass string
	// IngressURL is global.runtime.ingressUrl (or --ingress-url).
	IngressURL string
	// ExistingArgoCD means argo-cd.enabled=false: Argo CD is already installed
	// in the runtime namespace (--existing-argocd).
	ExistingArgoCD bool
	// SkipIngressValidation is --skip-ingress-validation or
	// global.runtime.ingress.skipValidation.
	SkipIngressValidation bool
	// Post is true for a --post run (post-install diagnostics); checks that
	// run in both modes use it to pick their status (warn before, fail after).
	Post bool

	// ArgoCDVersionRange is the Argo CD version constraint of the chart's
	// validator (--argocd-version-range; default DefaultArgoCDVersionRange).
	ArgoCDVersionRange string

	// Fix options (--fix). CRDs is "all" or "rollouts" (--crds); TLSSecret is
	// --tls-secret for nginx-tls-secret.
	CRDs      string
	TLSSecret string
}

// AccessMode is how the runtime is reached from the platform (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/
// "Step 3", Access modes; https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl#L336-L369).
type AccessMode string

// Access modes.
const (
	AccessTunnel      AccessMode = "tunnel"
	AccessIngress     AccessMode = "ingress"
	AccessServiceMesh AccessMode = "service-mesh"
)

// Defaults of the chart and its docs (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/ "Step 3"; https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/values.yaml).
const (
	DefaultRuntimeName = "codefresh"
	DefaultNamespace   = "codefresh"
	DefaultReleaseName = "cf-gitops-runtime"
)

// Env is what a check may use: the inputs, the shared cluster snapshot and
// the host environment. Tests build it directly.
type Env struct {
	Inputs  Inputs
	Cluster *cluster.Snapshot
	// Probe makes the outbound network probes (--connect-to, --ca-file,
	// --request-timeout); nil means probe.New defaults.
	Probe *probe.Prober
	// Getenv reads the plugin's environment (HELM_BIN, ...).
	Getenv func(string) string
	// LookPath finds an executable on PATH (exec.LookPath by default).
	LookPath func(string) (string, error)
	// Command runs a program and returns its standard output (by default
	// proc.Run: own process group killed at the deadline, WaitDelay, output
	// capped at proc.MaxOutput).
	Command func(ctx context.Context, name string, args ...string) ([]byte, error)
	// Resolver looks up host names (net.DefaultResolver by default).
	Resolver Resolver
}

// Resolver resolves a host name to its addresses, as net.Resolver.LookupHost.
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
}

// withDefaults fills unset host hooks with the real ones.
func (e *Env) withDefaults() {
	if e.Probe == nil {
		e.Probe, _ = probe.New(0, nil, "")
	}
	if e.Getenv == nil {
		e.Getenv = func(string) string { return "" }
	}
	if e.LookPath == nil {
		e.LookPath = exec.LookPath
	}
	if e.Command == nil {
		e.Command = func(ctx context.Context, name string, args ...string) ([]byte, error) {
			out, _, err := proc.Run(ctx, exec.Command(name, args...), proc.Options{})
			return out, err
		}
	}
	if e.Resolver == nil {
		e.Resolver = net.DefaultResolver
	}
}
