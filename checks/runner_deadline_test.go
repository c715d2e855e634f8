package checks

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// TestRunDeadlineKeepsReason: when the run's deadline ends a check that
// honours its context, the report says what the check was waiting for (the
// list it was reading), not only that time ran out.
func TestRunDeadlineKeepsReason(t *testing.T) {
	env, _ := fakeEnv(t, "v1.30.0")
	waiting := stub("waiting", func(ctx context.Context, _ *Env) (Result, error) {
		<-ctx.Done()
		return Result{}, &cluster.ListError{Verb: "list", Resource: "nodes", Err: fmt.Errorf("Get \"https://api/api/v1/nodes?limit=500\": %w", ctx.Err())}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	got := Run(ctx, env, []Check{waiting}, RunOptions{})
	if got[0].Status != StatusError || !strings.Contains(got[0].Message, "timed out: list nodes") {
		t.Fatalf("check cut by the deadline = %s %q, want error 'timed out: list nodes'", got[0].Status, got[0].Message)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("runner took %s for a 100ms deadline", el)
	}
}
