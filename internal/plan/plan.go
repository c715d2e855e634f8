// Package plan is the only home of the gitops-runtime chart's knowledge in
// the plugin. It holds the planned install, derived once per run from the
// flags: release, namespace, runtime name, chart reference, the chart values
// read the way Helm reads them (-f/--values files merged in order, then
// --set and --set-string, then the shortcut flags) and every value the
// chart derives from them that a check reads (access mode, ingress host,
// class, protocol and TLS, runtime URL, platform and tunnel addresses, the
// user token source, Argo CD authentication), with the chart's names and
// defaults. Merging and --set parsing are Helm's own
// (helm.sh/helm/v3/pkg/cli/values and pkg/strvals); this package only adds
// the chart's defaults and lookups. Checks read the typed plan
// (checks.Inputs is an alias of Install) instead of re-deriving anything
// from the raw values map, the way stern builds its typed stern.Config once
// from its flags.
package plan

import (
	"cmp"
	"context"
	"io"
)

// AccessMode is how the runtime is reached from the platform: tunnel (the
// chart's default), ingress or service-mesh (Codefresh docs, "Hybrid GitOps
// Runtime installation", Step 3).
type AccessMode string

// Access modes.
const (
	AccessTunnel      AccessMode = "tunnel"
	AccessIngress     AccessMode = "ingress"
	AccessServiceMesh AccessMode = "service-mesh"
)

// Defaults of the chart and its docs: runtime name, namespace and release
// name of the documented `helm upgrade --install cf-gitops-runtime ...
// --namespace codefresh`, and the chart it installs.
const (
	DefaultRuntimeName = "codefresh"
	DefaultNamespace   = "codefresh"
	DefaultReleaseName = "cf-gitops-runtime"
	// DefaultChart is the chart the Codefresh docs install.
	DefaultChart = "oci://quay.io/codefresh/gitops-runtime"
)

// Today's defaults of the rules the chart being installed carries, for a run
// whose chart could not be loaded or rendered: those of chart 0.30.0
// (release branch stable/0.30, https://github.com/codefresh-io/gitops-runtime-helm/tree/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime),
// the newest release line the plugin knows. Each message built on them says
// so.
const (
	// DefaultsChartVersion is the chart version the defaults are from.
	DefaultsChartVersion = "0.30.0"
	// DefaultArgoCDVersionRange is REQUIRED_VERSION_CONSTRAINT of the
	// validate-values hook (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/hooks/pre-install/_env.yaml#L25).
	// The chart lines differ: ">=2.12 <3.1" (0.24–0.25), ">=3 <=3.2"
	// (0.26–0.27), ">=3 <=3.3" (0.28–0.29), ">=3.2 <=3.4" (0.30).
	DefaultArgoCDVersionRange = ">=3.2 <=3.4"
	// DefaultArgoCDServerSelector is the label selector the hook finds the
	// Argo CD server Service with (installer.argoCdVersionCheck.argoServerLabels,
	// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/values.yaml#L253-L257).
	DefaultArgoCDServerSelector = "app.kubernetes.io/component=server,app.kubernetes.io/part-of=argocd"
	// DefaultArgoCDKubeVersion is the kubeVersion of the Argo CD subchart
	// chart 0.30.0 deploys (argo-cd.enabled, the chart's default; charts 0.26
	// and later alike): Argo CD 3.x supports Kubernetes 1.25 and later
	// (https://github.com/argoproj/argo-helm/blob/argo-cd-10.1.1/charts/argo-cd/Chart.yaml#L3).
	DefaultArgoCDKubeVersion = ">=1.25.0-0"
	// DefaultArgoCDSubchart names that subchart as KubeVersion rules do.
	DefaultArgoCDSubchart = "gitops-runtime/argo-cd"
	// MinHelmVersion is the oldest Helm client the chart supports: "Helm
	// 3.11.0+" (chart README, "Prerequisites",
	// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/README.md#prerequisites).
	MinHelmVersion = "3.11.0"
)

