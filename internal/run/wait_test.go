package run

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

func meta(id string, requires ...string) checks.Check {
	return checks.Check{Meta: checks.Meta{ID: id, Requires: requires}}
}

// scripted returns a runFunc that reports each check's next scripted status
// (the last one repeats) and records which checks each round ran.
func scripted(script map[string][]checks.Status) (runFunc, *[][]string) {
	var mu sync.Mutex
	var rounds [][]string
	n := map[string]int{}
	return func(_ context.Context, cs []checks.Check) []checks.Outcome {
		mu.Lock()
		defer mu.Unlock()
		var ran []string
		out := make([]checks.Outcome, len(cs))
		for i, c := range cs {
			s := script[c.ID]
			st := s[min(n[c.ID], len(s)-1)]
			n[c.ID]++
			out[i] = checks.Outcome{Meta: c.Meta, Result: checks.Result{Status: st, Message: string(st)}}
			ran = append(ran, c.ID)
		}
		rounds = append(rounds, ran)
		return out
	}, &rounds
}

func TestWaiterRerunsFailingUntilPass(t *testing.T) {
	selected := []checks.Check{meta("a"), meta("b"), meta("c", "b")}
	run, rounds := scripted(map[string][]checks.Status{
		"a": {checks.StatusPass},
		"b": {checks.StatusFail, checks.StatusFail, checks.StatusPass},
		"c": {checks.StatusSkip, checks.StatusSkip, checks.StatusPass},
	})
	var progress []string
	w := waiter{wait: time.Minute, interval: time.Millisecond, now: time.Now,
		progress: func(ids []string, _ time.Duration) { progress = append(progress, strings.Join(ids, ",")) }}
	out := w.run(context.Background(), selected, run)
	for i, want := range []checks.Status{checks.StatusPass, checks.StatusPass, checks.StatusPass} {
		if out[i].Status != want || out[i].ID != selected[i].ID {
			t.Fatalf("outcome %d = %s %s, want %s", i, out[i].ID, out[i].Status, want)
		}
	}
	got := make([]string, len(*rounds))
	for i, r := range *rounds {
		got[i] = strings.Join(r, ",")
	}
	if strings.Join(got, " | ") != "a,b,c | b,c | b,c" {
		t.Fatalf("rounds = %v", got)
	}
	if strings.Join(progress, " | ") != "b,c | b,c | " {
		t.Fatalf("progress = %q", progress)
	}
}

func TestWaiterStopsAtDeadline(t *testing.T) {
	run, rounds := scripted(map[string][]checks.Status{"a": {checks.StatusFail}})
	start := time.Now()
	w := waiter{wait: 50 * time.Millisecond, interval: 10 * time.Millisecond, now: time.Now}
	out := w.run(context.Background(), []checks.Check{meta("a")}, run)
	if out[0].Status != checks.StatusFail {
		t.Fatalf("status = %s", out[0].Status)
	}
	if el := time.Since(start); el < 50*time.Millisecond || el > 2*time.Second {
		t.Fatalf("waited %s for a 50ms deadline", el)
	}
	if len(*rounds) < 3 {
		t.Fatalf("only %d rounds in 50ms at a 10ms interval", len(*rounds))
	}
}

func TestWaiterNoWaitOrUnreachable(t *testing.T) {
	run, rounds := scripted(map[string][]checks.Status{"a": {checks.StatusFail}})
	waiter{now: time.Now}.run(context.Background(), []checks.Check{meta("a")}, run)
	if len(*rounds) != 1 {
		t.Fatalf("--wait 0 ran %d rounds", len(*rounds))
	}
	fatal := meta("cluster-reachable")
	fatal.Fatal = true
	run, rounds = scripted(map[string][]checks.Status{"cluster-reachable": {checks.StatusFail}, "a": {checks.StatusSkip}})
	waiter{wait: time.Minute, interval: time.Millisecond, now: time.Now}.run(context.Background(), []checks.Check{fatal, meta("a")}, run)
	if len(*rounds) != 1 {
		t.Fatalf("unreachable cluster: %d rounds", len(*rounds))
	}
}
