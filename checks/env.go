package checks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os/exec"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/argocd"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/dryrun"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/proc"
)

// Inputs describe the planned install; they are the typed plan of
// internal/plan, derived once from the flags (plan.New).
type Inputs = plan.Install

// AccessMode is how the runtime is reached from the platform (plan.AccessMode).
type AccessMode = plan.AccessMode

// Access modes (plan.AccessTunnel, ...).
const (
	AccessTunnel      = plan.AccessTunnel
	AccessIngress     = plan.AccessIngress
	AccessServiceMesh = plan.AccessServiceMesh
)

// Defaults of the chart and its docs (plan.DefaultRuntimeName, ...).
const (
	DefaultRuntimeName = plan.DefaultRuntimeName
	DefaultNamespace   = plan.DefaultNamespace
	DefaultReleaseName = plan.DefaultReleaseName
)

// Env is what a check may use: the inputs, the shared cluster snapshot and
// the host environment. internal/run builds it from the run's config, each
// input as the config holds it (Inputs, Images, Installer, Fix, ...); tests
// build it directly.
type Env struct {
	// Inputs is what the chart will get (internal/plan): never how the run
	// was invoked.
	Inputs Inputs
	// Mode is the run's mode, exactly one of ModePre (the zero value means
	// it too), ModePost and ModeUpgrade.
	Mode Mode
	// HelmMajor is the Helm major version (3 or 4) that will run helm
	// install or helm upgrade (--helm-major); 0 means the client
	// helm-version finds.
	HelmMajor int
	// HelmWait is whether helm install or helm upgrade will run with
	// --wait (--helm-wait); HelmWaitUnknown when the run was not told.
	HelmWait HelmWait
	// Installer is who will run helm install or upgrade when not the
	// runner (--installer): cluster-admin reviews its access through
	// SubjectAccessReviews, and InstallerConfig impersonates it; nil means
	// the runner's own identity.
	Installer *Identity
	// InCluster is a run from a pod of the cluster (--in-cluster, the
	// gate Job): the network probes leave from the pod network.
	InCluster bool
	// Fix are --fix's options that a check's planner reads.
	Fix FixOptions
	// Images are the image checks' options (--registry-mirror,
	// --registry-check).
	Images  ImageOptions
	Cluster *cluster.Snapshot
	// Host is what the check reads of the machine and the network.
	Host
	// Resolver looks up host names (net.DefaultResolver by default).
	Resolver Resolver
	// Chart is the chart rendering of the run, started with the cluster
	// reads (chart.Start); nil when no chart is used.
	Chart *chart.Pending
	// ArgoCDApp is the runtime's Argo CD Application as --argocd-app names
	// it ("namespace/name"); "" means: found by ManagingApplication.
	ArgoCDApp string
	// ArgoCDUndetected, without ArgoCDApp, looks for no Application: the
	// run treats the runtime as Helm's (the replay of a bundle whose
	// plugin did not look).
	ArgoCDUndetected bool
}

// RuntimeApp returns the Argo CD Application that manages the runtime
// (argocd.ManagingApplication, memoised on the snapshot); nil when none
// does.
func (e *Env) RuntimeApp() (*RuntimeApp, error) {
	if e.ArgoCDUndetected && e.ArgoCDApp == "" {
		return nil, nil
	}
	return argocd.ManagingApplication(e.Cluster, e.Inputs.Namespace, e.ArgoCDApp)
}

// HelmWait is whether helm install or helm upgrade waits for the release's
// workloads (its --wait): Helm 3 until each Deployment's new ReplicaSet has
// spec.replicas minus maxUnavailable pods ready, each StatefulSet all its
// replicas ready and each DaemonSet (rolling update) its desired pods
// minus maxUnavailable ready (helm.sh/helm/v3 pkg/kube ready.go, polled
// every 2 s by wait.go); Helm 4 (--wait, or --wait=watcher) until kstatus
// says Current, every replica created, updated, available and ready
// (helm.sh/helm/v4 pkg/kube statuswait.go). Either fails the install or
// upgrade at its --timeout (5m0s by default) when they are not. Without
// --wait Helm waits for its hook Jobs alone, and reports success.
type HelmWait int

// The states of HelmWait.
const (
	// HelmWaitUnknown: the run was not told whether Helm waits.
	HelmWaitUnknown HelmWait = iota
	// HelmWaitOn: helm install (upgrade) --wait.
	HelmWaitOn
	// HelmWaitOff: without --wait (Helm 4: --wait=hookOnly, its default).
	HelmWaitOff
)

