package reporters

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// GitHub renders the report as GitHub Actions workflow commands
// (https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions):
// each fail and error an ::error, each warn a ::warning and each waived
// finding a ::notice; a finding whose source is a line of a values file (or
// a chart's Chart.yaml) names it (file=, line=, col=), so that GitHub
// annotates that line of the pull request; the others are annotations of
// the run. A last plain line counts the statuses. With Summary set (the
// file $GITHUB_STEP_SUMMARY names, opened for appending by the caller), the
// Markdown report goes there too: the job's summary page.
type GitHub struct {
	Options Options
	// Summary receives the Markdown report (nil: none).
	Summary io.Writer
}

// Report writes the workflow commands, then the Markdown summary.
func (g GitHub) Report(w io.Writer, r *checks.Report) error {
	if err := g.commands(w, r, ""); err != nil {
		return err
	}
	if g.Summary != nil {
		return (Markdown{Options: g.Options}).Report(g.Summary, r)
	}
	return nil
}

// commands writes one report's annotations; label ("" for a single
// cluster) prefixes each title with the fleet member's context.
func (g GitHub) commands(w io.Writer, r *checks.Report, label string) error {
	for _, o := range r.Outcomes {
		if !isFinding(o) {
			continue
		}
		cmd := "error"
		switch o.Status {
		case checks.StatusWarn:
			cmd = "warning"
		case checks.StatusWaived:
			cmd = "notice"
		}
		title := o.ID + ": " + o.Title
		if label != "" {
			title = "[" + label + "] " + title
		}
		props := []string{}
		if s := o.Source; s != nil && s.Anchored() {
			props = append(props, "file="+escapeProperty(repoPath(s.File)), "line="+strconv.Itoa(s.Line))
			if s.Column > 0 {
				props = append(props, "col="+strconv.Itoa(s.Column))
			}
		}
		props = append(props, "title="+escapeProperty(title))
		text := findingText(o)
		if s := o.Source; s != nil && !s.Anchored() {
			text += "\nset by " + s.String()
		}
		text += "\n" + o.Docs()
		if _, err := fmt.Fprintf(w, "::%s %s::%s\n", cmd, strings.Join(props, ","), escapeData(text)); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, statusLine(g.Options.name(), r, label))
	return err
}

// statusLine is "kubectl gitops-preflight: 2 fail, 1 warn, 12 pass, 3 skip
// (pre-install, context kind-dev)".
func statusLine(name string, r *checks.Report, label string) string {
	s := r.Summary()
	var parts []string
	for _, st := range checks.Statuses {
		if s[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", s[st], st))
		}
	}
	if len(parts) == 0 {
		parts = []string{"no checks"}
	}
	where := r.Mode.Phase()
	if ctx := firstNonEmpty(label, r.Cluster.Context); ctx != "" {
		where += ", context " + ctx
	}
	return name + ": " + strings.Join(parts, ", ") + " (" + where + ")"
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// escapeData escapes a workflow command's message: %, CR and LF
// (actions/toolkit, packages/core/src/command.ts escapeData).
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value: as
// escapeData, and : and , (escapeProperty).
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
