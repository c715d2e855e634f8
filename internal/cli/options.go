package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// Options are a compiled run (Flags.ToConfig) and what the command needs to
// carry it out: the console it prints on, the kubeconfig it connects with,
// the fleet it runs over. Run connects, runs the session (run), prints the
// report and maps the verdict to the exit code.
type Options struct {
	term   console
	name   string // the command as the user runs it (reporters.Options.Name)
	config *run.Config
	format reporters.Format
	kube   kubeconfig
	fleet  *fleetTarget // nil: one cluster
	// bundle is --bundle ("" for none) and recorded the flags its manifest
	// keeps.
	bundle        string
	recorded      []bundle.Flag
	listChecks    bool
	debugRequests bool
}

// ToOptions returns the options of the run cfg compiled from f, printed on
// the console term as the command called name.
func (f *Flags) ToOptions(cfg *run.Config, term console, name string) (*Options, error) {
	format, err := reporters.ParseFormat(cfg.Output.Format)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return &Options{
		term: term, name: name, config: cfg, format: format,
		kube:       kubeconfig{flags: f.conn.kube, getenv: f.conn.getenv, timeout: cfg.Timeout},
		fleet:      f.fleet.target(),
		bundle:     f.output.bundle,
		listChecks: f.selection.listChecks, debugRequests: f.output.debugRequests,
	}, nil
}

// Run runs the checks and writes the report (or the catalogue, with
// --list-checks). It returns nil for exit 0 and an *ExitError otherwise.
func (o *Options) Run(ctx context.Context) error {
	switch {
	case o.listChecks:
		return o.printChecks()
	case o.fleet != nil:
		return o.runFleet(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, o.config.Timeout+o.config.Wait)
	defer cancel()
	started := bundle.Now()
	var restCfg *rest.Config
	var contextName string
	if b := o.config.Replay; b != nil {
		restCfg, contextName = b.RESTConfig(), b.Manifest.Context
	} else {
		var err error
		if restCfg, contextName, err = o.kube.restConfig(ctx, o.term.host.IsInputTerminal(o.term.streams.In)); err != nil {
			return err
		}
	}
	var rec *bundle.Recorder
	if o.bundle != "" {
		rec = bundle.NewRecorder()
		restCfg = rest.CopyConfig(restCfg)
		restCfg.Wrap(rec.Wrap)
	}
	clients, err := cluster.NewClients(restCfg)
	if err != nil {
		return usageError("%v", err)
	}
	if o.debugRequests {
		// Every HTTP request sent to the API server, and how many of those
		// fetched a further page of a paginated LIST (a number that grows
		// with the cluster, unlike the rest).
		defer func() {
			fmt.Fprintf(o.term.streams.ErrOut, "api-requests: total=%d pages=%d\n", clients.Requests.Load(), clients.Pages.Load())
		}()
	}
	cfg := o.hooked()
	cfg.Record = rec
	session := &run.Session{Config: cfg, Clients: clients, Cluster: checks.ClusterInfo{Server: restCfg.Host, Context: contextName}}
	report, verdict := session.Run(ctx)
	if report == nil {
		return exitFor(verdict)
	}
	var bundleErr error
	if rec != nil {
		bundleErr = writeBundle(ctx, rec, o.bundle, o.config, o.recorded, started, report)
	}
	o.renameInHints(report.Outcomes)
	if err := o.write(report); err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("writing report: %w", err)}
	}
	if verdict.Brief != nil && (o.format == reporters.FormatTable || o.format == reporters.FormatWide) {
		// The table just showed the reason: the error line refers to it.
		verdict.Err = verdict.Brief
	}
	// The report is whole; the recording of it may not be.
	return exitFor(verdict.Unrecorded(bundleErr))
}

// hooked is the run's config with the hooks of this command bound: the
// progress line on a terminal, the fix plan's writer and its confirmation.
func (o *Options) hooked() *run.Config {
	c := *o.config
	c.Hooks.Round = o.term.runOptions
	if pw := o.term.progressWidth(); pw > 0 {
		c.Hooks.Waiting = terminalProgress(o.term.streams.ErrOut, pw)
	}
	c.Fix.PlanOut = o.term.planWriter(o.format)
	c.Fix.Confirm = o.term.confirm
	return &c
}

// renameInHints rewrites the command named in the outcomes' hints
// ("kubectl gitops-preflight --fix ...") to the one the user runs: under
// Helm, "helm gitops-preflight".
func (o *Options) renameInHints(outcomes []checks.Outcome) {
	if o.name == reporters.DefaultName {
		return
	}
	for i := range outcomes {
		outcomes[i].Hint = strings.ReplaceAll(outcomes[i].Hint, reporters.DefaultName, o.name)
		outcomes[i].Message = strings.ReplaceAll(outcomes[i].Message, reporters.DefaultName, o.name)
	}
}

// write prints the report in the run's format.
func (o *Options) write(r *checks.Report) error {
	rep, err := reporters.New(o.format, reporters.Options{Color: o.term.colorEnabled(o.config.Output.NoColor), Width: o.term.outputWidth(), Name: o.name})
	if err != nil {
		return err
	}
	return rep.Report(o.term.streams.Out, r)
}

// printChecks is --list-checks: the catalogue, or with --post or --upgrade
// the checks of that mode.
func (o *Options) printChecks() error {
	var list []checks.Check
	for _, c := range o.config.Registry.Checks() {
		if o.config.Mode != checks.ModePre && !c.Modes.Has(o.config.Mode) {
			continue
		}
		list = append(list, c)
	}
	if err := reporters.ListChecks(o.term.streams.Out, o.format, list, o.term.outputWidth()); err != nil {
		if errors.Is(err, reporters.ErrListFormat) {
			return usageError("%v", err)
		}
		return &ExitError{Code: ExitFailed, Err: err}
	}
	return nil
}
