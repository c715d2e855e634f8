package run

import (
	"context"
	"errors"
	"fmt"
)

// Interrupt is the cause with which the process cancels the run's context
// when the first SIGINT or SIGTERM arrives (context.WithCancelCause). The run
// then stops its requests and child processes, and its verdict is
// Interrupted (Unreachable when the cluster was never reached); the command
// maps the signal to its exit code.
type Interrupt struct {
	// Signal is the signal's name ("SIGINT", "SIGTERM").
	Signal string
}

func (i *Interrupt) Error() string { return fmt.Sprintf("interrupted by %s", i.Signal) }

// Interruption returns the Interrupt cause of ctx, or nil.
func Interruption(ctx context.Context) *Interrupt {
	var i *Interrupt
	if errors.As(context.Cause(ctx), &i) {
		return i
	}
	return nil
}
