package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// Host is what the command needs from the process; main fills it.
type Host struct {
	// Getenv reads an environment variable.
	Getenv func(string) string
	// IsTerminal reports whether w is an interactive terminal.
	IsTerminal func(w io.Writer) bool
	// IsInputTerminal reports whether r is an interactive terminal (--fix
	// asks for confirmation only when stdin and stdout both are).
	IsInputTerminal func(r io.Reader) bool
	// TerminalWidth returns the width in columns of the terminal w is, or 0
	// when it cannot tell (then the width is taken as 80).
	TerminalWidth func(w io.Writer) int
}

// defaultTerminalWidth is the width assumed for a terminal that does not say.
const defaultTerminalWidth = 80

// terminalWidth is the column count of w when w is a terminal, else 0.
func (o *Options) terminalWidth(w io.Writer) int {
	if !o.Host.IsTerminal(w) {
		return 0
	}
	if n := o.Host.TerminalWidth(w); n > 0 {
		return n
	}
	return defaultTerminalWidth
}

// outputWidth is the width the table report wraps to: the terminal's when
// stdout is one, 0 (full lines for tools) when it is piped.
func (o *Options) outputWidth() int {
	return o.terminalWidth(o.Streams.Out)
}

// progressWidth is the width of the progress line on stderr, or 0 when no
// progress line may be written: stderr is not a terminal, or TERM is "dumb"
// (a terminal that cannot erase a line).
func (o *Options) progressWidth() int {
	if o.Host.Getenv("TERM") == "dumb" {
		return 0
	}
	return o.terminalWidth(o.Streams.ErrOut)
}

// Options are the command's flags and, after Complete, its typed run config.
type Options struct {
	ConfigFlags *genericclioptions.ConfigFlags
	Streams     genericiooptions.IOStreams
	Host        Host

	// Flags, raw.
	Output     string
	Only, Skip []string
	FailOn     string
	// Waivers is the --waivers file of accepted findings ("" for none).
	Waivers     string
	RuntimeName string
	ReleaseName string
	Post        bool
	// Upgrade is --upgrade; ReuseValues, ResetValues and
	// ResetThenReuseValues are helm upgrade's values flags.
	Upgrade                                        bool
	ReuseValues, ResetValues, ResetThenReuseValues bool
	HelmMajor                                      int
	ListChecks                                     bool
	NoColor                                        bool
	Timeout                                        time.Duration

	// Planned-install shortcuts (override values files; applied as --set
	// over the values, see completeValues).
	AccessMode            string
	IngressHost           string
	IngressClass          string
	IngressURL            string
	ExistingArgoCD        bool
	SkipIngressValidation bool

	// Values (-f, --set) and network probe controls.
	ValueFiles         []string
	SetValues          []string
	SetStringValues    []string
	Chart              string
	ChartVersion       string
	ConnectTo          []string
	CAFile             string
	ArgoCDVersionRange string

	// --fix and its options. CRDs is "" when --crds was not given (all).
	Fix       bool
	Yes       bool
	DryRun    bool
	CRDs      string
	TLSSecret string

	// Wait re-runs failing post-install checks until they pass or it elapses.
	Wait time.Duration

	// argoCD are the flags of a runtime Argo CD manages (--argocd-app).
	argoCD argoCDFlags

	// Contexts (--contexts) and AllContexts (--all-contexts) run the checks
	// on many clusters, Parallel (--parallel) at a time.
	Contexts    []string
	AllContexts bool
	Parallel    int
	// Bundle is --bundle: the file the run's recording is written to ("" for
	// none).
	Bundle string
	// bundleFlags are the flags the bundle's manifest keeps (recordFlags).
	bundleFlags []bundle.Flag
	// replay is the bundle a `replay` run answers from (nil for a live run),
	// with why its run could not load the chart and whether it chose a namespace.
	replay                 *bundle.Bundle
	replayChartErr         error
	replayNamespaceChanged bool
	// replayChartGiven is a replay's --chart: the recorded chart's version
	// source no longer applies.
	replayChartGiven bool
	// waiversName is how reports name the --waivers file when it is not
	// o.Waivers: a replay reads the recorded file from a temporary copy and
	// names it by the path the recorded run was given.
	waiversName string

	// installer (--installer, --installer-group) and inCluster
	// (--in-cluster, --termination-log): the identity that installs, and
	// a run from a pod (flags_gate.go).
	installer installerFlags
	inCluster inClusterFlags

	// DebugRequestCount (hidden --debug-request-count) prints the number of
	// API requests of the run to stderr when it ends (for make bench).
	DebugRequestCount bool

	// contextsGiven is whether --contexts was given (even as "").
	contextsGiven bool

	// displayName is the command as the user runs it: "kubectl
	// gitops-preflight", or "helm gitops-preflight" under Helm.
	displayName string

	// images are the image checks' flags (--registry-mirror, --registry-check).
	images imagesFlags

	// Typed run config, set by Complete: the output format, and what the
	// run takes (run.Config; its hooks are bound when the run starts).
	format reporters.Format
	config run.Config
}

