package run

import (
	"context"
	"errors"
	"fmt"
)

// Interrupt is the cause with which the process cancels the run's context
// when the first SIGINT or SIGTERM arrives (context.WithCancelCause). The run
// then stops its requests and child processes, prints the report of what was
// checked so far and exits with Code (130 for SIGINT, 143 for SIGTERM, the
// shells' 128+signal), or 3 when the cluster was never reached.
type Interrupt struct {
	// Signal is the signal's name ("SIGINT", "SIGTERM").
	Signal string
	// Code is the exit code of an interrupted run that reached the cluster.
	Code int
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
