package reporters

import (
	"fmt"
	"io"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// Format is an output format (-o).
type Format string

// Formats.
const (
	FormatTable Format = "table"
	// FormatWide is the full table on a terminal too: one unwrapped row per
	// check (what the table is when piped).
	FormatWide  Format = "wide"
	FormatJSON  Format = "json"
	FormatYAML  Format = "yaml"
	FormatJUnit Format = "junit"
	// FormatGitHub is GitHub Actions workflow commands (annotations), and
	// the Markdown report in the job summary (Options.StepSummary).
	FormatGitHub Format = "github"
	// FormatMarkdown is a pull-request comment body.
	FormatMarkdown Format = "markdown"
	// FormatSARIF is SARIF 2.1.0 for code scanning: the anchored findings.
	FormatSARIF Format = "sarif"
	// FormatCodeQuality is a GitLab Code Quality report: the anchored
	// findings.
	FormatCodeQuality Format = "gitlab-codequality"
)

// Formats lists the supported formats in help order.
var Formats = []Format{FormatTable, FormatWide, FormatJSON, FormatYAML, FormatJUnit,
	FormatGitHub, FormatMarkdown, FormatSARIF, FormatCodeQuality}

// ParseFormat validates an -o value.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown output format %q (want one of %s)", s, strings.Join(names, ", "))
}

// Options tune a reporter.
type Options struct {
	// Color enables ANSI colours (table only). The caller decides: a terminal
	// and NO_COLOR unset.
	Color bool
	// Verbose shows passing checks' messages in full and durations (table).
	Verbose bool
	// Width is the terminal's width in columns (table): the stacked layout
	// whose lines never exceed it. 0 (a pipe, -o wide) is the full table,
	// one unwrapped line per row.
	Width int
	// Name is the command as the user typed it, for the table header and the
	// JUnit report name: "kubectl gitops-preflight" (the default) or
	// "helm gitops-preflight" under Helm.
	Name string
	// StepSummary receives the Markdown report of -o github: the file
	// $GITHUB_STEP_SUMMARY names, opened for appending by the caller (nil:
	// none).
	StepSummary io.Writer
}

// DefaultName is the command's name in reports unless Options.Name says otherwise.
const DefaultName = "kubectl gitops-preflight"

func (o Options) name() string {
	if o.Name == "" {
		return DefaultName
	}
	return o.Name
}

// Reporter renders a report.
type Reporter interface {
	Report(w io.Writer, r *checks.Report) error
}

// New returns the reporter for f. Every reporter it returns prints the
// report through Redacted: no format prints a credential value.
func New(f Format, opts Options) (Reporter, error) {
	var r Reporter
	switch f {
	case FormatTable:
		r = Table{Options: opts}
	case FormatWide:
		opts.Width = 0
		r = Table{Options: opts}
	case FormatJSON:
		r = JSON{}
	case FormatYAML:
		r = YAML{}
	case FormatJUnit:
		r = JUnit{Name: opts.Name}
	case FormatGitHub:
		r = GitHub{Options: opts, Summary: opts.StepSummary}
	case FormatMarkdown:
		r = Markdown{Options: opts}
	case FormatSARIF:
		r = SARIF{}
	case FormatCodeQuality:
		r = CodeQuality{}
	default:
		return nil, fmt.Errorf("unknown output format %q", f)
	}
	return redacting{next: r}, nil
}