// NewOptions returns options with the chart's defaults.
func NewOptions(streams genericiooptions.IOStreams, host Host) *Options {
	if host.Getenv == nil {
		host.Getenv = func(string) string { return "" }
	}
	if host.IsTerminal == nil {
		host.IsTerminal = func(io.Writer) bool { return false }
	}
	if host.IsInputTerminal == nil {
		host.IsInputTerminal = func(io.Reader) bool { return false }
	}
	if host.TerminalWidth == nil {
		host.TerminalWidth = func(io.Writer) int { return 0 }
	}
	return &Options{
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		Streams:     streams,
		Host:        host,
		Output:      string(reporters.FormatTable),
		FailOn:      "fail",
		RuntimeName: checks.DefaultRuntimeName,
		ReleaseName: checks.DefaultReleaseName,
		displayName: reporters.DefaultName,
		Timeout:     5 * time.Minute,
		Chart:       plan.DefaultChart,
		Parallel:    run.DefaultParallel,
	}
}

// Complete turns the flags into the typed run config; every error is a usage
// error (exit 2) and nothing has touched the cluster yet.
func (o *Options) Complete(namespaceChanged bool) error {
	return o.CompleteContext(context.Background(), namespaceChanged)
}

// CompleteContext is Complete with reading values (files, stdin) bounded by
// ctx: the run's --timeout and signals.
func (o *Options) CompleteContext(ctx context.Context, namespaceChanged bool) error {
	f, err := reporters.ParseFormat(o.Output)
	if err != nil {
		return usageError("%v", err)
	}
	o.format = f
	switch o.FailOn {
	case "fail", "error":
	case "warn":
		o.config.FailOnWarn = true
	default:
		return usageError("--fail-on must be warn or fail, not %q", o.FailOn)
	}
	if o.Timeout <= 0 {
		return usageError("--timeout must be positive, not %s", o.Timeout)
	}
	reg, err := checks.NewRegistry(checks.All())
	if err != nil {
		return fmt.Errorf("internal error: %w", err)
	}
	o.config.Registry = reg
	if o.Waivers != "" {
		data, err := os.ReadFile(o.Waivers)
		if err != nil {
			return usageError("--waivers: %v", err)
		}
		if o.config.Waivers, err = run.ParseWaivers(cmp.Or(o.waiversName, o.Waivers), data, reg); err != nil {
			return usageError("%v", err)
		}
	}
	o.config.Mode = checks.ModePre
	if o.Post && o.Upgrade {
		return usageError("--post and --upgrade are different runs: give one of them")
	}
	if o.Post {
		o.config.Mode = checks.ModePost
	}
	if o.Upgrade {
		o.config.Mode = checks.ModeUpgrade
	}
	o.config.Upgrade = chart.UpgradeValues{Reuse: o.ReuseValues, Reset: o.ResetValues, ResetThenReuse: o.ResetThenReuseValues}
	if err := o.argoCD.toConfig(&o.config.ArgoCD); err != nil {
		return err
	}
	if o.HelmMajor != 0 && o.HelmMajor != 3 && o.HelmMajor != 4 {
		return usageError("--helm-major must be 3 or 4, not %d", o.HelmMajor)
	}
	if !o.Upgrade && (o.ReuseValues || o.ResetValues || o.ResetThenReuseValues) {
		return usageError("--reuse-values, --reset-values and --reset-then-reuse-values are helm upgrade's: use them with --upgrade")
	}
	if o.Post && o.HelmMajor != 0 {
		return usageError("--helm-major says which Helm will install or upgrade: it has no use with --post")
	}
	if err := o.installer.toConfig(&o.config); err != nil {
		return err
	}
	o.config.Getenv = o.Host.Getenv
	o.config.Wait = o.Wait
	o.config.Fix = run.Fix{Enabled: o.Fix, Yes: o.Yes, DryRun: o.DryRun}
	if !o.ListChecks {
		o.config.Selected, err = reg.Select(o.config.Mode, o.Only, o.Skip)
		if err != nil {
			return usageError("%v", err)
		}
	}

	switch o.CRDs {
	case "", "all", "rollouts":
	default:
		return usageError("--crds must be all or rollouts, not %q", o.CRDs)
	}
	if o.Wait < 0 {
		return usageError("--wait must not be negative, not %s", o.Wait)
	}
	if o.Wait > 0 && !o.Post {
		return usageError("--wait re-runs post-install checks: use it with --post")
	}
	if err := o.completeFleet(o.contextsGiven); err != nil {
		return err
	}
	if err := o.completeFix(); err != nil {
		return err
	}
	if err := o.images.complete(&o.config); err != nil {
		return err
	}
	if o.Fix && (o.Bundle != "" || o.replay != nil) {
		return usageError("--fix changes the cluster: a run with --bundle, or a replay, only reads it")
	}
	crds := o.CRDs
	if crds == "" {
		crds = "all"
	}

	if err := o.inCluster.beforeValues(o); err != nil {
		return err
	}
	ns := checks.DefaultNamespace
	if namespaceChanged && o.ConfigFlags.Namespace != nil && *o.ConfigFlags.Namespace != "" {
		ns = *o.ConfigFlags.Namespace
	}
	if err := o.completeValues(ctx, ns, namespaceChanged, crds); err != nil {
		return err
	}
	o.inCluster.toConfig(&o.config)
	return nil
}

