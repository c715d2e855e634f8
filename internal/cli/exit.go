package cli

import (
	"errors"
	"fmt"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

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
	return &ExitError{Code: checks.ExitUsage, Err: fmt.Errorf(format, args...)}
}

// ExitCode returns the process exit code for an error returned by Execute:
// 0 for nil, the code of an *ExitError, and 2 for anything else (cobra's own
// errors: unknown flag, unexpected argument).
func ExitCode(err error) int {
	if err == nil {
		return checks.ExitOK
	}
	if e := (*ExitError)(nil); errors.As(err, &e) {
		return e.Code
	}
	return checks.ExitUsage
}
