package run

import (
	"context"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// WaitInterval is how long --wait pauses between rounds of the failing
// checks ("every few seconds", like `linkerd check --wait`, which retries
// every 5 s: pkg/healthcheck/healthcheck.go of
// https://github.com/linkerd/linkerd2).
const WaitInterval = 3 * time.Second

// runFunc runs a set of checks against a fresh view of the cluster.
type runFunc func(ctx context.Context, cs []checks.Check) []checks.Outcome

// waiter re-runs failing checks until they pass or a deadline passes.
type waiter struct {
	wait     time.Duration
	interval time.Duration
	now      func() time.Time
	// progress, when set, is told which checks are still waiting and how
	// long is left; it is called with nil once waiting ends.
	progress func(waiting []string, left time.Duration)
}

// run runs selected once and, while some check fails or errors and the
// deadline (now + wait) has not passed, pauses w.interval and re-runs those
// checks, plus the checks that were skipped because one of them had not
// passed, each round with a fresh snapshot (run). The result is the last
// state of every check, in the order of selected. Nothing is re-run when a
// fatal check failed (the cluster is unreachable) or wait is 0.
func (w waiter) run(ctx context.Context, selected []checks.Check, run runFunc) []checks.Outcome {
	out := run(ctx, selected)
	if w.wait <= 0 {
		return out
	}
	deadline := w.now().Add(w.wait)
	defer func() {
		if w.progress != nil {
			w.progress(nil, 0)
		}
	}()
	for {
		idx := retryable(selected, out)
		if len(idx) == 0 {
			return out
		}
		left := deadline.Sub(w.now())
		if left <= 0 {
			return out
		}
		if w.progress != nil {
			ids := make([]string, len(idx))
			for i, j := range idx {
				ids[i] = selected[j].ID
			}
			w.progress(ids, left)
		}
		t := time.NewTimer(min(w.interval, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return out
		case <-t.C:
		}
		subset := make([]checks.Check, len(idx))
		for i, j := range idx {
			subset[i] = selected[j]
		}
		for i, o := range run(ctx, subset) {
			out[idx[i]] = o
		}
	}
}

// retryable returns the indices of the checks to run again: those that
// failed or errored, and those skipped because a prerequisite among them did
// not pass. It returns nil when a fatal check did not pass.
func retryable(selected []checks.Check, out []checks.Outcome) []int {
	failing := map[string]bool{}
	for i, o := range out {
		if selected[i].Fatal && o.Status != checks.StatusPass {
			return nil
		}
		if o.Status.Failed() {
			failing[selected[i].ID] = true
		}
	}
	var idx []int
	for i, c := range selected {
		if failing[c.ID] {
			idx = append(idx, i)
			continue
		}
		if out[i].Status != checks.StatusSkip {
			continue
		}
		for _, r := range c.Requires {
			if failing[r] {
				idx = append(idx, i)
				break
			}
		}
	}
	return idx
}