// Run executes the selected checks and writes the report. It returns nil for
// exit 0 and an *ExitError otherwise.
func (o *Options) Run(ctx context.Context) error {
	if o.ListChecks {
		return o.listChecks()
	}
	if o.fleetMode() {
		return o.runFleet(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout+o.Wait)
	defer cancel()
	started := bundle.Now()
	restCfg, contextName, err := o.restConfig(ctx)
	if err != nil {
		return err
	}
	var rec *bundle.Recorder
	if o.Bundle != "" {
		rec = bundle.NewRecorder()
		restCfg = rest.CopyConfig(restCfg)
		restCfg.Wrap(rec.Wrap)
	}
	clients, err := cluster.NewClients(restCfg)
	if err != nil {
		return usageError("%v", err)
	}
	if o.DebugRequestCount {
		defer o.printRequestCount(clients)
	}
	cfg := o.runConfig()
	cfg.Record, cfg.Replay = rec, o.replay
	session := &run.Session{Config: cfg, Clients: clients, Cluster: checks.ClusterInfo{Server: restCfg.Host, Context: contextName}}
	report, verdict := session.Run(ctx)
	if report == nil {
		return &ExitError{Code: ExitFailed, Err: verdict.Err}
	}
	var bundleErr error
	if rec != nil {
		bundleErr = o.writeBundle(ctx, rec, o.Bundle, o.config.Chart, started, restCfg.Host, contextName, report)
	}
	o.renameInHints(report.Outcomes)
	if err := o.write(report); err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("writing report: %w", err)}
	}
	o.inCluster.noteLeftOut(o.Streams.ErrOut)
	if err := o.inCluster.writeTerminationLog(o.displayName, report, exitFor(verdict) != nil); err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("--termination-log: %w", err)}
	}
	if verdict.Brief != nil && (o.format == reporters.FormatTable || o.format == reporters.FormatWide) {
		// The table just showed the reason: the error line refers to it.
		verdict.Err = verdict.Brief
	}
	if bundleErr != nil {
		// The report is whole; the recording of it is not.
		return &ExitError{Code: ExitFailed, Err: bundleErr}
	}
	return exitFor(verdict)
}

