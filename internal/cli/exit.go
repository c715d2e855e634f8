package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// Exit codes of the contract (README "Exit codes"), the same in every output
// format.
const (
	ExitOK          = 0 // no fail/error (warnings allowed unless --fail-on=warn)
	ExitFailed      = 1 // at least one check fail or error; --fix refused or failed; nothing verified
	ExitUsage       = 2 // usage or input error; nothing checked
	ExitUnreachable = 3 // cluster unreachable or credentials rejected
)

// Interrupted is the cause main cancels the run's context with on the first
// SIGINT or SIGTERM (run.Interrupt).
type Interrupted = run.Interrupt

// exitFor is the exit code of a run's verdict, with its one line (nil when
// the report says it all): OK 0; Failed and NothingVerified 1; Unreachable
// 3; Interrupted the signal's code (130 for SIGINT, 143 for SIGTERM).
func exitFor(v run.Verdict) error {
	switch v.Kind {
	case run.OK:
		return nil
	case run.Unreachable:
		return &ExitError{Code: ExitUnreachable, Err: v.Err}
	case run.Interrupted:
		return &ExitError{Code: v.Signal.Code, Err: v.Err}
	}
	return &ExitError{Code: ExitFailed, Err: v.Err}
}

// ExitError carries the process exit code decided by a run. Err, when set, is
// printed on stderr as one line; a nil Err means the report already said it.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageError is exit 2: bad flag, unknown check ID, unreadable input; nothing checked.
func usageError(format string, args ...any) *ExitError {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// ExitCode returns the process exit code for an error returned by Execute:
// 0 for nil, the code of an *ExitError, and 2 for anything else (cobra's own
// errors: unknown flag, unexpected argument).
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	if e := (*ExitError)(nil); errors.As(err, &e) {
		return e.Code
	}
	return ExitUsage
}

// ErrorText is the "Error: " line main prints for msg on stderr, ending in
// a newline: word-wrapped to width columns (continuations indented by two)
// on a terminal, one line when width is 0.
func ErrorText(msg string, width int) string {
	return strings.Join(reporters.Wrap("Error: "+msg, width, 0, 2), "\n") + "\n"
}
