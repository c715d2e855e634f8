package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
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
	Output      string
	Only, Skip  []string
	FailOn      string
	RuntimeName string
	ReleaseName string
	Post        bool
	ListChecks  bool
	NoColor     bool
	Timeout     time.Duration

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

	// DebugRequestCount (hidden --debug-request-count) prints the number of
	// API requests of the run to stderr when it ends (for make bench).
	DebugRequestCount bool

	// displayName is the command as the user runs it: "kubectl
	// gitops-preflight", or "helm gitops-preflight" under Helm.
	displayName string

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
		// The chart's supported Argo CD range (checks.DefaultArgoCDVersionRange).
		ArgoCDVersionRange: checks.DefaultArgoCDVersionRange,
		Chart:              plan.DefaultChart,
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
	if err := o.completeFix(); err != nil {
		return err
	}
	crds := o.CRDs
	if crds == "" {
		crds = "all"
	}

	ns := checks.DefaultNamespace
	if namespaceChanged && o.ConfigFlags.Namespace != nil && *o.ConfigFlags.Namespace != "" {
		ns = *o.ConfigFlags.Namespace
	}
	if err := o.completeValues(ctx, ns, namespaceChanged, crds); err != nil {
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
	ctx, cancel := context.WithTimeout(ctx, o.Timeout+o.Wait)
	defer cancel()
	restCfg, contextName, err := o.loadKubeconfig(ctx)
	if err != nil {
		return err
	}
	// The exec credential plugin runs here, under the run's deadline and
	// signals (client-go would run it unbounded, inside the first request).
	// When it gives no credentials, every request fails with its reason:
	// cluster-reachable reports it and the run exits 3 with a full report.
	if authed, err := cluster.ResolveExecCredentials(ctx, restCfg, o.Host.IsInputTerminal(o.Streams.In)); err != nil {
		restCfg = cluster.FailingConfig(restCfg, err)
	} else {
		restCfg = authed
	}
	clients, err := cluster.NewClients(restCfg)
	if err != nil {
		return usageError("%v", err)
	}
	if o.DebugRequestCount {
		defer o.printRequestCount(clients)
	}
	var snap *cluster.Snapshot
	var env *checks.Env // the last round's, which --fix plans with
	w := waiter{wait: o.Wait, interval: WaitInterval, now: time.Now}
	if pw := o.progressWidth(); pw > 0 {
		w.progress = terminalProgress(o.Streams.ErrOut, pw)
	}
	outcomes := w.run(ctx, o.selected, func(ctx context.Context, cs []checks.Check) []checks.Outcome {
		snap = cluster.NewSnapshot(ctx, clients) // each round reads the cluster afresh
		if o.mode == checks.ModePost {
			// Rights in the runtime namespace are enough after the install.
			snap.SetNamespaceFallback(o.inputs.Namespace)
		}
		env = &checks.Env{Inputs: o.inputs, Cluster: snap, Getenv: o.Host.Getenv, Probe: o.prober, Chart: o.startRender(ctx, snap)}
		runOpts, progressDone := o.runOptions(len(cs))
		defer progressDone()
		return checks.Run(ctx, env, cs, runOpts)
	})

	report := &checks.Report{Mode: o.mode, Outcomes: outcomes, Cluster: checks.ClusterInfo{Server: restCfg.Host, Context: contextName}}
	interrupted := interruption(ctx)
	fixFailed := false
	if o.Fix && !report.Unreachable() && interrupted == nil {
		if report.Outcomes, fixFailed, err = o.runFix(ctx, env, clients, report.Outcomes); err != nil {
			return err
		}
	}
	if v, err := snap.ServerVersion(); err == nil {
		report.Cluster.Version = v.GitVersion
	}
	o.renameInHints(report.Outcomes)
	if err := o.write(report); err != nil {
		return &ExitError{Code: checks.ExitFailed, Err: fmt.Errorf("writing report: %w", err)}
	}
	code := report.ExitCode(o.failOnWarn)
	if fixFailed && code == checks.ExitOK {
		code = checks.ExitFailed
	}
	if interrupted != nil {
		if code == checks.ExitUnreachable {
			return &ExitError{Code: code, Err: fmt.Errorf("%w before the cluster %s was reached; nothing checked", interrupted, restCfg.Host)}
		}
		return &ExitError{Code: interrupted.Code, Err: fmt.Errorf("%w: the report is partial", interrupted)}
	}
	if unverified := nothingVerified(report); len(unverified) > 0 && code == checks.ExitOK {
		return &ExitError{Code: checks.ExitFailed, Err: fmt.Errorf("nothing about the runtime was verified: %s ended skip for lack of permission; run with rights to read the runtime namespace %s (get/list Secrets, Deployments, StatefulSets, Pods, Events)", strings.Join(unverified, " and "), o.inputs.Namespace)}
	}
	switch code {
	case checks.ExitOK:
		return nil
	case checks.ExitUnreachable:
		return &ExitError{Code: code, Err: unreachableError(report)}
	default:
		return &ExitError{Code: code}
	}
}

