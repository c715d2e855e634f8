package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// flagGroup is one titled section of the root command's help, the way
// kubectl groups its flags ("Basic Commands", `kubectl options`).
type flagGroup struct {
	title string
	names []string
}

// flagGroups are the help's sections, in order, and the flags of each, in
// the order they are shown. Every visible flag of the root command belongs
// to exactly one (TestHelpGroupsEveryFlag); the kubectl connection flags of
// cli-runtime go to the last, connectionGroup, with the network probes'.
var flagGroups = []flagGroup{
	{"The run", []string{"post", "upgrade", "namespace", "runtime-name", "release-name", "only", "skip", "fail-on", "waivers", "wait", "timeout", "list-checks"}},
	{"The planned install (as helm install and helm upgrade take it)", []string{
		"values", "set", "set-string", "chart", "chart-version",
		"access-mode", "ingress-host", "ingress-class", "ingress-url", "existing-argocd", "skip-ingress-validation", "argocd-version-range",
		"reuse-values", "reset-values", "reset-then-reuse-values", "helm-major", "argocd-app", "registry-mirror", "registry-check"}},
	{"Many clusters", []string{"contexts", "all-contexts", "parallel"}},
	{"In CI and in the cluster", []string{"installer", "installer-group", "in-cluster", "termination-log"}},
	{"Output", []string{"output", "no-color", "bundle", "help", "version"}},
	{"Fix (writes to the cluster)", []string{"fix", "yes", "dry-run", "crds", "tls-secret"}},
}

// connectionGroup is the title of the last section: kubectl's connection
// flags (cli-runtime's ConfigFlags) and the network probes' flags.
const connectionGroup = "Cluster connection and network probes"

// helpFunc prints the root command's help: the description, usage and
// examples, then the flags in flagGroups' sections, everything word-wrapped
// to the width of the terminal stdout is (pflag's FlagUsagesWrapped for the
// flags), and not wrapped when stdout is not a terminal. Subcommands keep
// cobra's help (fallback).
func helpFunc(root *cobra.Command, o *Options, fallback func(*cobra.Command, []string)) func(*cobra.Command, []string) {
	return func(c *cobra.Command, args []string) {
		if c != root {
			fallback(c, args)
			return
		}
		if err := writeHelp(c.OutOrStdout(), c, o.terminalWidth(o.Streams.Out)); err != nil {
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

// groupFlags splits flags into flagGroups' sections (in their order) and
// the connection section (every other flag, by name).
func groupFlags(flags *pflag.FlagSet) []titledFlags {
	out := make([]titledFlags, 0, len(flagGroups)+1)
	placed := map[string]bool{}
	for _, g := range flagGroups {
		set := pflag.NewFlagSet(g.title, pflag.ContinueOnError)
		set.SortFlags = false
		for _, n := range g.names {
			if f := flags.Lookup(n); f != nil {
				set.AddFlag(f)
				placed[n] = true
			}
		}
		out = append(out, titledFlags{g.title, set})
	}
	var rest []*pflag.Flag
	flags.VisitAll(func(f *pflag.Flag) {
		if !placed[f.Name] {
			rest = append(rest, f)
		}
	})
	slices.SortFunc(rest, func(a, b *pflag.Flag) int { return strings.Compare(a.Name, b.Name) })
	set := pflag.NewFlagSet(connectionGroup, pflag.ContinueOnError)
	set.SortFlags = false
	for _, f := range rest {
		set.AddFlag(f)
	}
	return append(out, titledFlags{connectionGroup, set})
}
