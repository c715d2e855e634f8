package cli

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// helpFunc prints the root command's help: the description, usage and
// examples, then the flags in their sections (helpSections), everything word-wrapped
// to the width of the terminal stdout is (pflag's FlagUsagesWrapped for the
// flags), and not wrapped when stdout is not a terminal. Subcommands keep
// cobra's help (fallback).
func helpFunc(root *cobra.Command, term console, fallback func(*cobra.Command, []string)) func(*cobra.Command, []string) {
	return func(c *cobra.Command, args []string) {
		if c != root {
			fallback(c, args)
			return
		}
		if err := writeHelp(c.OutOrStdout(), c, term.outputWidth()); err != nil {
			c.PrintErrln("Error:", err)
		}
	}
}

// writeHelp writes root's help wrapped to width columns (0: no limit).
func writeHelp(w io.Writer, root *cobra.Command, width int) error {
	var b strings.Builder
	line := func(s string, first, rest int) {
		for _, l := range reporters.Wrap(s, width, first, rest) {
			b.WriteString(strings.TrimRight(l, " ") + "\n")
		}
	}
	line(root.Long, 0, 0)
	b.WriteString("\nUsage:\n")
	line(root.UseLine(), 2, 4)
	if root.HasAvailableSubCommands() {
		line(root.CommandPath()+" [command]", 2, 4)
	}
	if root.Example != "" {
		b.WriteString("\nExamples:\n")
		for _, l := range strings.Split(root.Example, "\n") {
			body := strings.TrimSpace(l)
			switch {
			case body == "":
				b.WriteString("\n")
			case strings.HasPrefix(body, "#"):
				line(body, 2, 4)
			default:
				line(body, 2, 6)
			}
		}
	}
	if root.HasAvailableSubCommands() {
		b.WriteString("\nAvailable Commands:\n")
		pad := 0
		for _, c := range root.Commands() {
			if c.IsAvailableCommand() || c.Name() == "help" {
				pad = max(pad, len(c.Name()))
			}
		}
		for _, c := range root.Commands() {
			if c.IsAvailableCommand() || c.Name() == "help" {
				line(fmt.Sprintf("%-*s  %s", pad, c.Name(), c.Short), 2, 4+pad)
			}
		}
	}
	for _, g := range groupFlags(root.Flags()) {
		usage := g.set.FlagUsagesWrapped(width)
		if usage == "" {
			continue
		}
		b.WriteString("\n")
		line(g.title+":", 0, 2)
		for _, l := range strings.Split(strings.TrimRight(usage, "\n"), "\n") {
			// pflag wraps at spaces only: a longer word (a URL default)
			// is cut like the report's.
			line(l, 0, 18)
		}
	}
	if root.HasAvailableSubCommands() {
		b.WriteString("\n")
		line(fmt.Sprintf("Use %q for more information about a command.", root.CommandPath()+" [command] --help"), 0, 0)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// titledFlags is one section of the help with its flags.
type titledFlags struct {
	title string
	set   *pflag.FlagSet
}

// groupFlags splits flags into the help's sections, in helpSections'
// order, each flag where its annotation places it (describe): by rank, then
// by name. A flag placed nowhere lands in the last section.
func groupFlags(flags *pflag.FlagSet) []titledFlags {
	bySection := map[string][]*pflag.Flag{}
	flags.VisitAll(func(f *pflag.Flag) {
		at, ok := helpPlacement(f)
		if !ok || !slices.Contains(helpSections, at.section) {
			at.section = sectionConnection
		}
		bySection[at.section] = append(bySection[at.section], f)
	})
	out := make([]titledFlags, 0, len(helpSections))
	for _, title := range helpSections {
		list := bySection[title]
		slices.SortStableFunc(list, func(a, b *pflag.Flag) int {
			pa, _ := helpPlacement(a)
			pb, _ := helpPlacement(b)
			return cmp.Or(cmp.Compare(pa.rank, pb.rank), strings.Compare(a.Name, b.Name))
		})
		set := pflag.NewFlagSet(title, pflag.ContinueOnError)
		set.SortFlags = false
		for _, f := range list {
			set.AddFlag(f)
		}
		out = append(out, titledFlags{title, set})
	}
	return out
}
