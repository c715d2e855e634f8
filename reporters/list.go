package reporters

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// CheckInfo is one catalogue entry as --list-checks -o json prints it.
type CheckInfo struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	Mode     string `json:"mode"`
	Title    string `json:"title"`
	Docs     string `json:"docs"`
	Fixable  bool   `json:"fixable"`
}

// ErrListFormat is returned by ListChecks for a format a catalogue has no form in.
var ErrListFormat = errors.New("--list-checks prints table, json or yaml")

// ListChecks writes the catalogue: for table, each check's ID, mode,
// category and docs link in columns, as much of the link as the width
// allows (width 0, a pipe: the full URL; narrower: the anchor, "#<ID>" of
// checks.DocsBase; narrower still: one line under the table says where the
// anchors are); for wide, the full table (ID, category, mode, title, docs);
// a JSON array for json, the same array as YAML for yaml. No line ends in a
// blank. A catalogue is not a test run, so junit is refused (ErrListFormat);
// the command reports that as a usage error.
func ListChecks(w io.Writer, f Format, list []checks.Check, width int) error {
	infos := make([]CheckInfo, len(list))
	for i, c := range list {
		infos[i] = CheckInfo{ID: c.ID, Category: string(c.Category), Mode: c.Modes.String(), Title: c.Title, Docs: c.Docs(), Fixable: c.Fixable}
	}
	switch f {
	case FormatTable:
		return listColumns(w, infos, width)
	case FormatWide:
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(infos)
	case FormatYAML:
		out, err := yaml.Marshal(infos)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	default:
		return fmt.Errorf("%w, not %s", ErrListFormat, f)
	}
	tw := &trimWriter{w: w}
	table := plainTable(tw)
	table.Header("ID", "CATEGORY", "MODE", "TITLE", "DOCS")
	for _, c := range infos {
		if err := table.Append([]string{c.ID, c.Category, c.Mode, c.Title, c.Docs}); err != nil {
			return err
		}
	}
	if err := table.Render(); err != nil {
		return err
	}
	return tw.flush()
}

// listLayout is one way of printing the catalogue's table: the DOCS cell of
// a check (none: no DOCS column) and the lines under the table.
type listLayout struct {
	docs   func(CheckInfo) string
	footer string
}

// docsRepo is the project's repository, for the line that says where the
// docs anchors point when the table has no room for the links.
const docsRepo = "https://github.com/gitops-preflight/kubectl-gitops-preflight"

// listColumns writes the ID, MODE, CATEGORY and DOCS table in the first
// layout whose widest line fits width (any, for width 0): full links, then
// anchors, then no DOCS column and a line naming the anchors' page; when
// even that is too wide, each check's ID on its line and its mode and
// category under it.
func listColumns(w io.Writer, infos []CheckInfo, width int) error {
	layouts := []listLayout{
		{docs: func(c CheckInfo) string { return c.Docs }},
		{docs: func(c CheckInfo) string { return strings.TrimPrefix(c.Docs, checks.DocsBase) },
			footer: "DOCS: anchors in docs/checks.md of " + docsRepo},
		{footer: "Docs: docs/checks.md#<ID> in " + docsRepo},
	}
	for _, l := range layouts {
		var buf bytes.Buffer
		if err := l.render(&buf, infos, width); err != nil {
			return err
		}
		if width <= 0 || widest(buf.String()) <= width {
			_, err := w.Write(buf.Bytes())
			return err
		}
	}
	var b strings.Builder
	for _, c := range infos {
		b.WriteString(strings.Join(wrapIndent(c.ID, width, 0, 2), "\n") + "\n")
		b.WriteString(strings.Join(wrapIndent(c.Mode+"  "+c.Category, width, 4, 4), "\n") + "\n")
	}
	b.WriteString("\n" + strings.Join(Wrap(layouts[len(layouts)-1].footer, width, 0, 2), "\n") + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// render writes the table of this layout (tablewriter's columns, trailing
// blanks trimmed) and its footer, wrapped to width (0: not wrapped).
func (l listLayout) render(w io.Writer, infos []CheckInfo, width int) error {
	tw := &trimWriter{w: w}
	table := plainTable(tw)
	if l.docs != nil {
		table.Header("ID", "MODE", "CATEGORY", "DOCS")
	} else {
		table.Header("ID", "MODE", "CATEGORY")
	}
	for _, c := range infos {
		row := []string{c.ID, c.Mode, c.Category}
		if l.docs != nil {
			row = append(row, l.docs(c))
		}
		if err := table.Append(row); err != nil {
			return err
		}
	}
	if err := table.Render(); err != nil {
		return err
	}
	if err := tw.flush(); err != nil {
		return err
	}
	if l.footer != "" {
		_, err := fmt.Fprintf(w, "\n%s\n", strings.Join(Wrap(l.footer, width, 0, 2), "\n"))
		return err
	}
	return nil
}

// widest is the display width of the widest line of s.
func widest(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, twwidth.Width(l))
	}
	return n
}

// plainTable is a borderless, kubectl-like table: left-aligned columns
// separated by two spaces, no wrapping, headers as given.
func plainTable(w io.Writer) *tablewriter.Table {
	cell := tw.CellConfig{
		Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone},
		Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
		Padding:    tw.CellPadding{Global: tw.Padding{Left: "", Right: "  "}},
	}
	return tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.Off, ShowHeader: tw.Off},
				Lines:      tw.Lines{ShowTop: tw.Off, ShowBottom: tw.Off, ShowHeaderLine: tw.Off, ShowFooterLine: tw.Off},
			},
		})),
		tablewriter.WithConfig(tablewriter.Config{Header: cell, Row: cell}),
	)
}
