package cli

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// runFleet runs the checks on every context of the fleet, --parallel at a
// time, each under its own --timeout, and writes one report of them all
// (with --bundle, run.Fleet records the fleet archive). The exit code is
// the fleet's verdict's (run.FleetVerdict). ctx bounds reading the
// kubeconfig by --timeout; the sessions have their own.
func (o *Options) runFleet(ctx context.Context) error {
	readCtx, cancel := context.WithTimeout(ctx, o.config.Timeout)
	defer cancel()
	names, err := o.kube.contexts(readCtx, o.fleet)
	if err != nil {
		return err
	}
	members, err := o.kube.members(readCtx, names)
	if err != nil {
		return err
	}
	fl := &reporters.Fleet{Mode: o.config.Mode, Entries: make([]reporters.FleetEntry, len(members))}
	watch := newFleetWatch(o.term, len(members), o.debugRequests)
	for i := range members {
		members[i].Connect = watch.connect(members[i].Context, members[i].Connect)
	}
	// No per-check progress or --fix hooks: many sessions run at once.
	f := &run.Fleet{Config: o.config, Members: members, Parallel: o.fleet.parallel,
		Done: func(e run.Entry) {
			// Only the report stays: the session's clients and snapshot
			// are gone once it ends.
			watch.done(e)
			fl.Entries[e.Index] = o.fleetEntry(e)
		}}
	v, err := f.Run(ctx)
	watch.erase() // before the report
	if err != nil {
		return &ExitError{Code: ExitFailed, Err: err}
	}
	return o.writeFleet(fl, v)
}

// fleetWatch shows a fleet's sessions as they run: on a terminal, one
// progress line of the clusters under way ("[2/5] checking kind-dev,
// prod-us"); with --debug-request-count, each member's API requests when its
// session ends.
type fleetWatch struct {
	term     console
	progress *progress // nil off a terminal
	count    bool
}

func newFleetWatch(term console, members int, count bool) *fleetWatch {
	w := &fleetWatch{term: term, count: count}
	if pw := term.progressWidth(); pw > 0 {
		w.progress = newProgress(term.streams.ErrOut, members, pw)
	}
	return w
}

// connect wraps a member's Connect: its session starts on the progress line.
func (w *fleetWatch) connect(name string, connect func(context.Context) (*rest.Config, checks.ClusterInfo, error)) func(context.Context) (*rest.Config, checks.ClusterInfo, error) {
	return func(ctx context.Context) (*rest.Config, checks.ClusterInfo, error) {
		if w.progress != nil {
			w.progress.start(checks.Meta{ID: name})
		}
		return connect(ctx)
	}
}

// done ends a member's session on the progress line and prints its count
// of API requests.
func (w *fleetWatch) done(e run.Entry) {
	if w.progress != nil {
		w.progress.finish(checks.Outcome{Meta: checks.Meta{ID: e.Context}})
	}
	if w.count && e.Report != nil {
		fmt.Fprintf(w.term.streams.ErrOut, "api-requests: context=%s total=%d pages=%d\n", e.Context, e.Requests, e.Pages)
	}
}

// erase erases the progress line.
func (w *fleetWatch) erase() {
	if w.progress != nil {
		w.progress.Done()
	}
}

// fleetEntry is the report's entry of a member's session (live or
// replayed): its exit code and what it amounts to (the exit table), and its
// report, or the line of why it has none.
func (o *Options) fleetEntry(e run.Entry) reporters.FleetEntry {
	fe := reporters.FleetEntry{Context: e.Context, Report: e.Report}
	fe.Exit, fe.Outcome = exitCode(e.Verdict)
	if e.Report == nil {
		if e.Verdict.Err != nil {
			fe.Err = e.Verdict.Err.Error()
		}
		return fe
	}
	o.renameInHints(e.Report.Outcomes)
	return fe
}

// writeFleet writes the fleet's report and returns the exit of its
// verdict v (run.FleetVerdict).
func (o *Options) writeFleet(fl *reporters.Fleet, v run.Verdict) error {
	opts, closeSummary, err := o.term.withStepSummary(o.format, reporters.Options{Color: o.term.colorEnabled(o.config.Output.NoColor), Width: o.term.fleetWidth(), Name: o.name})
	if err == nil {
		err = reporters.WriteFleet(o.term.streams.Out, o.format, opts, fl)
		if cerr := closeSummary(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("writing report: %w", err)}
	}
	return exitFor(v)
}
