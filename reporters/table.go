package reporters

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// Table renders the report for people: a header naming the cluster, the
// checks, and a summary line. With Options.Width set (a terminal) each check
// is a status line with its message and hint indented under it, wrapped to
// the width; with Width 0 (a pipe, -o wide) it is one table row per check
// (status glyph, ID, message) with hint rows under each warn, fail and error,
// never wrapped.
type Table struct {
	Options Options
}

type style struct {
	glyph string
	c     *color.Color
}

func (t Table) styles() map[checks.Status]style {
	mk := func(glyph string, attrs ...color.Attribute) style {
		c := color.New(attrs...)
		if t.Options.Color {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
		return style{glyph: glyph, c: c}
	}
	return map[checks.Status]style{
		checks.StatusPass:   mk("✔", color.FgGreen),
		checks.StatusWarn:   mk("⚠", color.FgYellow),
		checks.StatusFail:   mk("✖", color.FgRed, color.Bold),
		checks.StatusSkip:   mk("–", color.Faint),
		checks.StatusError:  mk("‼", color.FgMagenta, color.Bold),
		checks.StatusWaived: mk("≈", color.FgCyan),
	}
}

// Report writes the table.
func (t Table) Report(w io.Writer, r *checks.Report) error {
	// tablewriter pads every cell, the last column too: render into a buffer
	// and trim the trailing blanks so pasted reports stay tidy.
	tw := &trimWriter{w: w}
	if err := t.report(tw, r); err != nil {
		return err
	}
	return tw.flush()
}

func (t Table) report(w io.Writer, r *checks.Report) error {
	styles := t.styles()
	dim := color.New(color.Faint)
	bold := color.New(color.Bold)
	if t.Options.Color {
		dim.EnableColor()
		bold.EnableColor()
	} else {
		dim.DisableColor()
		bold.DisableColor()
	}

	title := "pre-install checks"
	switch r.Mode {
	case checks.ModePost:
		title = "post-install checks"
	case checks.ModeUpgrade:
		title = "upgrade checks"
		if u := r.Upgrade; u != nil {
			title = fmt.Sprintf("upgrade of release %s (chart %s → %s)", u.Release, orUnknown(u.From), orUnknown(u.To))
			if u.Application != "" {
				title = fmt.Sprintf("upgrade by Argo CD: Application %s syncs the commit (chart %s → %s)", u.Application, orUnknown(u.From), orUnknown(u.To))
			}
		}
	}
	for i, l := range t.fit(t.Options.name()+": "+title, 0, 0) {
		if i == 0 {
			l = bold.Sprint(t.Options.name()+":") + strings.TrimPrefix(l, t.Options.name()+":")
		}
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	if line := clusterLine(r.Cluster); line != "" {
		for _, l := range t.fit(line, 0, 0) {
			if _, err := fmt.Fprintln(w, dim.Sprint(l)); err != nil {
				return err
			}
		}
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}

	var err error
	if t.Options.Width > 0 {
		err = t.stacked(w, r, styles, dim)
	} else {
		err = t.wide(w, r, styles, dim)
	}
	if err != nil {
		return err
	}

	s := r.Summary()
	parts := make([]string, 0, len(checks.Statuses))
	for _, st := range checks.Statuses {
		if st == checks.StatusWaived && s[st] == 0 && r.Waivers == nil {
			continue // no --waivers: the summary reads as it always has
		}
		parts = append(parts, fmt.Sprintf("%d %s", s[st], st))
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	lines := t.fit("Summary: "+strings.Join(parts, ", "), 0, 0)
	if line := failingByImpact(r); line != "" {
		lines = append(lines, t.fit(line, 0, 0)...)
	}
	for _, u := range r.Waivers {
		if u.Warning() {
			lines = append(lines, t.fit(styles[checks.StatusWarn].c.Sprint(styles[checks.StatusWarn].glyph+" "+u.String()), 0, 2)...)
		}
	}
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

// failingByImpact is the summary's second line: the checks that failed or
// errored counted by impact, the impacts with none left out, and the legend
// of installFailsMarker when a check shows it, e.g.
//
//	Failing, by impact: 1 install-fails, 2 runtime-breaks (✱ = helm install will fail)
//
// "" when nothing failed. (Warnings are in the status counts; JSON's
// summary.impact counts them too.)
func failingByImpact(r *checks.Report) string {
	count := map[checks.Impact]int{}
	marked := false
	for _, o := range r.Outcomes {
		if o.Status.Failed() {
			count[o.Impact]++
			marked = marked || (Table{}).marker(o) != ""
		}
	}
	var parts []string
	for _, i := range r.Impacts() {
		if count[i] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[i], i))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	line := "Failing, by impact: " + strings.Join(parts, ", ")
	if marked {
		line += " (" + installFailsMarker + " = helm install will fail)"
	}
	return line
}

// hintLines returns the lines shown under a check: its hint (first line
// marked "→ ") and the --fix note, for warn, fail and error only; for a
// waived check, the waiver (reason, owner, last day, the status it covers).
func hintLines(o checks.Outcome) []string {
	if w := o.Waiver; w != nil {
		line := "waived: " + w.Reason + " ("
		if w.Owner != "" {
			line += "owner " + w.Owner + ", "
		}
		return []string{line + "expires " + w.Expires + ", covers a " + string(w.Status) + ")"}
	}
	if o.Status == checks.StatusPass || o.Status == checks.StatusSkip {
		return nil
	}
	var out []string
	if l := sourceLine(o.Source); l != "" {
		out = append(out, l)
	}
	if o.Hint == "" {
		return out
	}
	for i, l := range strings.Split(o.Hint, "\n") {
		prefix := "  "
		if i == 0 {
			prefix = "→ "
		}
		out = append(out, prefix+l)
	}
	if o.Fixable && o.Status.Failed() {
		out = append(out, "  fixable: rerun with --fix")
	}
	return out
}

// sourceLine names where the value behind a finding is written: "at
// values.yaml:12:5 (global.runtime.name)", "from --set global.runtime.name=x";
// "" without a source.
func sourceLine(s *checks.Source) string {
	switch {
	case s == nil:
		return ""
	case s.File != "":
		l := "at " + s.String()
		if s.Path != "" {
			l += " (" + s.Path + ")"
		}
		return l
	}
	return "from " + s.Flag
}

// headLine is a check's first line in the stacked layout: glyph, status and
// ID. marker is a short per-check tag shown after the ID (room kept for one;
// empty today).
func headLine(glyph string, o checks.Outcome, marker string) string {
	line := fmt.Sprintf("%s %-5s  %s", glyph, o.Status, o.ID)
	if marker != "" {
		line += "  " + marker
	}
	return line
}

// stackedIndent is where a check's message and hint start in the stacked layout.
const stackedIndent = 4

// stacked is the terminal layout (Options.Width > 0), after `linkerd check`:
// one line per check with its status and ID, then its message and hint on
// their own lines, indented and word-wrapped to the width. No line is wider
// than Options.Width.
func (t Table) stacked(w io.Writer, r *checks.Report, styles map[checks.Status]style, dim *color.Color) error {
	for _, o := range r.Outcomes {
		st := styles[o.Status]
		head := t.fit(headLine(st.glyph, o, t.marker(o)), 0, stackedIndent)
		head[0] = st.c.Sprint(head[0])
		var lines []string
		lines = append(lines, head...)
		for _, l := range strings.Split(o.Message, "\n") {
			lines = append(lines, t.fit(l, stackedIndent, stackedIndent)...)
		}
		for _, l := range hintLines(o) {
			// "→ " and the hint's continuation lines wrap under the text.
			for _, f := range t.fit(l, stackedIndent, stackedIndent+2) {
				lines = append(lines, dim.Sprint(f))
			}
		}
		for _, l := range lines {
			if _, err := fmt.Fprintln(w, l); err != nil {
				return err
			}
		}
	}
	return nil
}

// marker is the short per-check tag of the stacked layout's check line:
// installFailsMarker on a failed check whose impact is install-fails.
func (t Table) marker(o checks.Outcome) string {
	if o.Status.Failed() && o.Impact == checks.ImpactInstallFails {
		return installFailsMarker
	}
	return ""
}

// wide is the full table (piped output and -o wide): STATUS, CHECK, MESSAGE
// columns, one line per message line, never wrapped.
func (t Table) wide(w io.Writer, r *checks.Report, styles map[checks.Status]style, dim *color.Color) error {
	table := plainTable(w)
	table.Header("STATUS", "CHECK", "MESSAGE")
	for _, o := range r.Outcomes {
		st := styles[o.Status]
		msgLines := strings.Split(o.Message, "\n")
		if o.Status.Failed() && o.Impact == checks.ImpactInstallFails {
			msgLines[0] = installFailsMarker + " " + msgLines[0]
		}
		if err := table.Append([]string{st.c.Sprint(st.glyph + " " + string(o.Status)), o.ID, msgLines[0]}); err != nil {
			return err
		}
		for _, l := range msgLines[1:] {
			if err := table.Append([]string{"", "", l}); err != nil {
				return err
			}
		}
		for _, l := range hintLines(o) {
			if err := table.Append([]string{"", "", dim.Sprint(l)}); err != nil {
				return err
			}
		}
	}
	return table.Render()
}

// fit returns s as lines no wider than Options.Width (display columns):
// the first indented by first spaces, the rest by rest spaces, words kept
// whole where they fit and cut where a single word is wider than a line.
// With Width 0 it returns s indented by first, unchanged.
func (t Table) fit(s string, first, rest int) []string {
	return wrapIndent(s, t.Options.Width, first, rest)
}

// installFailsMarker starts the message of a failed check whose impact is
// install-fails.
const installFailsMarker = "✱"

func clusterLine(c checks.ClusterInfo) string {
	var parts []string
	if c.Context != "" {
		parts = append(parts, "context "+c.Context)
	}
	if c.Server != "" {
		parts = append(parts, "server "+c.Server)
	}
	if c.Version != "" {
		parts = append(parts, "Kubernetes "+c.Version)
	}
	return strings.Join(parts, ", ")
}

// trimWriter removes trailing spaces from every line written through it.
type trimWriter struct {
	w   io.Writer
	buf []byte
}

func (t *trimWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	for {
		i := bytes.IndexByte(t.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := bytes.TrimRight(t.buf[:i], " ")
		if _, err := t.w.Write(append(line, '\n')); err != nil {
			return 0, err
		}
		t.buf = t.buf[i+1:]
	}
}

func (t *trimWriter) flush() error {
	if len(t.buf) == 0 {
		return nil
	}
	_, err := t.w.Write(bytes.TrimRight(t.buf, " "))
	t.buf = nil
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