// Install describes the planned install (docs/usage.md). Defaults
// are the chart's: runtime name "codefresh", namespace "codefresh", release
// "cf-gitops-runtime".
type Install struct {
	RuntimeName string
	Namespace   string
	// NamespaceExplicit is true when the user gave the namespace (-n).
	NamespaceExplicit bool
	ReleaseName       string

	// Chart is the chart reference as `helm install` takes it (a directory,
	// a .tgz, an oci:// reference or repo/name); ChartVersion is
	// --chart-version ("" = latest). Empty Chart means no chart is used.
	Chart        string
	ChartVersion string

	// Values are the merged chart values (-f, --set and the shortcuts applied,
	// in Helm's order); nil when none were given. Read them through the
	// helpers of this package, and only in checks/values.go; never by hand-walking maps elsewhere.
	Values map[string]any
	// RenderValues are the same merged values, never nil: what the chart is
	// rendered with.
	RenderValues map[string]any
	// AccessMode is derived from Values as the chart does, or set by
	// --access-mode: tunnel (the chart's default), ingress or service-mesh.
	AccessMode AccessMode
	// HTTPRoute is true when global.runtime.httpRoute.enabled routes the
	// runtime through Gateway API objects (service-mesh mode).
	HTTPRoute bool
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
	// SkipValidation and SkipUsageValidation are installer.skipValidation
	// and installer.skipUsageValidation: the chart's validate-values and
	// validate-usage hooks are not rendered.
	SkipValidation, SkipUsageValidation bool
	// PlainUserToken is true when global.codefresh.userToken.token holds the
	// token itself rather than a secretKeyRef.
	PlainUserToken bool
	// UserTokenSecret and UserTokenKey are the Secret and key of
	// global.codefresh.userToken.secretKeyRef ("" when unset).
	UserTokenSecret, UserTokenKey string
	// PlatformURL is global.codefresh.url (default https://g.codefresh.io):
	// where the validation hook calls the platform. AccountID is
	// global.codefresh.accountId.
	PlatformURL, AccountID string
	// IngressProtocol is global.runtime.ingress.protocol, "http" or
	// "https" (the chart's default).
	IngressProtocol string
	// IngressTLS are the global.runtime.ingress.tls entries that name a
	// Secret, in order.
	IngressTLS []IngressTLS
	// IngressAnnotations is global.runtime.ingress.annotations (nil when
	// unset).
	IngressAnnotations map[string]string
	// TunnelServer is tunnel-client.tunnelServer.host, "host" or
	// "host:port" (default register-tunnels.cf-cd.com).
	TunnelServer string
	// ArgoCDAuthType is global.integrations.argo-cd.server.auth.type
	// ("password", the chart's default, or "token"); ArgoCDUser is
	// ...auth.username (default "admin"): the Argo CD account the runtime
	// signs in with.
	ArgoCDAuthType, ArgoCDUser string
	// UserToken is global.codefresh.userToken.token, the plain user token
	// ("" when the token comes from a secretKeyRef); it never prints.
	UserToken Secret
	// SingleNamespace is global.runtime.singleNamespace (namespaced mode,
	// required of every runtime when a cluster has several).
	SingleNamespace bool
	// InstallsCRDs is true when the values leave any of the chart's CRDs on
	// (argo-cd, argo-workflows, gitops-operator .crds.install, default
	// true): the cluster-wide parts only the first runtime installs. The
	// rendered chart, when there is one, says it better (its objects).
	InstallsCRDs bool

	// Sources says where each value of Values came from (a values file's
	// line, a flag); empty when no values were given. Checks attach it to
	// a result caused by a value (checks.Env.Source).
	Sources Sources
	// RuntimeNameSource is where RuntimeName comes from: --runtime-name,
	// or global.runtime.name in the values; zero for the default.
	RuntimeNameSource Source
	// ChartVersionSource is where the chart's version is written: the
	// --chart-version flag, or the Chart.yaml line of a local chart
	// directory (the gitops-runtime dependency's of an umbrella chart);
	// zero when neither.
	ChartVersionSource Source
	// ImageRegistry is global.imageRegistry ("" when unset); HTTPProxy,
	// HTTPSProxy and NoProxy are global.httpProxy, httpsProxy and noProxy;
	// PlatformCA is a configured platform CA bundle
	// (global.codefresh.tls.caCerts).
	ImageRegistry                  string
	HTTPProxy, HTTPSProxy, NoProxy string
	PlatformCA                     bool
	PlatformCASecret               string

	// ArgoCDVersionRange is --argocd-version-range: a semver constraint that
	// replaces the Argo CD range the chart's validate-values hook enforces;
	// "" (the default) means the chart's own (REQUIRED_VERSION_CONSTRAINT of
	// the rendered hook).
	ArgoCDVersionRange string
}

// HasValues reports whether chart values were given (-f/--values, --set,
// --set-string): whether Values is set.
func (in Install) HasValues() bool { return in.Values != nil }

// Flags are the raw flags the plan is derived from.
type Flags struct {
	RuntimeName       string
	Namespace         string // "" = DefaultNamespace
	NamespaceExplicit bool
	ReleaseName       string
	Chart             string
	ChartVersion      string
	ValueFiles        []string
	SetValues         []string
	SetStringValues   []string
	Shortcuts         Shortcuts
	// Ctx bounds reading the values files (--timeout, signals); nil means
	// context.Background(). Stdin is what `-f -` reads.
	Ctx   context.Context
	Stdin io.Reader
}

