package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// The exit table: the contract's exit codes (README "Exit codes"), the same
// in every output format, and the one place a run's verdict becomes a
// number. Nothing else in the plugin writes an exit number.
const (
	ExitOK          = 0 // no fail/error (warnings allowed unless --fail-on=warn)
	ExitFailed      = 1 // at least one check fail or error; --fix refused or failed; nothing verified; the bundle not written
	ExitUsage       = 2 // usage or input error; nothing checked (a fleet's cluster whose kubeconfig entry is unusable)
	ExitUnreachable = 3 // cluster unreachable or credentials rejected
)

// exitTable gives each kind of verdict its exit code and what the fleet's
// report calls it. An interrupted run exits with its signal's code.
var exitTable = map[run.Kind]struct {
	code    int
	outcome reporters.Outcome
}{
	run.OK:              {ExitOK, reporters.OutcomeOK},
	run.Failed:          {ExitFailed, reporters.OutcomeFailed},
	run.NothingVerified: {ExitFailed, reporters.OutcomeFailed},
	run.NotChecked:      {ExitUsage, reporters.OutcomeNotChecked},
	run.Unreachable:     {ExitUnreachable, reporters.OutcomeUnreachable},
	run.Interrupted:     {ExitFailed, reporters.OutcomeInterrupted},
}

// signalExit is the exit code of a run a signal interrupted after it reached
// the cluster: the shells' 128+signal.
var signalExit = map[string]int{"SIGINT": 130, "SIGTERM": 143}

// Interrupted is the cause main cancels the run's context with on the first
// SIGINT or SIGTERM (run.Interrupt); ExitCode of it is the signal's code.
type Interrupted = run.Interrupt

// exitCode is the exit code of v and what a fleet's report calls it.
func exitCode(v run.Verdict) (int, reporters.Outcome) {
	e, ok := exitTable[v.Kind]
	if !ok {
		return ExitFailed, reporters.OutcomeFailed
	}
	if v.Kind == run.Interrupted && v.Signal != nil {
		if code, ok := signalExit[v.Signal.Signal]; ok {
			e.code = code
		}
	}
	return e.code, e.outcome
}

// exitFor is the exit code of a run's verdict, with its one line (nil when
// the report says it all): OK 0; Failed and NothingVerified 1; NotChecked
// 2; Unreachable 3; Interrupted the signal's code (130 for SIGINT, 143 for
// SIGTERM).
func exitFor(v run.Verdict) error {
	code, _ := exitCode(v)
	if code == ExitOK {
		return nil
	}
	return &ExitError{Code: code, Err: v.Err}
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
// 0 for nil, the code of an *ExitError, the signal's code of an
// interruption (main's second signal exits at once with it), and 2 for
// anything else (cobra's own errors: unknown flag, unexpected argument).
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	if e := (*ExitError)(nil); errors.As(err, &e) {
		return e.Code
	}
	if i := (*run.Interrupt)(nil); errors.As(err, &i) {
		code, _ := exitCode(run.Verdict{Kind: run.Interrupted, Signal: i})
		return code
	}
	return ExitUsage
}

// ErrorText is the "Error: " line main prints for msg on stderr, ending in
// a newline: word-wrapped to width columns (continuations indented by two)
// on a terminal, one line when width is 0.
func ErrorText(msg string, width int) string {
	return strings.Join(reporters.Wrap("Error: "+msg, width, 0, 2), "\n") + "\n"
}
