package cli

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

var update = flag.Bool("update", false, "rewrite internal/cli/testdata/* from the current output")

// helpAt is --help on a terminal of width columns (0: stdout is a pipe).
func helpAt(t *testing.T, width int) string {
	t.Helper()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	host := Host{
		Getenv:        func(string) string { return "" },
		IsTerminal:    func(io.Writer) bool { return width > 0 },
		TerminalWidth: func(io.Writer) int { return width },
	}
	cmd, _ := newCommand(streams, host)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestHelpGolden: --help in an 80-column terminal, as
// internal/cli/testdata/help-80.txt has it (go test ./internal/cli -run
// TestHelpGolden -update to accept a change).
func TestHelpGolden(t *testing.T) {
	got := helpAt(t, 80)
	path := filepath.Join("testdata", "help-80.txt")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("--help at 80 columns differs from %s (-update to accept):\n%s", path, got)
	}
}

// TestHelpFitsTheWidth: at every width from 40 to 200 columns no line of
// --help is wider than the terminal or ends in a blank, and the words are
// the same at every width (only the line breaks move); on a pipe nothing is
// wrapped: each flag's help is on its flag's line.
func TestHelpFitsTheWidth(t *testing.T) {
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	piped := helpAt(t, 0)
	for width := 40; width <= 200; width++ {
		help := helpAt(t, width)
		for i, l := range strings.Split(strings.TrimSuffix(help, "\n"), "\n") {
			if got := twwidth.Width(l); got > width {
				t.Fatalf("width %d: line %d is %d columns: %q", width, i+1, got, l)
			}
			if strings.HasSuffix(l, " ") {
				t.Fatalf("width %d: line %d ends in a blank: %q", width, i+1, l)
			}
		}
		// A word cut at the terminal width is joined again for the comparison.
		if strings.ReplaceAll(words(help), " ", "") != strings.ReplaceAll(words(piped), " ", "") {
			t.Fatalf("width %d: the help's text differs from the piped help's:\n%s", width, help)
		}
	}
	want := `      --chart string                  the gitops-runtime chart to render, as helm install takes it: directory, .tgz, oci:// reference or repo/name (default "oci://quay.io/codefresh/gitops-runtime")` + "\n"
	if !strings.Contains(piped, want) {
		t.Errorf("piped --help wrapped a flag's line; want\n%s\nin\n%s", want, piped)
	}
}

// TestHelpGroupsEveryFlag: every flag of the root command is placed in a
// section of the help, no two flags of a section share a rank but the
// connection section's (shown by name), and the help shows the sections in
// order with every visible flag once.
func TestHelpGroupsEveryFlag(t *testing.T) {
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	cmd, _ := newCommand(streams, Host{})
	ranks := map[placement]string{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		at, ok := helpPlacement(f)
		switch {
		case !ok:
			t.Errorf("--%s is placed in no help section (describe it where it is declared)", f.Name)
		case !slices.Contains(helpSections, at.section):
			t.Errorf("--%s is placed in %q, not a section of the help", f.Name, at.section)
		case at.section != sectionConnection && ranks[at] != "":
			t.Errorf("--%s and --%s share rank %d of %q", f.Name, ranks[at], at.rank, at.section)
		}
		ranks[at] = f.Name
	})
	shown := map[string]int{}
	var titles []string
	for _, g := range groupFlags(cmd.Flags()) {
		titles = append(titles, g.title)
		g.set.VisitAll(func(f *pflag.Flag) { shown[f.Name]++ })
	}
	if !slices.Equal(titles, helpSections) {
		t.Errorf("sections %q, want %q", titles, helpSections)
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if shown[f.Name] != 1 {
			t.Errorf("--%s is shown %d times", f.Name, shown[f.Name])
		}
	})
}