// unreachableError is the exit-3 line: what the fatal check found (server
// down, credentials rejected...) and which checks still ran, those that need
// no cluster (Offline), e.g.
//
//	cluster-reachable failed: https://x rejected the credentials (401 Unauthorized); only the checks that need no cluster ran: runtime-name, values
func unreachableError(r *checks.Report) error {
	var fatal string
	var ran []string
	for _, o := range r.Outcomes {
		switch {
		case o.Fatal && o.Status != checks.StatusPass && fatal == "":
			fatal = fmt.Sprintf("%s %s: %s", o.ID, o.Status, strings.SplitN(o.Message, "\n", 2)[0])
		case !o.Fatal && o.Offline && o.Status != checks.StatusSkip:
			ran = append(ran, o.ID)
		}
	}
	if len(ran) == 0 {
		return fmt.Errorf("%s; no other check could run", fatal)
	}
	return fmt.Errorf("%s; only the checks that need no cluster ran: %s", fatal, strings.Join(ran, ", "))
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

// CoreChecks are the checks of each mode without which a run verified
// nothing about its subject: after the install, the release and the
// workloads (README "Exit codes").
var CoreChecks = map[checks.Mode][]string{
	checks.ModePost: {"release-deployed", "runtime-workloads"},
}

// nothingVerified returns the core checks of the report's mode when every
// one of them that ran ended skip for lack of permission (nil otherwise).
func nothingVerified(r *checks.Report) []string {
	var skipped []string
	ran := 0
	for _, id := range CoreChecks[r.Mode] {
		for _, o := range r.Outcomes {
			if o.ID != id {
				continue
			}
			ran++
			if o.Status == checks.StatusSkip && strings.HasPrefix(o.Message, "no permission") {
				skipped = append(skipped, id)
			}
		}
	}
	if ran == 0 || len(skipped) != ran {
		return nil
	}
	return skipped
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
				return nil, "", &ExitError{Code: checks.ExitUnreachable, Err: errors.New("no cluster configured: set KUBECONFIG or pass --kubeconfig/--context")}
			}
			return nil, "", usageError("kubeconfig: %v", l.err)
		}
		return l.cfg, l.name, nil
	case <-ctx.Done():
		if i := interruption(ctx); i != nil {
			return nil, "", &ExitError{Code: checks.ExitUnreachable, Err: fmt.Errorf("%w while reading the kubeconfig; nothing checked", i)}
		}
		return nil, "", &ExitError{Code: checks.ExitUnreachable, Err: fmt.Errorf("reading the kubeconfig did not finish within --timeout %s; nothing checked", o.Timeout)}
	}
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

func (o *Options) colorEnabled() bool {
	return !o.NoColor && o.Host.Getenv("NO_COLOR") == "" && o.Host.IsTerminal(o.Streams.Out)
}

func (o *Options) write(r *checks.Report) error {
	rep, err := reporters.New(o.format, reporters.Options{Color: o.colorEnabled(), Width: o.outputWidth(), Name: o.displayName})
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
	if err := reporters.ListChecks(o.Streams.Out, o.format, list, o.outputWidth()); err != nil {
		if errors.Is(err, reporters.ErrListFormat) {
			return usageError("%v", err)
		}
		return &ExitError{Code: checks.ExitFailed, Err: err}
	}
	return nil
}
