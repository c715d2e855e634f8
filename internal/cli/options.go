package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// Options are a compiled run (Flags.ToConfig, or run.Replay of a bundle)
// and what the command needs to carry it out: the console it prints on, the
// kubeconfig it connects with, the fleet it runs over. Run connects, runs
// the session (internal/run), prints the report and maps the verdict to the
// exit code.
type Options struct {
	term   console
	name   string // the command as the user runs it (reporters.Options.Name)
	config *run.Config
	format reporters.Format
	kube   kubeconfig
	fleet  *fleetTarget // nil: one cluster
	// gate is --in-cluster's (the checks it left out, --termination-log);
	// nil for a replay.
	gate *inClusterFlags
	// listChecks prints the catalogue instead of running (--list-checks);
	// debugRequests prints the count of API requests (--debug-request-count).
	listChecks, debugRequests bool
}

// newOptions returns the options of the run cfg, printed on the console
// term as the command called name.
func newOptions(cfg *run.Config, term console, name string) (*Options, error) {
	format, err := reporters.ParseFormat(cfg.Output.Format)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return &Options{term: term, name: name, config: cfg, format: format}, nil
}

// ToOptions returns the options of the run cfg compiled from f, printed on
// the console term as the command called name.
func (f *Flags) ToOptions(cfg *run.Config, term console, name string) (*Options, error) {
	o, err := newOptions(cfg, term, name)
	if err != nil {
		return nil, err
	}
	o.kube = kubeconfig{flags: f.conn.kube, getenv: f.conn.getenv, timeout: cfg.Timeout, inCluster: f.inCluster}
	o.fleet = f.fleet.target()
	o.gate = f.inCluster
	o.listChecks, o.debugRequests = f.selection.listChecks, f.output.debugRequests
	return o, nil
}

// Run runs the checks and writes the report (or the catalogue, with
// --list-checks). It returns nil for exit 0 and an *ExitError otherwise.
// ctx bounds the run (--timeout): Options.fleet's members have their own.
func (o *Options) Run(ctx context.Context) error {
	switch {
	case o.listChecks:
		return o.printChecks()
	case o.fleet != nil:
		return o.runFleet(ctx)
	}
	session := &run.Session{Config: o.hooked()}
	if o.gate != nil {
		o.gate.noteLeftOut(o.term.streams.ErrOut)
	}
	if o.config.Replay == nil {
		restCfg, contextName, err := o.kube.restConfig(ctx, o.term.host.IsInputTerminal(o.term.streams.In))
		if err != nil {
			return err
		}
		session.REST, session.Cluster = restCfg, checks.ClusterInfo{Server: restCfg.Host, Context: contextName}
	}
	report, verdict := session.Run(ctx)
	if o.debugRequests && session.Clients != nil {
		// Every HTTP request sent to the API server, and how many of those
		// fetched a further page of a paginated LIST (a number that grows
		// with the cluster, unlike the rest).
		fmt.Fprintf(o.term.streams.ErrOut, "api-requests: total=%d pages=%d\n", session.Clients.Requests.Load(), session.Clients.Pages.Load())
	}
	if report == nil {
		return exitFor(verdict)
	}
	o.renameInHints(report.Outcomes)
	if err := o.write(report); err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("writing report: %w", err)}
	}
	if o.gate != nil {
		if err := o.gate.writeTerminationLog(o.name, report, exitFor(verdict) != nil); err != nil {
			return &ExitError{Code: ExitFailed, Err: fmt.Errorf("--termination-log: %w", err)}
		}
	}
	if verdict.Brief != nil && (o.format == reporters.FormatTable || o.format == reporters.FormatWide) {
		// The table just showed the reason: the error line refers to it.
		verdict.Err = verdict.Brief
	}
	return exitFor(verdict)
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

// write prints the report in the run's format (-o github: its Markdown to
// $GITHUB_STEP_SUMMARY too).
func (o *Options) write(r *checks.Report) error {
	opts, closeSummary, err := o.term.withStepSummary(o.format, reporters.Options{Color: o.term.colorEnabled(o.config.Output.NoColor), Width: o.term.outputWidth(), Name: o.name})
	if err != nil {
		return err
	}
	rep, err := reporters.New(o.format, opts)
	if err == nil {
		err = rep.Report(o.term.streams.Out, r)
	}
	if cerr := closeSummary(); err == nil {
		err = cerr
	}
	return err
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
