package reporters

import (
	"fmt"
	"io"
	"strings"
)

// writeFleetCI writes a fleet in a CI format, each cluster as a run on it
// alone would be, labelled with its context: GitHub annotations titled
// "[context] check", one Markdown section per cluster under one marker
// line, one SARIF run per cluster (its own automationDetails.id), one Code
// Quality array of every cluster's issues. A cluster that could not be
// checked is an ::error annotation or a Markdown line; SARIF and Code
// Quality, which hold anchored findings only, leave it out.
func writeFleetCI(w io.Writer, f Format, opts Options, fl *Fleet) error {
	switch f {
	case FormatGitHub:
		g := GitHub{Options: opts}
		for _, e := range fl.Entries {
			if e.Report == nil {
				if _, err := fmt.Fprintf(w, "::error title=%s::%s\n", escapeProperty("["+e.Context+"] not checked"), escapeData(e.Err)); err != nil {
					return err
				}
				continue
			}
			if err := g.commands(w, e.Report, e.Context); err != nil {
				return err
			}
		}
		if opts.StepSummary != nil {
			return fleetMarkdown(opts.StepSummary, opts, fl)
		}
		return nil
	case FormatMarkdown:
		return fleetMarkdown(w, opts, fl)
	case FormatSARIF:
		runs := []sarifRun{}
		for _, e := range fl.Entries {
			if e.Report != nil {
				runs = append(runs, sarifRunOf(e.Report, e.Context))
			}
		}
		return writeSARIF(w, runs)
	case FormatCodeQuality:
		issues := []codeQualityIssue{}
		for _, e := range fl.Entries {
			if e.Report != nil {
				issues = append(issues, codeQualityIssues(e.Report, e.Context)...)
			}
		}
		return writeCodeQuality(w, issues)
	}
	return fmt.Errorf("unknown output format %q", f)
}

// fleetMarkdown is the Markdown report of a fleet: one marker line, then a
// section per cluster.
func fleetMarkdown(w io.Writer, opts Options, fl *Fleet) error {
	var b strings.Builder
	contexts := make([]string, len(fl.Entries))
	for i, e := range fl.Entries {
		contexts[i] = e.Context
	}
	fmt.Fprintf(&b, "%s contexts=%q mode=%s -->\n", MarkdownMarker, strings.Join(contexts, ","), fl.Mode.Phase())
	m := Markdown{Options: opts}
	for _, e := range fl.Entries {
		b.WriteString("\n")
		if e.Report == nil {
			fmt.Fprintf(&b, "#### %s: `%s` not checked\n\n%s\n", m.Options.name(), mdCode(e.Context), mdCell(e.Err))
			continue
		}
		m.section(&b, e.Report, e.Context, "####")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