// restConfig is the REST config of the run and the context's name: the
// bundle's (answering from the recording) in a replay, else the
// kubeconfig's, with exec credentials resolved under the run's deadline
// and signals (client-go would run the plugin unbounded, inside the first
// request). When the plugin gives no credentials, every request fails with
// its reason: cluster-reachable reports it and the run exits 3 with a full
// report.
func (o *Options) restConfig(ctx context.Context) (*rest.Config, string, error) {
	if o.replay != nil {
		return o.replay.RESTConfig(), o.replay.Manifest.Context, nil
	}
	if o.inCluster.enabled {
		cfg, err := o.inCluster.restConfig(o.Host.Getenv)
		return cfg, "in-cluster", err
	}
	restCfg, contextName, err := o.loadKubeconfig(ctx)
	if err != nil {
		return nil, "", err
	}
	if authed, err := cluster.ResolveExecCredentials(ctx, restCfg, o.Host.IsInputTerminal(o.Streams.In)); err != nil {
		restCfg = cluster.FailingConfig(restCfg, err)
	} else {
		restCfg = authed
	}
	return restCfg, contextName, nil
}

// runConfig is the typed config with the hooks of this command bound: the
// progress line on a terminal, the fix plan's writer and its confirmation.
func (o *Options) runConfig() *run.Config {
	c := o.config
	c.Hooks.Round = o.runOptions
	if pw := o.progressWidth(); pw > 0 {
		c.Hooks.Waiting = terminalProgress(o.Streams.ErrOut, pw)
	}
	c.Fix.PlanOut = o.planWriter()
	c.Fix.Confirm = o.confirm
	return &c
}

// renameInHints rewrites the command named in the outcomes' hints
// ("kubectl gitops-preflight --fix ...") to the one the user runs: under
// Helm, "helm gitops-preflight".
func (o *Options) renameInHints(outcomes []checks.Outcome) {
	if o.displayName == reporters.DefaultName {
		return
	}
	for i := range outcomes {
		outcomes[i].Hint = strings.ReplaceAll(outcomes[i].Hint, reporters.DefaultName, o.displayName)
		outcomes[i].Message = strings.ReplaceAll(outcomes[i].Message, reporters.DefaultName, o.displayName)
	}
}

// printRequestCount writes one line to stderr: every HTTP request sent to the
// API server, and how many of those fetched a further page of a paginated
// LIST (a number that grows with the cluster, unlike the rest):
//
//	api-requests: total=23 pages=118
func (o *Options) printRequestCount(c *cluster.Clients) {
	fmt.Fprintf(o.Streams.ErrOut, "api-requests: total=%d pages=%d\n", c.Requests.Load(), c.Pages.Load())
}

// loadKubeconfig reads the kubeconfig (files, a FIFO, whatever --kubeconfig
// and KUBECONFIG name) and returns the REST config and the context's name.
// client-go reads without a context, so the read runs aside and ctx bounds
// the wait: a kubeconfig that never ends reading is a timeout (exit 3) or an
// interruption, not a hang.
func (o *Options) loadKubeconfig(ctx context.Context) (*rest.Config, string, error) {
	type loaded struct {
		cfg  *rest.Config
		name string
		err  error
	}
	ch := make(chan loaded, 1)
	go func() {
		cfg, err := o.ConfigFlags.ToRESTConfig()
		ch <- loaded{cfg, o.contextName(), err}
	}()
	select {
	case l := <-ch:
		if l.err != nil {
			if clientcmd.IsEmptyConfig(l.err) {
				return nil, "", o.noKubeconfig()
			}
			return nil, "", usageError("kubeconfig: %v", l.err)
		}
		if o.kubeconfigEmpty() {
			return nil, "", o.noKubeconfig()
		}
		return l.cfg, l.name, nil
	case <-ctx.Done():
		if i := run.Interruption(ctx); i != nil {
			return nil, "", &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("%w while reading the kubeconfig; nothing checked", i)}
		}
		return nil, "", &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("reading the kubeconfig did not finish within --timeout %s; nothing checked", o.Timeout)}
	}
}

