package reporters

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/fatih/color"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/redact"
)

// Fleet is a run over many clusters (--contexts, --all-contexts): one entry
// per kubeconfig context, in the order the contexts were given.
type Fleet struct {
	Mode    checks.Mode
	Entries []FleetEntry
}

// FleetEntry is one cluster of a fleet: its context, the exit code a run on
// that cluster alone would have and what it amounts to (Outcome: both as
// the command's exit table says), and its report, or Err (one line) when the
// cluster could not be checked at all.
type FleetEntry struct {
	Context string
	Exit    int
	Outcome Outcome
	Err     string
	Report  *checks.Report
}

// Outcome is what a cluster's run amounts to, in the words of the fleet's
// report: the command's exit table gives each verdict its exit code and its
// Outcome.
type Outcome string

// Outcomes.
const (
	OutcomeOK          Outcome = "ok"
	OutcomeFailed      Outcome = "failed"
	OutcomeNotChecked  Outcome = "not checked"
	OutcomeUnreachable Outcome = "unreachable"
	OutcomeInterrupted Outcome = "interrupted"
)

// redacted is f with every printed string passed through redact.String
// (Redacted, per report).
func (f *Fleet) redacted() *Fleet {
	out := &Fleet{Mode: f.Mode, Entries: make([]FleetEntry, len(f.Entries))}
	for i, e := range f.Entries {
		e.Context, e.Err = redact.String(e.Context), redact.String(e.Err)
		if e.Report != nil {
			e.Report = Redacted(e.Report)
		}
		out.Entries[i] = e
	}
	return out
}

// WriteFleet renders a fleet in format f: for table and wide, the matrix of
// checks × clusters and each cluster's findings (FleetTable); JSON and YAML,
// the FleetDocument; JUnit, one test suite per cluster. Every string goes
// through redact.String first, as in New.
func WriteFleet(w io.Writer, f Format, opts Options, fl *Fleet) error {
	fl = fl.redacted()
	switch f {
	case FormatTable:
		return FleetTable{Options: opts}.Report(w, fl)
	case FormatWide:
		opts.Width = 0
		return FleetTable{Options: opts}.Report(w, fl)
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(NewFleetDocument(fl))
	case FormatYAML:
		out, err := yaml.Marshal(NewFleetDocument(fl))
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	case FormatJUnit:
		return JUnit{Name: opts.Name}.fleet(w, fl)
	case FormatGitHub, FormatMarkdown, FormatSARIF, FormatCodeQuality:
		return writeFleetCI(w, f, opts, fl)
	}
	return fmt.Errorf("unknown output format %q", f)
}

// FleetDocument is the JSON (and YAML) shape of a fleet run, schemaVersion
// v1: one entry per cluster with its exit code and its report (the
// single-cluster Document), and the counts over all clusters.
type FleetDocument struct {
	SchemaVersion string               `json:"schemaVersion"`
	Fleet         []FleetEntryDocument `json:"fleet"`
	Summary       FleetSummaryDocument `json:"summary"`
}

// FleetEntryDocument is one cluster of a fleet: its kubeconfig context, the
// exit code a run on it alone would have, and its report; a cluster that
// could not be checked at all (exit 2: its kubeconfig entry is unusable) has
// no report and says why in error.
type FleetEntryDocument struct {
	Context string    `json:"context"`
	Exit    int       `json:"exit"`
	Error   string    `json:"error,omitempty"`
	Report  *Document `json:"report"`
}

// FleetSummaryDocument counts a fleet's checks by status and impact over
// every cluster (the fields of SummaryDocument, summed), and its clusters:
// total, and by exit code ("0", "1", "2", "3", and a signal's code).
type FleetSummaryDocument struct {
	SummaryDocument
	Clusters FleetClustersDocument `json:"clusters"`
}

// FleetClustersDocument counts a fleet's clusters: Total, and ByExit keyed
// by exit code as a string.
type FleetClustersDocument struct {
	Total  int            `json:"total"`
	ByExit map[string]int `json:"byExit"`
}

// NewFleetDocument converts a fleet to its contract shape.
func NewFleetDocument(f *Fleet) FleetDocument {
	doc := FleetDocument{
		SchemaVersion: checks.SchemaVersion,
		Fleet:         make([]FleetEntryDocument, 0, len(f.Entries)),
		Summary: FleetSummaryDocument{
			SummaryDocument: SummaryDocument{Impact: map[string]int{}},
			Clusters:        FleetClustersDocument{Total: len(f.Entries), ByExit: map[string]int{}},
		},
	}
	s := &doc.Summary
	for _, e := range f.Entries {
		ed := FleetEntryDocument{Context: e.Context, Exit: e.Exit, Error: e.Err}
		s.Clusters.ByExit[strconv.Itoa(e.Exit)]++
		if e.Report != nil {
			d := NewDocument(e.Report)
			ed.Report = &d
			s.Pass += d.Summary.Pass
			s.Warn += d.Summary.Warn
			s.Fail += d.Summary.Fail
			s.Skip += d.Summary.Skip
			s.Error += d.Summary.Error
			s.Waived += d.Summary.Waived
			for k, n := range d.Summary.Impact {
				s.Impact[k] += n
			}
		}
		doc.Fleet = append(doc.Fleet, ed)
	}
	return doc
}

