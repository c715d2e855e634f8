package cli

import (
	"fmt"
	"os"

	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// stepSummaryEnv names the file GitHub Actions shows as the job's summary
// (Markdown, appended to by each step).
const stepSummaryEnv = "GITHUB_STEP_SUMMARY"

// withStepSummary sets opts.StepSummary for -o github when
// $GITHUB_STEP_SUMMARY names a file: opened for appending (created when
// missing), as GitHub's own actions write it. The returned function closes
// it. A file that cannot be opened is an error: the job asked for a
// summary.
func (c console) withStepSummary(format reporters.Format, opts reporters.Options) (reporters.Options, func() error, error) {
	path := c.host.Getenv(stepSummaryEnv)
	if format != reporters.FormatGitHub || path == "" {
		return opts, func() error { return nil }, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return opts, nil, fmt.Errorf("%s: %w", stepSummaryEnv, err)
	}
	opts.StepSummary = f
	return opts, f.Close, nil
}