// kubeconfigEmpty reports whether no kubeconfig file gave a cluster, no
// --server was given and the process is not in a pod: client-go then falls
// back to its default server, http://localhost:8080, which is never what a
// user of this plugin meant.
func (o *Options) kubeconfigEmpty() bool {
	if o.ConfigFlags.APIServer != nil && *o.ConfigFlags.APIServer != "" {
		return false
	}
	raw, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil || len(raw.Clusters) > 0 {
		return false
	}
	_, err = rest.InClusterConfig()
	return errors.Is(err, rest.ErrNotInCluster)
}

// noKubeconfig is the one-line error (exit 3: no cluster could be reached)
// for a run with no kubeconfig, naming where client-go looked: --kubeconfig,
// else the files of KUBECONFIG, else ~/.kube/config.
func (o *Options) noKubeconfig() error {
	var where string
	switch {
	case o.ConfigFlags.KubeConfig != nil && *o.ConfigFlags.KubeConfig != "":
		where = "--kubeconfig " + *o.ConfigFlags.KubeConfig
	case o.Host.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		where = clientcmd.RecommendedConfigPathEnvVar + "=" + o.Host.Getenv(clientcmd.RecommendedConfigPathEnvVar)
	default:
		where = "~/" + clientcmd.RecommendedHomeDir + "/" + clientcmd.RecommendedFileName + " (KUBECONFIG is not set)"
	}
	return &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("no kubeconfig with a cluster found: looked in %s; set KUBECONFIG, pass --kubeconfig, or --server with --token; nothing checked", where)}
}

// contextName is the kubeconfig context in use. The loader caches the merged
// kubeconfig, so this reads no file twice.
func (o *Options) contextName() string {
	if o.ConfigFlags.Context != nil && *o.ConfigFlags.Context != "" {
		return *o.ConfigFlags.Context
	}
	raw, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return ""
	}
	return raw.CurrentContext
}

// colorEnabled reports whether the report is coloured: stdout is a terminal
// that can show colour (TERM is not "dumb", as ncurses and git treat it), and
// neither --no-color nor NO_COLOR (https://no-color.org) says no.
func (o *Options) colorEnabled() bool {
	return !o.NoColor && o.Host.Getenv("NO_COLOR") == "" && o.Host.Getenv("TERM") != "dumb" && o.Host.IsTerminal(o.Streams.Out)
}

func (o *Options) write(r *checks.Report) error {
	opts, closeSummary, err := o.withStepSummary(reporters.Options{Color: o.colorEnabled(), Width: o.outputWidth(), Name: o.displayName})
	if err != nil {
		return err
	}
	rep, err := reporters.New(o.format, opts)
	if err != nil {
		return err
	}
	if err := rep.Report(o.Streams.Out, r); err != nil {
		return err
	}
	return closeSummary()
}

func (o *Options) listChecks() error {
	var list []checks.Check
	for _, c := range o.config.Registry.Checks() {
		if (o.Post || o.Upgrade) && !c.Modes.Has(o.config.Mode) {
			continue
		}
		list = append(list, c)
	}
	if err := reporters.ListChecks(o.Streams.Out, o.format, list, o.outputWidth()); err != nil {
		if errors.Is(err, reporters.ErrListFormat) {
			return usageError("%v", err)
		}
		return &ExitError{Code: ExitFailed, Err: err}
	}
	return nil
}

// deadline bounds one cluster's run: --timeout, plus --wait's rounds (a
// --timeout of 0 or less sets no bound; CompleteContext refuses it).
func (o *Options) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if o.Timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, o.Timeout+max(o.Wait, 0))
}
