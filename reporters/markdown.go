package reporters

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// Markdown renders the report as the body of a pull-request comment (and
// GitHub's job summary): a first line that a bot finds the comment by
// (MarkdownMarker, with the context and mode), a heading with the verdict
// in words, the counts, one table row per finding (status, check, first
// line of its message, where the value is set) and every finding's details
// collapsed under it, each with its fingerprint (Fingerprint) in an HTML
// comment: a CI job edits the comment that carries the marker instead of
// adding one per run, and a reader can tell which findings are new.
type Markdown struct {
	Options Options
}

// MarkdownMarker starts the first line of every Markdown report:
// "<!-- kubectl-gitops-preflight report context=... mode=... -->".
const MarkdownMarker = "<!-- kubectl-gitops-preflight report"

var markdownGlyph = map[checks.Status]string{
	checks.StatusWarn: "⚠️", checks.StatusFail: "❌", checks.StatusError: "‼️", checks.StatusWaived: "≈",
}

// Report writes the comment body.
func (m Markdown) Report(w io.Writer, r *checks.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s context=%q mode=%s -->\n", MarkdownMarker, r.Cluster.Context, r.Mode.Phase())
	m.section(&b, r, "", "###")
	_, err := io.WriteString(w, b.String())
	return err
}

// section writes one report's heading, counts, table and details; label
// names a fleet member ("" for a single cluster).
func (m Markdown) section(b *strings.Builder, r *checks.Report, label, heading string) {
	s := r.Summary()
	failed := s[checks.StatusFail] + s[checks.StatusError]
	verdict := "✅ no check failed"
	if failed > 0 {
		verdict = fmt.Sprintf("❌ %d %s", failed, plural(failed, "check failed", "checks failed"))
	} else if s[checks.StatusWarn] > 0 {
		verdict = fmt.Sprintf("⚠️ no check failed, %d %s", s[checks.StatusWarn], plural(s[checks.StatusWarn], "warning", "warnings"))
	}
	where := r.Mode.Phase()
	if ctx := firstNonEmpty(label, r.Cluster.Context); ctx != "" {
		where += " on `" + mdCode(ctx) + "`"
	}
	fmt.Fprintf(b, "%s %s: %s (%s)\n\n", heading, m.Options.name(), verdict, where)
	var counts []string
	for _, st := range checks.Statuses {
		if s[st] > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", s[st], st))
		}
	}
	line := strings.Join(counts, " · ")
	if f := failingByImpact(r); f != "" {
		f, _, _ = strings.Cut(f, " (") // the table's ✱ legend: no ✱ here
		line += "  \n" + html.EscapeString(f)
	}
	b.WriteString(line + "\n")

	var findings []checks.Outcome
	for _, o := range r.Outcomes {
		if isFinding(o) {
			findings = append(findings, o)
		}
	}
	if len(findings) == 0 {
		return
	}
	b.WriteString("\n| | Check | Finding | Set in |\n|---|---|---|---|\n")
	for _, o := range findings {
		first := strings.Split(o.Message, "\n")[0]
		fmt.Fprintf(b, "| %s %s | [`%s`](%s) | %s | %s |\n", markdownGlyph[o.Status], o.Status, o.ID, o.Docs(),
			mdCell(first), mdSource(o.Source))
	}
	b.WriteString("\n<details><summary>Details</summary>\n")
	for _, o := range findings {
		fmt.Fprintf(b, "\n<!-- fingerprint %s -->\n**%s `%s`** (%s): %s\n\n", Fingerprint(firstNonEmpty(label, r.Cluster.Context), o),
			markdownGlyph[o.Status], o.ID, o.Impact, html.EscapeString(o.Title))
		b.WriteString("```text\n" + fence(o.Message) + "\n```\n")
		if o.Hint != "" {
			b.WriteString("\nFix:\n```text\n" + fence(o.Hint) + "\n```\n")
		}
		if w := o.Waiver; w != nil {
			fmt.Fprintf(b, "\nWaived: %s (covers a %s, expires %s)\n", html.EscapeString(w.Reason), w.Status, w.Expires)
		}
		if len(o.Objects) > 0 {
			objs := make([]string, len(o.Objects))
			for i, ref := range o.Objects {
				objs[i] = "`" + mdCode(ref.String()) + "`"
			}
			b.WriteString("\nObjects: " + strings.Join(objs, ", ") + "\n")
		}
		if o.Source != nil {
			b.WriteString("\nSet in: " + mdSource(o.Source) + "\n")
		}
	}
	b.WriteString("\n</details>\n")
}

// mdSource is a source as Markdown: `values.yaml:12:5` (`global.runtime.name`).
func mdSource(s *checks.Source) string {
	if s == nil {
		return ""
	}
	out := "`" + mdCode(s.String()) + "`"
	if s.File != "" && s.Path != "" {
		out += " (`" + mdCode(s.Path) + "`)"
	}
	return out
}

// mdCell is text for a table cell: HTML-escaped, pipes escaped.
func mdCell(s string) string {
	return strings.ReplaceAll(html.EscapeString(s), "|", `\|`)
}

// mdCode is text inside an inline code span in a table: no backquotes, no
// pipes (GitHub splits cells on them even inside code).
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "|", `\|`).Replace(s)
}

// fence keeps text from closing the code fence it sits in.
func fence(s string) string { return strings.ReplaceAll(s, "```", "'''") }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
