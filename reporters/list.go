package reporters

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
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

// ListChecks writes the catalogue: for table, each check's ID and title, the
// title word-wrapped so that no line is wider than width columns (0: no
// limit); for wide, the full table (ID, category, mode, title, docs); a JSON
// array for json, the same array as YAML for yaml. A catalogue is not a test
// run, so junit is refused (ErrListFormat); the command reports that as a
// usage error.
func ListChecks(w io.Writer, f Format, list []checks.Check, width int) error {
	infos := make([]CheckInfo, len(list))
	for i, c := range list {
		infos[i] = CheckInfo{ID: c.ID, Category: string(c.Category), Mode: c.Modes.String(), Title: c.Title, Docs: c.Docs(), Fixable: c.Fixable}
	}
	switch f {
	case FormatTable:
		return listTitles(w, infos, width)
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
	table := plainTable(w)
	table.Header("ID", "CATEGORY", "MODE", "TITLE", "DOCS")
	for _, c := range infos {
		if err := table.Append([]string{c.ID, c.Category, c.Mode, c.Title, c.Docs}); err != nil {
			return err
		}
	}
	return table.Render()
}

// listTitles writes "ID  TITLE" lines, IDs padded to one column, titles
// wrapped under themselves to width.
func listTitles(w io.Writer, infos []CheckInfo, width int) error {
	idw := len("ID")
	for _, c := range infos {
		idw = max(idw, len(c.ID))
	}
	col := idw + 2
	if _, err := fmt.Fprintln(w, strings.Join(wrapIndent(fmt.Sprintf("%-*s%s", col, "ID", "TITLE"), width, 0, 0), "\n")); err != nil {
		return err
	}
	for _, c := range infos {
		var lines []string
		if width > 0 && width-col < minWrapWidth {
			// Too narrow for two columns: the ID, the title under it.
			lines = append(wrapIndent(c.ID, width, 0, 0), wrapIndent(c.Title, width, 2, 2)...)
		} else {
			lines = wrapIndent(c.Title, width, col, col)
			lines[0] = c.ID + lines[0][len(c.ID):]
		}
		for _, l := range lines {
			if _, err := fmt.Fprintln(w, l); err != nil {
				return err
			}
		}
	}
	return nil
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
