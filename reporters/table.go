package reporters

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// Table renders the report for people: a header naming the cluster, one row
// per check (status glyph, ID, message), hint lines under each warn, fail and
// error, and a summary line.
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
		checks.StatusPass:  mk("✔", color.FgGreen),
		checks.StatusWarn:  mk("⚠", color.FgYellow),
		checks.StatusFail:  mk("✖", color.FgRed, color.Bold),
		checks.StatusSkip:  mk("–", color.Faint),
		checks.StatusError: mk("‼", color.FgMagenta, color.Bold),
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
	if r.Mode == checks.ModePost {
		title = "post-install checks"
	}
	if _, err := fmt.Fprintf(w, "%s %s\n", bold.Sprint("kubectl gitops-preflight:"), title); err != nil {
		return err
	}
	if line := clusterLine(r.Cluster); line != "" {
		if _, err := fmt.Fprintln(w, dim.Sprint(line)); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}

	table := plainTable(w)
	table.Header("STATUS", "CHECK", "MESSAGE")
	for _, o := range r.Outcomes {
		st := styles[o.Status]
		msgLines := strings.Split(o.Message, "\n")
		if o.Status.Failed() && o.Impact() == checks.ImpactInstallFails {
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
		if o.Hint == "" || o.Status == checks.StatusPass || o.Status == checks.StatusSkip {
			continue
		}
		for i, l := range strings.Split(o.Hint, "\n") {
			prefix := "  "
			if i == 0 {
				prefix = "→ "
			}
			if err := table.Append([]string{"", "", dim.Sprint(prefix + l)}); err != nil {
				return err
			}
		}
		if o.Fixable && o.Status.Failed() {
			if err := table.Append([]string{"", "", dim.Sprint("  fixable: rerun with --fix")}); err != nil {
				return err
			}
		}
	}
	if err := table.Render(); err != nil {
		return err
	}

	s := r.Summary()
	parts := make([]string, 0, len(checks.Statuses))
	for _, st := range checks.Statuses {
		parts = append(parts, fmt.Sprintf("%d %s", s[st], st))
	}
	imp := r.ImpactSummary()
	iparts := make([]string, 0, len(checks.Impacts))
	for _, i := range checks.Impacts {
		iparts = append(iparts, fmt.Sprintf("%d %s", imp[i], i))
	}
	_, err := fmt.Fprintf(w, "\nSummary: %s\nNot passing, by impact: %s (%s = helm install will fail)\n",
		strings.Join(parts, ", "), strings.Join(iparts, ", "), installFailsMarker)
	return err
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
