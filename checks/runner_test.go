package checks

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

func stub(id string, f Func, requires ...string) Check {
	return Check{Meta: Meta{ID: id, Category: CategoryCluster, Modes: ModePre, Title: id, Severity: SeverityFail, Impact: ImpactRuntimeBreaks, Requires: requires}, Run: f}
}

func returning(r Result, err error) Func {
	return func(context.Context, *Env) (Result, error) { return r, err }
}

func TestRunStatuses(t *testing.T) {
	forbidden := &cluster.ListError{Verb: "list", Resource: "nodes", Err: apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", errors.New("denied"))}
	tests := []struct {
		name    string
		check   Check
		want    Status
		wantMsg string
	}{
		{"pass", stub("a", returning(Pass("ok"), nil)), StatusPass, "ok"},
		{"forbidden list becomes skip", stub("a", returning(Result{}, forbidden)), StatusSkip, "no permission to list nodes"},
		{"a check's own skip has no cause", stub("a", returning(Skip("no permission to say"), nil)), StatusSkip, "no permission to say"},
		{"an answer a replay does not hold becomes error naming the request", stub("a", returning(Result{}, &cluster.ListError{Verb: "list", Resource: "nodes",
			Err: &url.Error{Op: "Get", URL: "https://x/api/v1/nodes", Err: &cluster.NotRecordedError{Request: "GET /api/v1/nodes"}}})),
			StatusError, "GET /api/v1/nodes: not recorded in the bundle"},
		{"other error becomes error", stub("a", returning(Result{}, errors.New("boom\nstack"))), StatusError, "boom"},
		{"panic becomes error", stub("a", func(context.Context, *Env) (Result, error) { panic("nil map") }), StatusError, "internal error in check a: nil map"},
		{"empty result becomes error", stub("a", returning(Result{}, nil)), StatusError, "no status"},
		{"warn severity caps fail", func() Check {
			c := stub("a", returning(Fail("egress blocked"), nil))
			c.Severity = SeverityWarn
			return c
		}(), StatusWarn, "egress blocked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _ := fakeEnv(t, "v1.30.0")
			got := Run(t.Context(), env, []Check{tt.check}, RunOptions{})
			if got[0].Status != tt.want || !strings.Contains(got[0].Message, tt.wantMsg) {
				t.Fatalf("Run(%s) = %s %q, want %s containing %q", tt.name, got[0].Status, got[0].Message, tt.want, tt.wantMsg)
			}
			wantCause := SkipCause("")
			if strings.HasPrefix(tt.name, "forbidden") {
				wantCause = SkipForbidden
			}
			if got[0].Cause != wantCause {
				t.Fatalf("Run(%s): cause %q, want %q", tt.name, got[0].Cause, wantCause)
			}
			if strings.Contains(got[0].Message, "\n") {
				t.Fatalf("message has a newline: %q", got[0].Message)
			}
		})
	}
}

func TestRunTimeout(t *testing.T) {
	env, _ := fakeEnv(t, "v1.30.0")
	hang := stub("hang", func(ctx context.Context, _ *Env) (Result, error) {
		<-make(chan struct{}) // ignores its context on purpose
		return Pass(""), nil
	})
	start := time.Now()
	got := Run(t.Context(), env, []Check{hang}, RunOptions{CheckTimeout: 100 * time.Millisecond})
	if got[0].Status != StatusError || !strings.Contains(got[0].Message, "did not finish") {
		t.Fatalf("hanging check = %s %q, want error 'did not finish'", got[0].Status, got[0].Message)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("runner waited %s for a check with a 100ms timeout", el)
	}
}

func TestRunPrerequisites(t *testing.T) {
	env, _ := fakeEnv(t, "v1.30.0")
	var ranDependant atomic.Bool
	checks := []Check{
		stub("base", returning(Fail("no"), nil)),
		stub("dependant", func(context.Context, *Env) (Result, error) { ranDependant.Store(true); return Pass(""), nil }, "base"),
		stub("warned", returning(Warn("meh"), nil)),
		stub("after-warn", returning(Pass("ran"), nil), "warned"),
	}
	got := Run(t.Context(), env, checks, RunOptions{})
	if got[1].Status != StatusSkip || got[1].Cause != SkipPrerequisite || !strings.Contains(got[1].Message, "requires base, which ended fail") || ranDependant.Load() {
		t.Fatalf("dependant of a failed check = %s %q (ran=%v), want skip without running", got[1].Status, got[1].Message, ranDependant.Load())
	}
	if got[3].Status != StatusPass {
		t.Fatalf("dependant of a warned check = %s, want pass", got[3].Status)
	}
	for i, c := range checks {
		if got[i].ID != c.ID {
			t.Fatalf("outcome %d is %s, want %s (catalogue order)", i, got[i].ID, c.ID)
		}
	}
}

func TestRunFatalStopsOthers(t *testing.T) {
	env, _ := fakeEnv(t, "v1.30.0")
	gate := stub("gate", returning(Fail("cannot reach"), nil))
	gate.Fatal = true
	offline := stub("offline", returning(Pass("local"), nil))
	offline.Offline = true
	var ran atomic.Bool
	online := stub("online", func(context.Context, *Env) (Result, error) { ran.Store(true); return Pass(""), nil })
	r := &Report{Outcomes: Run(t.Context(), env, []Check{gate, online, offline}, RunOptions{})}
	if r.Outcomes[1].Status != StatusSkip || ran.Load() {
		t.Fatalf("online check after fatal failure = %s (ran=%v), want skip", r.Outcomes[1].Status, ran.Load())
	}
	if r.Outcomes[2].Status != StatusPass {
		t.Fatalf("offline check after fatal failure = %s, want pass", r.Outcomes[2].Status)
	}
	if !r.Unreachable() {
		t.Fatal("Unreachable() = false after the fatal check failed")
	}
	if c := r.Outcomes[1].Cause; c != SkipUnreachable {
		t.Fatalf("online check skipped with cause %q, want %q", c, SkipUnreachable)
	}
	// The reason is in the fatal check's outcome only.
	if m := r.Outcomes[1].Message; m != "needs gate" {
		t.Fatalf("online check skipped with %q, want %q", m, "needs gate")
	}
}

func TestRunConcurrency(t *testing.T) {
	env, _ := fakeEnv(t, "v1.30.0")
	var running, peak atomic.Int32
	slow := func(context.Context, *Env) (Result, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
		running.Add(-1)
		return Pass(""), nil
	}
	var list []Check
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		list = append(list, stub(id, slow))
	}
	start := time.Now()
	Run(t.Context(), env, list, RunOptions{Concurrency: 3})
	if p := peak.Load(); p != 3 {
		t.Fatalf("peak concurrency = %d, want 3", p)
	}
	if el := time.Since(start); el > 250*time.Millisecond {
		t.Fatalf("6 checks of 50ms with concurrency 3 took %s", el)
	}
}
