package checks

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// RunOptions tune the runner.
type RunOptions struct {
	// Concurrency bounds how many checks run at once (default 8).
	Concurrency int
	// CheckTimeout bounds each check (default 60s; the plugin passes its
	// --timeout); the run's context bounds all.
	CheckTimeout time.Duration
	// OnStart and OnDone, when set, are called as each check starts and ends
	// (from the check's goroutine; they must be safe for concurrent use).
	OnStart func(Meta)
	OnDone  func(Outcome)
}

// Run executes checks and returns their outcomes in the order given.
//
// A check whose Applies (or run modes) exclude the inputs is skipped first,
// with Applies.Reason, and does not run. Fatal checks run first, one by one; if one does not pass, every other check
// is skipped ("cluster not reachable") except Offline ones. The others run
// concurrently; a check waits for its selected prerequisites and is skipped
// when one of them did not pass or warn. A check that panics or overruns its
// timeout ends as `error`; a Forbidden API error makes it `skip` with the
// reason. In a replay, a check that needed an answer the bundle does not
// hold (a *cluster.NotRecordedError) ends as `error` naming the request and
// "not recorded in the bundle": a replay never judges a guess.
func Run(ctx context.Context, env *Env, checks []Check, opts RunOptions) []Outcome {
	env.withDefaults()
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	if opts.CheckTimeout <= 0 {
		opts.CheckTimeout = 60 * time.Second
	}
	r := newRunState(env, checks, opts)
	r.runFatal(ctx)
	var wg sync.WaitGroup
	for i, c := range checks {
		if c.Fatal {
			close(r.done[i])
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(r.done[i])
			r.runOther(ctx, i, c)
		}()
	}
	wg.Wait()
	return r.out
}

// runState is one Run's shared state: the checks and their outcomes, each
// check's index by ID and its done channel (closed once its outcome is
// set), why each does not apply ("" when it does), the first fatal check
// that did not pass ("" when none), and the bound on checks running at
// once.
type runState struct {
	env           *Env
	opts          RunOptions
	checks        []Check
	out           []Outcome
	index         map[string]int
	done          []chan struct{}
	notApplicable []string
	fatal         string
	sem           chan struct{}
}

func newRunState(env *Env, checks []Check, opts RunOptions) *runState {
	r := &runState{env: env, opts: opts, checks: checks, out: make([]Outcome, len(checks)), index: make(map[string]int, len(checks)),
		done: make([]chan struct{}, len(checks)), notApplicable: make([]string, len(checks)), sem: make(chan struct{}, opts.Concurrency)}
	for i, c := range checks {
		r.index[c.ID] = i
		r.notApplicable[i] = c.Applies.Reason(c.Modes, env.Mode, env.Inputs)
		r.done[i] = make(chan struct{})
	}
	return r
}

// runFatal runs the fatal checks first, one after another, and keeps the
// first that does not pass.
func (r *runState) runFatal(ctx context.Context) {
	for i, c := range r.checks {
		if !c.Fatal {
			continue
		}
		if r.notApplicable[i] != "" {
			r.settle(i, skipped(c, SkipNotApplicable, r.notApplicable[i]))
			continue
		}
		r.out[i] = runOne(ctx, r.env, c, r.opts)
		if r.out[i].Status != StatusPass && r.fatal == "" {
			r.fatal = c.ID
		}
	}
}

// runOther runs check i, which is not fatal: skipped when it does not
// apply, when a fatal check failed (unless it is offline) or when a check
// it requires did not end pass or warn (it waits for them); else run
// when a slot is free, or ended "not run" when ctx is done first.
func (r *runState) runOther(ctx context.Context, i int, c Check) {
	if r.notApplicable[i] != "" {
		r.settle(i, skipped(c, SkipNotApplicable, r.notApplicable[i]))
		return
	}
	if r.fatal != "" && !c.Offline {
		// The reason is said once, in the fatal check's own outcome.
		r.settle(i, skipped(c, SkipUnreachable, "needs "+r.fatal))
		return
	}
	for _, req := range c.Requires {
		j, ok := r.index[req]
		if !ok {
			continue
		}
		<-r.done[j]
		if st := r.out[j].Status; st != StatusPass && st != StatusWarn {
			r.settle(i, skipped(c, SkipPrerequisite, fmt.Sprintf("requires %s, which ended %s", req, st)))
			return
		}
	}
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		r.settle(i, Outcome{Meta: c.Meta, Result: Result{Status: StatusError, Message: "not run: " + ctx.Err().Error()}})
		return
	}
	defer func() { <-r.sem }()
	r.out[i] = runOne(ctx, r.env, c, r.opts)
}