// WithDefaults returns in with the chart's defaults in an empty runtime
// name (DefaultRuntimeName), namespace (DefaultNamespace), release name
// (DefaultReleaseName), ingress protocol (DefaultIngressProtocol), platform
// URL (DefaultPlatformURL), tunnel server (DefaultTunnelServer) and Argo CD
// account (DefaultArgoCDAuthType, DefaultArgoCDUser).
func (in Install) WithDefaults() Install {
	in.RuntimeName = cmp.Or(in.RuntimeName, DefaultRuntimeName)
	in.Namespace = cmp.Or(in.Namespace, DefaultNamespace)
	in.ReleaseName = cmp.Or(in.ReleaseName, DefaultReleaseName)
	in.IngressProtocol = cmp.Or(in.IngressProtocol, DefaultIngressProtocol)
	in.PlatformURL = cmp.Or(in.PlatformURL, DefaultPlatformURL)
	in.TunnelServer = cmp.Or(in.TunnelServer, DefaultTunnelServer)
	in.ArgoCDAuthType = cmp.Or(in.ArgoCDAuthType, DefaultArgoCDAuthType)
	in.ArgoCDUser = cmp.Or(in.ArgoCDUser, DefaultArgoCDUser)
	return in
}

// New derives the planned install from the flags: it merges -f/--set with
// Helm's semantics (Load), applies the shortcut flags over them and
// derives what the chart derives (Derive). global.runtime.name names
// the runtime when --runtime-name is left at its default. The error is a
// one-line usage error (unreadable or invalid values, unknown access mode).
func New(f Flags) (Install, error) {
	ctx := f.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	v, sources, err := LoadWithSources(ctx, f.ValueFiles, f.SetValues, f.Stdin, f.SetStringValues...)
	if err != nil {
		return Install{}, err
	}
	return derive(f, v, sources, len(f.ValueFiles) > 0 || len(f.SetValues) > 0 || len(f.SetStringValues) > 0)
}

// Replayed is New from values already merged, in place of f's files and
// --set: the values a bundle recorded (Helm's merge of the recorded run's
// -f and --set, the shortcuts already over them or not), and whether that
// run was given values (given) or only shortcuts. The shortcuts of f apply
// over them as New applies them. Where each value came from is the
// recorded run's (WithSourceIndex): no file is read again.
func Replayed(f Flags, values map[string]any, given bool) (Install, error) {
	v := values
	if v == nil {
		v = map[string]any{}
	}
	return derive(f, v, Sources{}, given)
}

// derive is the planned install of the merged values v, read from sources
// (given: the user gave values, else v holds the shortcuts only).
func derive(f Flags, v map[string]any, sources Sources, given bool) (Install, error) {
	in := Install{
		RuntimeName:       f.RuntimeName,
		Namespace:         f.Namespace,
		NamespaceExplicit: f.NamespaceExplicit,
		ReleaseName:       f.ReleaseName,
		Chart:             f.Chart,
		ChartVersion:      f.ChartVersion,
	}
	in = in.WithDefaults()
	if f.RuntimeName != "" && f.RuntimeName != DefaultRuntimeName {
		in.RuntimeNameSource = Source{Flag: "--runtime-name " + f.RuntimeName}
	}
	if err := ApplyShortcuts(v, f.Shortcuts); err != nil {
		return Install{}, err
	}
	sources.addShortcuts(f.Shortcuts)
	if base, ok := umbrellaSources(f.Chart); ok {
		// The umbrella chart's values.yaml is the user's too (committed in
		// the Shared Configuration Repository): what it sets is anchored
		// there unless -f or a flag gives it.
		sources = sources.over(base, v)
	}
	in.Sources = sources
	in.ChartVersionSource = ChartVersionSourceOf(f.Chart, f.ChartVersion)
	p := Derive(v)
	in.RenderValues = v
	in.AccessMode = p.Mode
	in.HTTPRoute = p.HTTPRoute
	in.IngressHost = p.IngressHost
	in.IngressClass = p.IngressClass
	in.IngressURL = p.IngressURL
	in.ExistingArgoCD = p.ExistingArgoCD
	in.SkipIngressValidation = p.SkipIngressValidation
	in.SkipValidation, in.SkipUsageValidation = p.SkipValidation, p.SkipUsageValidation
	in.PlainUserToken = p.PlainUserToken
	in.SingleNamespace, in.InstallsCRDs = p.SingleNamespace, p.InstallsCRDs
	in.ImageRegistry, in.PlatformCA, in.PlatformCASecret = p.ImageRegistry, p.PlatformCA, p.PlatformCASecret
	in.HTTPProxy, in.HTTPSProxy, in.NoProxy = p.HTTPProxy, p.HTTPSProxy, p.NoProxy
	in.UserTokenSecret, in.UserTokenKey = p.UserTokenSecret, p.UserTokenKey
	in.PlatformURL, in.AccountID = p.PlatformURL, p.AccountID
	in.IngressProtocol, in.IngressTLS, in.IngressAnnotations = p.Protocol, p.IngressTLS, p.IngressAnnotations
	in.TunnelServer, in.ArgoCDAuthType, in.ArgoCDUser, in.UserToken = p.TunnelServer, p.ArgoCDAuthType, p.ArgoCDUser, p.UserToken
	if given {
		in.Values = v
		if p.RuntimeName != "" && in.RuntimeName == DefaultRuntimeName {
			in.RuntimeName = p.RuntimeName
			in.RuntimeNameSource, _ = sources.Of("global.runtime.name")
		}
	}
	return in, nil
}
