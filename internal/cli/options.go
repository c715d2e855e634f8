package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
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
}

// Options are the command's flags and, after Complete, its typed run config.
type Options struct {
	ConfigFlags *genericclioptions.ConfigFlags
	Streams     genericiooptions.IOStreams
	Host        Host

	// Flags, raw.
	Output      string
	Only, Skip  []string
	FailOn      string
	RuntimeName string
	ReleaseName string
	Post        bool
	ListChecks  bool
	NoColor     bool
	Timeout     time.Duration

	// Planned-install shortcuts (override values files; see the values issue).
	AccessMode            string
	IngressHost           string
	IngressClass          string
	IngressURL            string
	ExistingArgoCD        bool
	SkipIngressValidation bool

	// Values (-f, --set) and network probe controls.
	ValueFiles         []string
	SetValues          []string
	Chart              string
	ChartVersion       string
	ConnectTo          []string
	CAFile             string
	ArgoCDVersionRange string

	// --fix and its options.
	Fix       bool
	Yes       bool
	DryRun    bool
	CRDs      string
	TLSSecret string

	// Wait re-runs failing post-install checks until they pass or it elapses.
	Wait time.Duration

	// DebugRequestCount (hidden --debug-request-count) prints the number of
	// API requests of the run to stderr when it ends (for make bench).
	DebugRequestCount bool

	// Typed run config, set by Complete.
	format     reporters.Format
	failOnWarn bool
	mode       checks.Mode
	registry   *checks.Registry
	selected   []checks.Check
	inputs     checks.Inputs
	prober     *probe.Prober
	chart      *chart.Loader // nil when no selected check reads the chart
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
	return &Options{
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		Streams:     streams,
		Host:        host,
		Output:      string(reporters.FormatTable),
		FailOn:      "fail",
		RuntimeName: checks.DefaultRuntimeName,
		ReleaseName: checks.DefaultReleaseName,
		Timeout:     5 * time.Minute,
		// The chart's supported Argo CD range (checks.DefaultArgoCDVersionRange).
		ArgoCDVersionRange: checks.DefaultArgoCDVersionRange,
		CRDs:               "all",
		Chart:              plan.DefaultChart,
	}
}

// Complete turns the flags into the typed run config; every error is a usage
// error (exit 2) and nothing has touched the cluster yet.
func (o *Options) Complete(namespaceChanged bool) error {
	f, err := reporters.ParseFormat(o.Output)
	if err != nil {
		return usageError("%v", err)
	}
	o.format = f
	switch o.FailOn {
	case "fail", "error":
	case "warn":
		o.failOnWarn = true
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
	o.registry = reg
	o.mode = checks.ModePre
	if o.Post {
		o.mode = checks.ModePost
	}
	if !o.ListChecks {
		o.selected, err = reg.Select(o.mode, o.Only, o.Skip)
		if err != nil {
			return usageError("%v", err)
		}
	}

	switch o.CRDs {
	case "all", "rollouts":
	default:
		return usageError("--crds must be all or rollouts, not %q", o.CRDs)
	}
	if o.Wait < 0 {
		return usageError("--wait must not be negative, not %s", o.Wait)
	}
	if o.Wait > 0 && !o.Post {
		return usageError("--wait re-runs post-install checks: use it with --post")
	}
	if err := o.completeFix(); err != nil {
		return err
	}

	ns := checks.DefaultNamespace
	if namespaceChanged && o.ConfigFlags.Namespace != nil && *o.ConfigFlags.Namespace != "" {
		ns = *o.ConfigFlags.Namespace
	}
	if err := o.completeValues(ns, namespaceChanged); err != nil {
		return err
	}
	return nil
}

// Run executes the selected checks and writes the report. It returns nil for
// exit 0 and an *ExitError otherwise.
func (o *Options) Run(ctx context.Context) error {
	if o.ListChecks {
		return o.listChecks()
	}
	restCfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return &ExitError{Code: checks.ExitUnreachable, Err: errors.New("no cluster configured: set KUBECONFIG or pass --kubeconfig/--context")}
		}
		return usageError("kubeconfig: %v", err)
	}
	clients, err := cluster.NewClients(restCfg)
	if err != nil {
		return usageError("%v", err)
	}
	if o.DebugRequestCount {
		defer o.printRequestCount(clients)
	}

	ctx, cancel := context.WithTimeout(ctx, o.Timeout+o.Wait)
	defer cancel()
	var snap *cluster.Snapshot
	var env *checks.Env // the last round's, which --fix plans with
	w := waiter{wait: o.Wait, interval: WaitInterval, now: time.Now}
	if o.Host.IsTerminal(o.Streams.ErrOut) {
		w.progress = terminalProgress(o.Streams.ErrOut)
	}
	outcomes := w.run(ctx, o.selected, func(ctx context.Context, cs []checks.Check) []checks.Outcome {
		snap = cluster.NewSnapshot(ctx, clients) // each round reads the cluster afresh
		env = &checks.Env{Inputs: o.inputs, Cluster: snap, Getenv: o.Host.Getenv, Probe: o.prober, Chart: o.startRender(ctx, snap)}
		runOpts, progressDone := o.runOptions(len(cs))
		defer progressDone()
		return checks.Run(ctx, env, cs, runOpts)
	})

	report := &checks.Report{Mode: o.mode, Outcomes: outcomes, Cluster: checks.ClusterInfo{Server: restCfg.Host, Context: o.contextName()}}
	fixFailed := false
	if o.Fix && !report.Unreachable() {
		if report.Outcomes, fixFailed, err = o.runFix(ctx, env, clients, report.Outcomes); err != nil {
			return err
		}
	}
	if v, err := snap.ServerVersion(); err == nil {
		report.Cluster.Version = v.GitVersion
	}
	if err := o.write(report); err != nil {
		return &ExitError{Code: checks.ExitFailed, Err: fmt.Errorf("writing report: %w", err)}
	}
	code := report.ExitCode(o.failOnWarn)
	if fixFailed && code == checks.ExitOK {
		code = checks.ExitFailed
	}
	switch code {
	case checks.ExitOK:
		return nil
	case checks.ExitUnreachable:
		return &ExitError{Code: code, Err: fmt.Errorf("cluster %s not reachable; nothing else checked", restCfg.Host)}
	default:
		return &ExitError{Code: code}
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

func (o *Options) colorEnabled() bool {
	return !o.NoColor && o.Host.Getenv("NO_COLOR") == "" && o.Host.IsTerminal(o.Streams.Out)
}

func (o *Options) write(r *checks.Report) error {
	rep, err := reporters.New(o.format, reporters.Options{Color: o.colorEnabled()})
	if err != nil {
		return err
	}
	return rep.Report(o.Streams.Out, r)
}

func (o *Options) listChecks() error {
	var list []checks.Check
	for _, c := range o.registry.Checks() {
		if o.Post && !c.Modes.Has(checks.ModePost) {
			continue
		}
		list = append(list, c)
	}
	if err := reporters.ListChecks(o.Streams.Out, o.format, list); err != nil {
		if errors.Is(err, reporters.ErrListFormat) {
			return usageError("%v", err)
		}
		return &ExitError{Code: checks.ExitFailed, Err: err}
	}
	return nil
}