// FleetTable renders a fleet for people: a header, the matrix of checks
// (rows) × clusters (columns, headed by context) with each result's status
// glyph, folded into as many matrices as it takes for no line to exceed
// Options.Width (0: one matrix, however wide); under it, for --upgrade, the
// deployed chart version of each cluster and the clusters grouped in waves
// (ready, needs a step first, blocked); then each cluster's warn, fail,
// error and waived results (check, status, message, hint), and a summary.
type FleetTable struct {
	Options Options
}

// maxColumnLabel is the widest a cluster's column heading gets: a longer
// context name (an EKS ARN) keeps its end, after "…".
const maxColumnLabel = 24

// Report writes the fleet table.
func (t FleetTable) Report(w io.Writer, f *Fleet) error {
	tw := &trimWriter{w: w}
	if err := t.report(tw, f); err != nil {
		return err
	}
	return tw.flush()
}

func (t FleetTable) report(w io.Writer, f *Fleet) error {
	tab := Table{Options: t.Options}
	styles := tab.styles()
	bold, dim := t.color(color.Bold), t.color(color.Faint)
	title := "pre-install checks"
	switch f.Mode {
	case checks.ModePost:
		title = "post-install checks"
	case checks.ModeUpgrade:
		title = "upgrade checks"
	}
	var b strings.Builder
	head := fmt.Sprintf("%s %s on %d clusters", t.Options.name()+":", title, len(f.Entries))
	for i, l := range tab.fit(head, 0, 0) {
		if i == 0 {
			l = bold.Sprint(t.Options.name()+":") + strings.TrimPrefix(l, t.Options.name()+":")
		}
		b.WriteString(l + "\n")
	}
	b.WriteString("\n")
	for i, m := range t.matrices(f, styles) {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(m)
	}
	if f.Mode == checks.ModeUpgrade {
		b.WriteString("\nUpgrade waves:\n")
		for _, l := range upgradeWaves(f) {
			for _, fl := range tab.fit(l, 2, 4) {
				b.WriteString(fl + "\n")
			}
		}
	}
	for _, e := range f.Entries {
		b.WriteString("\n")
		for i, l := range tab.fit(entryLine(e), 0, 2) {
			if i == 0 {
				l = bold.Sprint(l)
			}
			b.WriteString(l + "\n")
		}
		if e.Report == nil {
			continue
		}
		for _, o := range e.Report.Outcomes {
			if o.Status == checks.StatusPass || o.Status == checks.StatusSkip {
				continue
			}
			st := styles[o.Status]
			for i, l := range tab.fit(headLine(st.glyph, o, tab.marker(o)), 2, 2+stackedIndent) {
				if i == 0 {
					l = st.c.Sprint(l)
				}
				b.WriteString(l + "\n")
			}
			for _, l := range strings.Split(o.Message, "\n") {
				for _, fl := range tab.fit(l, 2+stackedIndent, 2+stackedIndent) {
					b.WriteString(fl + "\n")
				}
			}
			for _, l := range hintLines(o) {
				for _, fl := range tab.fit(l, 2+stackedIndent, 2+stackedIndent+2) {
					b.WriteString(dim.Sprint(fl) + "\n")
				}
			}
		}
	}
	b.WriteString("\n")
	for _, l := range tab.fit(fleetSummary(f), 0, 2) {
		b.WriteString(l + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t FleetTable) color(a color.Attribute) *color.Color {
	c := color.New(a)
	if t.Options.Color {
		c.EnableColor()
	} else {
		c.DisableColor()
	}
	return c
}

// entryLine heads a cluster's findings: its context, server and Kubernetes
// version, and its exit code with what it means.
func entryLine(e FleetEntry) string {
	info := checks.ClusterInfo{Context: e.Context}
	if e.Report != nil {
		info = e.Report.Cluster
		info.Context = e.Context
	}
	line := clusterLine(info) + ": exit " + strconv.Itoa(e.Exit)
	switch {
	case e.Err != "":
		line += ", not checked: " + e.Err
	case e.Outcome == OutcomeOK:
		line += ", no failures"
	case e.Outcome == OutcomeUnreachable:
		line += ", " + string(OutcomeUnreachable)
	}
	return line
}

// fleetSummary is the last line: the clusters counted by exit code, each
// with what it means, e.g.
// "Summary: 3 clusters: 1 exit 0 (ok), 1 exit 1 (failed), 1 exit 3 (unreachable)".
func fleetSummary(f *Fleet) string {
	count := map[int]int{}
	meaning := map[int]Outcome{}
	var codes []int
	for _, e := range f.Entries {
		if count[e.Exit] == 0 {
			codes = append(codes, e.Exit)
		}
		count[e.Exit]++
		meaning[e.Exit] = e.Outcome
	}
	sort.Ints(codes)
	parts := make([]string, 0, len(codes))
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d exit %d (%s)", count[c], c, meaning[c]))
	}
	return fmt.Sprintf("Summary: %d clusters: %s", len(f.Entries), strings.Join(parts, ", "))
}

// upgradeWaves groups an --upgrade fleet's clusters: ready (nothing failed),
// needs a step first (a failed result carries the upgrade step to take
// first, Result.Step), blocked (naming the checks that failed), and not
// checked (no report, or the cluster was unreachable). Groups with no
// cluster are left out.
func upgradeWaves(f *Fleet) []string {
	var ready, step, blocked, unchecked []string
	for _, e := range f.Entries {
		if e.Report == nil || e.Report.Unreachable() {
			unchecked = append(unchecked, fmt.Sprintf("%s (exit %d)", e.Context, e.Exit))
			continue
		}
		var failed []string
		var path string
		for _, o := range e.Report.Outcomes {
			if !o.Status.Failed() {
				continue
			}
			if o.Step != nil {
				path = o.Step.String()
				continue
			}
			failed = append(failed, o.ID)
		}
		switch {
		case path != "":
			s := e.Context + " (" + path
			if len(failed) > 0 {
				s += "; also blocked by " + strings.Join(failed, ", ")
			}
			step = append(step, s+")")
		case len(failed) > 0:
			blocked = append(blocked, e.Context+" (by "+strings.Join(failed, ", ")+")")
		default:
			ready = append(ready, e.Context)
		}
	}
	var out []string
	for _, g := range []struct {
		name string
		list []string
	}{{"ready", ready}, {"needs a step first", step}, {"blocked", blocked}, {"not checked", unchecked}} {
		if len(g.list) > 0 {
			out = append(out, g.name+": "+strings.Join(g.list, ", "))
		}
	}
	return out
}

// columnLabel is a cluster's column heading: its context, cut to keep its
// last columns after "…" when wider than limit.
func columnLabel(ctx string, limit int) string {
	if twwidth.Width(ctx) <= limit {
		return ctx
	}
	r := []rune(ctx)
	for i := range r {
		if tail := string(r[i:]); twwidth.Width(tail) <= limit-1 {
			return "…" + tail
		}
	}
	return "…"
}

// matrices renders the checks × clusters matrix, folded: each matrix holds
// as many cluster columns as fit in Options.Width beside the CHECK column
// (at least one), the whole fleet when Width is 0.
func (t FleetTable) matrices(f *Fleet, styles map[checks.Status]style) []string {
	var ids []string
	seen := map[string]bool{}
	for _, e := range f.Entries {
		if e.Report == nil {
			continue
		}
		for _, o := range e.Report.Outcomes {
			if !seen[o.ID] {
				seen[o.ID] = true
				ids = append(ids, o.ID)
			}
		}
	}
	upgrade := f.Mode == checks.ModeUpgrade
	rowLabels := append([]string{"CHECK"}, ids...)
	if upgrade {
		rowLabels = append(rowLabels, "deployed chart")
	}
	rowLabels = append(rowLabels, "exit")
	const pad = 2 // the blanks after every column (plainTable)
	first := 0
	for _, l := range rowLabels {
		first = max(first, twwidth.Width(l))
	}
	first += pad
	limit := maxColumnLabel
	if t.Options.Width > 0 {
		limit = max(4, min(limit, t.Options.Width-first-pad))
	}
	type column struct {
		cells []string // heading, a cell per check, [deployed chart], exit
		width int      // display columns with the padding
	}
	cols := make([]column, len(f.Entries))
	for i, e := range f.Entries {
		status := map[string]checks.Status{}
		if e.Report != nil {
			for _, o := range e.Report.Outcomes {
				status[o.ID] = o.Status
			}
		}
		c := column{cells: []string{columnLabel(e.Context, limit)}}
		for _, id := range ids {
			cell := ""
			if st, ok := status[id]; ok {
				cell = styles[st].c.Sprint(styles[st].glyph)
			}
			c.cells = append(c.cells, cell)
		}
		if upgrade {
			from := ""
			if e.Report != nil && e.Report.Upgrade != nil {
				from = e.Report.Upgrade.From
			}
			c.cells = append(c.cells, from)
		}
		c.cells = append(c.cells, strconv.Itoa(e.Exit))
		for _, s := range c.cells {
			c.width = max(c.width, twwidth.Width(s))
		}
		c.width += pad
		cols[i] = c
	}
	// Fold greedily: the last column's padding is trimmed, so a matrix fits
	// when its columns' widths less one padding do.
	var groups [][]column
	used := first
	for _, c := range cols {
		if n := len(groups); n > 0 && (t.Options.Width <= 0 || used+c.width-pad <= t.Options.Width) {
			groups[n-1] = append(groups[n-1], c)
			used += c.width
			continue
		}
		groups = append(groups, []column{c})
		used = first + c.width
	}
	out := make([]string, 0, len(groups))
	for _, g := range groups {
		var sb strings.Builder
		table := plainTable(&sb)
		for r, label := range rowLabels {
			row := []string{label}
			for _, c := range g {
				row = append(row, c.cells[r])
			}
			_ = table.Append(row)
		}
		_ = table.Render()
		out = append(out, sb.String())
	}
	return out
}
