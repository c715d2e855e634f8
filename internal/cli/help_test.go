package cli

import (
	"flag"
	"io"
	"os"
	"path/filepath"
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

// TestHelpGroupsEveryFlag: every visible flag is in flagGroups or is one of
// the connection flags (cli-runtime's, --connect-to, --ca-file), and every
// name in flagGroups is a flag.
func TestHelpGroupsEveryFlag(t *testing.T) {
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	cmd, _ := newCommand(streams, Host{})
	cmd.InitDefaultHelpFlag()
	connection := map[string]bool{"connect-to": true, "ca-file": true}
	stock := NewOptions(streams, Host{})
	fs := cmd.Flags()
	stockSet := pflag.NewFlagSet("stock", pflag.ContinueOnError)
	stock.ConfigFlags.AddFlags(stockSet)
	stockSet.VisitAll(func(f *pflag.Flag) { connection[f.Name] = true })
	grouped := map[string]string{}
	for _, g := range flagGroups {
		for _, n := range g.names {
			if fs.Lookup(n) == nil {
				t.Errorf("group %q names no flag --%s", g.title, n)
			}
			if prev, ok := grouped[n]; ok {
				t.Errorf("--%s is in %q and %q", n, prev, g.title)
			}
			grouped[n] = g.title
		}
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if _, ok := grouped[f.Name]; !ok && !connection[f.Name] {
			t.Errorf("--%s is in no help group (it would land in %q)", f.Name, connectionGroup)
		}
	})
}