// MarshalJSON writes w as a bundle's spec records it: true (HelmWaitOn),
// false (HelmWaitOff) or null (HelmWaitUnknown, which a spec leaves out).
func (w HelmWait) MarshalJSON() ([]byte, error) {
	switch w {
	case HelmWaitOn:
		return []byte("true"), nil
	case HelmWaitOff:
		return []byte("false"), nil
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads true, false or null (HelmWaitUnknown).
func (w *HelmWait) UnmarshalJSON(b []byte) error {
	var on *bool
	if err := json.Unmarshal(b, &on); err != nil {
		return err
	}
	switch {
	case on == nil:
		*w = HelmWaitUnknown
	case *on:
		*w = HelmWaitOn
	default:
		*w = HelmWaitOff
	}
	return nil
}

// Host is what a check reads beyond the cluster: the plugin's environment,
// its programs and the network probes. A bundle records what they answer,
// a replay answers from it (internal/run binds them to either); tests set
// them directly.
type Host struct {
	// Getenv reads the plugin's environment (HELM_BIN, ...).
	Getenv func(string) string
	// LookPath finds an executable on PATH (exec.LookPath by default).
	LookPath func(string) (string, error)
	// Command runs a program and returns its standard output (by default
	// proc.Run: own process group killed at the deadline, WaitDelay, output
	// capped at proc.MaxOutput).
	Command func(ctx context.Context, name string, args ...string) ([]byte, error)
	// Probe makes the outbound network probes (--connect-to, --ca-file,
	// --request-timeout); nil means probe.New defaults.
	Probe *probe.Prober
}

// FixOptions are the options of --fix that planners read.
type FixOptions struct {
	// CRDs is which Argo CRDs argo-crds-ownership adopts: "all" (also "")
	// or "rollouts" (--crds).
	CRDs string
	// TLSSecret is the kubernetes.io/tls Secret nginx-tls-secret sets in the
	// runtime Ingress's spec.tls (--tls-secret).
	TLSSecret string
}

// RunMode is the run's single mode: Mode, with the zero value read as
// ModePre.
func (e *Env) RunMode() Mode {
	if e.Mode == 0 {
		return ModePre
	}
	return e.Mode
}

// Post reports whether the run is --post (post-install diagnostics); checks
// that run in several modes use it to pick their status (warn before, fail
// after).
func (e *Env) Post() bool { return e.Mode == ModePost }

// Upgrading reports whether the run is --upgrade (before helm upgrade of
// the deployed release).
func (e *Env) Upgrading() bool { return e.Mode == ModeUpgrade }

// errNoChart is the chart-based checks' reason when the run has no chart.
var errNoChart = &chart.LoadError{Err: errors.New("no chart given")}

// Rendering waits for the run's chart rendering. The error is
// *chart.LoadError (no chart could be loaded: skip), *chart.RenderError (the
// chart refuses the values) or another error (the cluster's capabilities
// could not be read).
func (e *Env) Rendering(ctx context.Context) (*chart.Rendering, error) {
	if e.Chart == nil {
		return nil, errNoChart
	}
	return e.Chart.Wait(ctx)
}

// Resolver resolves a host name to its addresses, as net.Resolver.LookupHost.
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
}

// RunCommand runs a program and returns its standard output: Env.Command's
// default (proc.Run: own process group killed at ctx's deadline, WaitDelay,
// output capped at proc.MaxOutput).
func RunCommand(ctx context.Context, name string, args ...string) ([]byte, error) {
	out, _, err := proc.Run(ctx, exec.Command(name, args...), proc.Options{})
	return out, err
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
		e.Command = RunCommand
	}
	if e.Resolver == nil {
		e.Resolver = net.DefaultResolver
	}
}

// Upgrade waits for the run's `helm upgrade` prediction (--upgrade). The
// errors are Rendering's and *chart.ReleaseError (Helm refuses the
// release).
func (e *Env) Upgrade(ctx context.Context) (*chart.Upgrade, error) {
	if e.Chart == nil {
		return nil, errNoChart
	}
	u, err := e.Chart.Upgrade(ctx)
	if err == nil && u == nil {
		return nil, errors.New("internal error: the chart was rendered for an install, not an upgrade")
	}
	return u, err
}

// Identity is who will run helm install or helm upgrade when it is not the
// identity running the checks (--installer): Argo CD's application
// controller, a CI deployer. User is a user name or a ServiceAccount as
// system:serviceaccount:NAMESPACE:NAME; Groups are its groups (a
// ServiceAccount's are added: system:serviceaccounts,
// system:serviceaccounts:NAMESPACE, and system:authenticated for every
// identity, as the API server's authenticators add them:
// dryrun.InstallerGroups).
type Identity struct {
	User   string   `json:"user"`
	Groups []string `json:"groups,omitempty"`
}

// NewIdentity checks an --installer user name (and --installer-group
// groups) and returns the identity with the groups the API server would
// give it. The error is one line.
func NewIdentity(user string, groups []string) (Identity, error) {
	gs, err := dryrun.InstallerGroups(user, groups)
	if err != nil {
		return Identity{}, err
	}
	return Identity{User: user, Groups: gs}, nil
}

