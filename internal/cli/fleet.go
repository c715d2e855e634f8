package cli

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// runFleet runs the checks on every context of the fleet, --parallel at a
// time, each under its own --timeout, and writes one report of them all.
// The exit code is the highest of the clusters' (reporters.FleetExit). ctx
// bounds reading the kubeconfig by --timeout; the sessions have their own.
func (o *Options) runFleet(ctx context.Context) error {
	readCtx, cancel := context.WithTimeout(ctx, o.config.Timeout)
	defer cancel()
	names, err := o.kube.contexts(readCtx, o.fleet)
	if err != nil {
		return err
	}
	var rec *fleetRecording
	var wrap func(string, *rest.Config) *rest.Config
	if o.bundle != "" {
		if rec, err = newFleetRecording(o, len(names)); err != nil {
			return &ExitError{Code: ExitFailed, Err: err}
		}
		defer rec.close()
		wrap = rec.wrap
	}
	members, err := o.kube.members(readCtx, names, wrap)
	if err != nil {
		return err
	}
	fl := &reporters.Fleet{Mode: o.config.Mode, Entries: make([]reporters.FleetEntry, len(members))}
	watch := newFleetWatch(o.term, len(members), o.debugRequests)
	for i := range members {
		members[i].Connect = watch.connect(members[i].Context, members[i].Connect)
	}
	var interrupted *run.Interrupt
	// No per-check progress or --fix hooks: many sessions run at once.
	f := &run.Fleet{Config: o.config, Members: members, Parallel: o.fleet.parallel, Timeout: o.config.Timeout,
		Done: func(e run.Entry) {
			if rec != nil {
				rec.done(ctx, e)
			}
			// Only the report stays: the session's clients and snapshot
			// are gone once it ends.
			watch.done(e.Context)
			var signal *run.Interrupt
			fl.Entries[e.Index], signal = o.fleetEntry(e)
			if signal != nil {
				interrupted = signal
			}
		}}
	if rec != nil {
		f.Recorder = rec.recorder
	}
	f.Run(ctx)
	watch.erase() // before the report
	var bundleErr error
	if rec != nil {
		bundleErr = rec.finish(names)
	}
	return o.writeFleet(fl, interrupted, bundleErr)
}

// fleetWatch shows a fleet's sessions as they run: on a terminal, one
// progress line of the clusters under way ("[2/5] checking kind-dev,
// prod-us"); with --debug-request-count, each member's API requests when its
// session ends.
type fleetWatch struct {
	term     console
	progress *progress // nil off a terminal
	count    bool
	mu       sync.Mutex
	clients  map[string]*cluster.Clients // of the sessions under way, counted
}

func newFleetWatch(term console, members int, count bool) *fleetWatch {
	w := &fleetWatch{term: term, count: count, clients: map[string]*cluster.Clients{}}
	if pw := term.progressWidth(); pw > 0 {
		w.progress = newProgress(term.streams.ErrOut, members, pw)
	}
	return w
}

// connect wraps a member's Connect: its session starts on the progress line,
// and its clients are counted.
func (w *fleetWatch) connect(name string, connect func(context.Context) (*cluster.Clients, checks.ClusterInfo, error)) func(context.Context) (*cluster.Clients, checks.ClusterInfo, error) {
	return func(ctx context.Context) (*cluster.Clients, checks.ClusterInfo, error) {
		if w.progress != nil {
			w.progress.start(checks.Meta{ID: name})
		}
		c, info, err := connect(ctx)
		if w.count && c != nil {
			w.mu.Lock()
			w.clients[name] = c
			w.mu.Unlock()
		}
		return c, info, err
	}
}

// done ends a member's session on the progress line and prints its count.
func (w *fleetWatch) done(name string) {
	if w.progress != nil {
		w.progress.finish(checks.Outcome{Meta: checks.Meta{ID: name}})
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if c := w.clients[name]; c != nil {
		delete(w.clients, name)
		fmt.Fprintf(w.term.streams.ErrOut, "api-requests: context=%s total=%d pages=%d\n", name, c.Requests.Load(), c.Pages.Load())
	}
}

// erase erases the progress line.
func (w *fleetWatch) erase() {
	if w.progress != nil {
		w.progress.Done()
	}
}

// fleetEntry is the report's entry of a member's session (live or
// replayed), and the signal that interrupted it (nil when none).
func (o *Options) fleetEntry(e run.Entry) (reporters.FleetEntry, *run.Interrupt) {
	fe := reporters.FleetEntry{Context: e.Context, Report: e.Report}
	if e.Report == nil {
		fe.Exit = ExitUsage
		if e.Err != nil {
			fe.Err = e.Err.Error()
		}
		return fe, nil
	}
	o.renameInHints(e.Report.Outcomes)
	fe.Exit = ExitCode(exitFor(e.Verdict))
	return fe, e.Verdict.Signal // interrupted, before or after contact
}

// writeFleet writes the fleet's report and returns its exit: the highest
// of the clusters' (reporters.FleetExit), at least 1 when the fleet's
// bundle could not be written whole (bundleErr, the error line then).
func (o *Options) writeFleet(fl *reporters.Fleet, interrupted *run.Interrupt, bundleErr error) error {
	opts := reporters.Options{Color: o.term.colorEnabled(o.config.Output.NoColor), Width: o.term.fleetWidth(), Name: o.name}
	if err := reporters.WriteFleet(o.term.streams.Out, o.format, opts, fl); err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("writing report: %w", err)}
	}
	codes := make([]int, len(fl.Entries))
	for i, e := range fl.Entries {
		codes[i] = e.Exit
	}
	code := reporters.FleetExit(codes)
	switch {
	case interrupted != nil:
		return &ExitError{Code: code, Err: fmt.Errorf("%w: the report is partial", interrupted)}
	case bundleErr != nil:
		// The report is whole; the recording of it is not.
		return &ExitError{Code: max(code, ExitFailed), Err: bundleErr}
	case code == ExitOK:
		return nil
	}
	return &ExitError{Code: code}
}