// settle sets the outcome of check i that was not run, and tells
// opts.OnDone.
func (r *runState) settle(i int, o Outcome) {
	r.out[i] = o
	notify(r.opts, o)
}

func notify(opts RunOptions, o Outcome) {
	if opts.OnDone != nil {
		opts.OnDone(o)
	}
}

func skipped(c Check, cause SkipCause, reason string) Outcome {
	return Outcome{Meta: c.Meta, Result: Result{Status: StatusSkip, Message: reason, Cause: cause}}
}

// ctxGrace is how long a check whose context ended may take to return its
// own error before the runner gives up on it.
const ctxGrace = 200 * time.Millisecond

// runOne runs one check with its timeout, recovering from panics.
func runOne(ctx context.Context, env *Env, c Check, opts RunOptions) (o Outcome) {
	if opts.OnStart != nil {
		opts.OnStart(c.Meta)
	}
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, opts.CheckTimeout)
	defer cancel()

	type ret struct {
		r   Result
		err error
	}
	ch := make(chan ret, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- ret{err: &panicError{value: p, stack: string(debug.Stack())}}
			}
		}()
		r, err := c.Run(cctx, env)
		ch <- ret{r, err}
	}()

	var r ret
	select {
	case r = <-ch:
	case <-cctx.Done():
		// A check that honours its context returns at once with what it was
		// waiting for ("list nodes: ... context deadline exceeded"): give it
		// a moment, so that the report says why.
		select {
		case r = <-ch:
		case <-time.After(ctxGrace):
			// The check ignored its context; report and move on (its
			// goroutine finishes on its own, its result is dropped).
			r = ret{err: fmt.Errorf("check did not finish: %w", cctx.Err())}
		}
	}
	o = Outcome{Meta: c.Meta, Duration: time.Since(start)}
	o.Result = resolve(c.Meta, r.r, r.err)
	if o.Effect.known() {
		o.Meta.Impact = o.Effect
	}
	o.Effect = ""
	notify(opts, o)
	return o
}

// resolve turns a check's return into its reported result.
func resolve(m Meta, r Result, err error) Result {
	if err != nil {
		if nr, ok := cluster.AsNotRecorded(err); ok {
			return Result{Status: StatusError, Message: nr.Error()}
		}
		var le *cluster.ListError
		if errors.As(err, &le) && le.Forbidden() {
			return Result{Status: StatusSkip, Message: le.Reason(), Cause: SkipForbidden}
		}
		if cluster.IsForbidden(err) {
			return Result{Status: StatusSkip, Message: "no permission: " + firstLine(err.Error()), Cause: SkipForbidden}
		}
		var pe *panicError
		if errors.As(err, &pe) {
			return Result{Status: StatusError, Message: fmt.Sprintf("internal error in check %s: %v (please report this)", m.ID, pe.value)}
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return Result{Status: StatusError, Message: "timed out: " + firstLine(err.Error())}
		}
		return Result{Status: StatusError, Message: firstLine(err.Error())}
	}
	if r.Status == "" {
		return Result{Status: StatusError, Message: fmt.Sprintf("internal error in check %s: no status", m.ID)}
	}
	if r.Status == StatusFail && m.Severity == SeverityWarn {
		r.Status = StatusWarn
	}
	return r
}

type panicError struct {
	value any
	stack string
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v\n%s", p.value, p.stack) }

// unanswered reports whether err is a replay's missing answer (a
// *cluster.NotRecordedError): the check then returns it, and the runner
// reports an error naming the request, rather than judging no answer as a
// network failure.
func unanswered(err error) bool {
	_, ok := cluster.AsNotRecorded(err)
	return ok
}