// ServiceAccount returns the namespace and name of a ServiceAccount
// identity (ok false for a user).
func (id Identity) ServiceAccount() (ns, name string, ok bool) {
	return dryrun.ServiceAccount(id.User)
}

// String names the identity as messages do: "user alice", "ServiceAccount
// argocd/argocd-application-controller".
func (id Identity) String() string {
	if ns, name, ok := id.ServiceAccount(); ok {
		return "ServiceAccount " + ns + "/" + name
	}
	return "user " + id.User
}

// InstallerConfig is the seam the dry-run checks send their requests
// through: the REST config of the identity that will install. Without
// --installer it is the run's own (the kubeconfig's user, or --as). With
// --installer it is the run's config impersonating the installer (user and
// groups), when the runner may impersonate that user and each of its
// groups (SelfSubjectAccessReview of verb impersonate on users, groups, or
// serviceaccounts in the ServiceAccount's namespace); otherwise the error
// is a *cluster.ListError naming the missing permission, which the runner
// reports as a skip ("no permission to impersonate users ..."), never as a
// dry run sent as the wrong identity.
func (e *Env) InstallerConfig(ctx context.Context) (*rest.Config, error) {
	c := e.Cluster.Clients()
	if c == nil || c.Config == nil {
		return nil, errors.New("no REST config: the clients are fakes")
	}
	id := e.Installer
	if id == nil {
		return c.Config, nil
	}
	for _, attrs := range dryrun.Impersonations(id.User, id.Groups) {
		st, err := review(ctx, e, attrs)
		if err != nil {
			return nil, err
		}
		if !st.Allowed {
			why := fmt.Errorf("to send the dry runs as the installer (%s) the runner needs impersonate on %s %s", id, attrs.Resource, attrs.Name)
			return nil, &cluster.ListError{Verb: "impersonate", Resource: attrs.Resource + " " + attrs.Name, Namespace: attrs.Namespace,
				Err: apierrors.NewForbidden(schema.GroupResource{Resource: attrs.Resource}, attrs.Name, why)}
		}
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: id.User, Groups: id.Groups}
	return cfg, nil
}

// dryRunEngine is the run's engine, built once: it sends as the identity
// that installs (Env.InstallerConfig: the installer of --installer,
// impersonated, else the run's own clients: the kubeconfig's user, or
// --as/--as-group). An error is a *cluster.ListError naming a missing
// impersonation permission (the runner skips), or errNoREST.
func dryRunEngine(ctx context.Context, env *Env) (*dryrun.Engine, error) {
	return cluster.Memo(env.Cluster, "admission/engine", func() (*dryrun.Engine, error) {
		if env.Cluster.Clients().Config == nil {
			return nil, errNoREST
		}
		cfg, err := env.InstallerConfig(ctx)
		if err != nil {
			return nil, err
		}
		return dryrun.New(cfg)
	})
}

// errNoREST is the admission checks' skip when the run has no REST
// configuration (a test over fake clients).
var errNoREST = errors.New("no REST configuration to send dry runs with")

// Source is where a value of the planned install came from (plan.Source):
// a values file's line and column, a flag, or the chart's Chart.yaml.
type Source = plan.Source

// Source returns where the value at path came from (dotted, list items as
// [i]: "global.runtime.ingress.hosts[0]"), or nil when no -f file or flag
// gave it (the chart's default applies). The index is the plan's
// (plan.Install.Sources); this is a position, never the value.
func (e *Env) Source(path string) *Source {
	if s, ok := e.Inputs.Sources.Of(path); ok {
		return &s
	}
	return nil
}

// ChartVersionAnchor returns where the chart version comes from
// (--chart-version, or a local chart's Chart.yaml line), or nil.
func (e *Env) ChartVersionAnchor() *Source {
	if s := e.Inputs.ChartVersionSource; s != (Source{}) {
		return &s
	}
	return nil
}

// WithSource returns r anchored to src (Result.Source); a nil src leaves r
// as it is.
func (r Result) WithSource(src *Source) Result {
	if src != nil {
		r.Source = src
	}
	return r
}

// firstSource is the first of paths that the index knows, or nil.
func (e *Env) firstSource(paths ...string) *Source {
	for _, p := range paths {
		if s := e.Source(p); s != nil {
			return s
		}
	}
	return nil
}

// runtimeNameSource is where the runtime name comes from (--runtime-name,
// or global.runtime.name in a values file), or nil for the default.
func (e *Env) runtimeNameSource() *Source {
	if s := e.Inputs.RuntimeNameSource; s != (Source{}) {
		return &s
	}
	return nil
}
