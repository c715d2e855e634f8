package cli

import (
	"context"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// outputFlags say how the report is printed (-o, --no-color) and whether
// the run is recorded too (--bundle).
type outputFlags struct {
	// output is -o and --no-color, as run.Config takes them.
	output run.Output
	bundle string
	// debugRequests (hidden --debug-request-count) prints the number of
	// API requests of the run to stderr when it ends (for make bench).
	debugRequests bool
}

func newOutputFlags() *outputFlags {
	return &outputFlags{output: run.Output{Format: string(reporters.FormatTable)}}
}

// formatNames are the output formats, as -o takes them.
func formatNames() []string {
	out := make([]string, len(reporters.Formats))
	for i, f := range reporters.Formats {
		out[i] = string(f)
	}
	return out
}

// AddFlags declares the output flags on fs.
func (f *outputFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&f.output.Format, "output", "o", f.output.Format, "output format: "+strings.Join(formatNames(), "|"))
	describe(fs, "output", placement{sectionOutput, 1}, recorded)
	replayable(fs, "output", "output format (default: the recorded run's)")
	fs.BoolVar(&f.output.NoColor, "no-color", false, "never colour the output (as when NO_COLOR is set or TERM is dumb)")
	describe(fs, "no-color", placement{sectionOutput, 2}, recorded)
	replayable(fs, "no-color", "never colour the output")
	fs.StringVar(&f.bundle, "bundle", "", "also write what the run read, redacted, to the gzip'd tar `FILE` (at most 64 MiB uncompressed; with --contexts/--all-contexts, one archive of each cluster's bundle: at most 64 MiB per cluster) for the replay command; not with --fix")
	describe(fs, "bundle", placement{sectionOutput, 3}, notRecorded("it names the bundle itself"))
	fs.BoolVar(&f.debugRequests, "debug-request-count", false, "print the number of API requests to stderr when done")
	_ = fs.MarkHidden("debug-request-count")
	describe(fs, "debug-request-count", placement{sectionOutput, 6}, notRecorded("a count of the live run's requests"))
}

// Validate checks -o.
func (f *outputFlags) Validate() error {
	if _, err := reporters.ParseFormat(f.output.Format); err != nil {
		return usageError("%v", err)
	}
	return nil
}

// ToConfig compiles how the report is printed, and where the run is
// recorded.
func (f *outputFlags) ToConfig(_ context.Context, c *run.Config) error {
	c.Output = f.output
	c.Bundle = f.bundle
	return nil
}
