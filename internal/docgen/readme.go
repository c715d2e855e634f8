package docgen

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/mdblock"
)

// The tables of the README and of the pages under docs/ are generated
// between the markers of internal/mdblock whose target is docs (the way stern's hack/update-readme writes its flag table):
//
//	<!-- BEGIN GENERATED checks: mode=pre category=cluster,tools,inputs (make docs) -->
//	<!-- BEGIN GENERATED flags: values,set,access-mode (make docs) -->
//	<!-- BEGIN GENERATED flags: rest (make docs) -->
//
// A checks block lists, in catalogue order, the checks that run in that mode
// (pre or post) and are of one of those categories (any category when
// omitted). A flags block lists the named flags in that order; "rest" lists
// every other visible flag of the command in cobra's order, with the
// kubectl connection flags (cli-runtime's ConfigFlags) folded into one row
// unless their help text was rewritten by the plugin. Blocks of other
// targets (make bench's) are left as they are.

// EndMarker closes a generated block.
const EndMarker = mdblock.EndMarker

// Page is a Markdown file with generated blocks: its path from the
// repository root (links to docs/checks.md are written relative to it) and
// its content.
type Page struct {
	Path string
	Data []byte
}

// Readme returns readme (README.md) with every generated block rewritten
// from list and flags: Pages of that one page.
func Readme(readme []byte, list []checks.Check, flags *pflag.FlagSet) ([]byte, error) {
	out, err := Pages([]Page{{Path: "README.md", Data: readme}}, list, flags)
	if err != nil {
		return nil, err
	}
	return out[0].Data, nil
}

// pageBlocks is a page's lines and its generated blocks of target docs.
type pageBlocks struct {
	lines  []string
	blocks []mdblock.Block
}

// Pages returns pages with every generated block rewritten from list (the
// check registry) and flags (the root command's flags), the pages taken
// together: every registered check must be in a checks block of one of
// them, the flags "rest" block in one, and a flag named by a block is in no
// "rest" table. It fails, naming each problem and its page, on an unclosed
// or malformed marker, an unknown flag, a registered check that is in no
// checks block, or no "rest" block.
func Pages(pages []Page, list []checks.Check, flags *pflag.FlagSet) ([]Page, error) {
	var errs []error
	parsed := make([]pageBlocks, len(pages))
	named := map[string]bool{} // flags named by a block; "rest" takes the others
	for i, pg := range pages {
		lines := mdblock.Lines(string(pg.Data))
		all, err := mdblock.Parse(pg.Path, lines)
		if err != nil {
			errs = append(errs, err)
		}
		parsed[i].lines = lines
		for _, b := range all {
			if b.Target != "docs" {
				continue
			}
			if b.Kind != "checks" && b.Kind != "flags" {
				errs = append(errs, fmt.Errorf("%s line %d: make docs writes checks and flags blocks, not %q", pg.Path, b.Begin+1, b.Kind))
				continue
			}
			parsed[i].blocks = append(parsed[i].blocks, b)
			if b.Kind == "flags" && b.Args != "rest" {
				for _, n := range strings.Split(b.Args, ",") {
					named[strings.TrimSpace(n)] = true
				}
			}
		}
	}
	listed := map[string]bool{}
	restSeen := false
	out := make([]Page, len(pages))
	for i, pg := range pages {
		checksDoc, err := filepath.Rel(filepath.Dir(pg.Path), "docs/checks.md")
		if err != nil {
			return nil, err
		}
		bodies := make([]string, len(parsed[i].blocks))
		for j, b := range parsed[i].blocks {
			var body string
			var err error
			switch {
			case b.Kind == "checks":
				body, err = checksTable(b.Args, list, listed, filepath.ToSlash(checksDoc))
			case b.Args == "rest":
				restSeen = true
				body = flagsTable(restFlags(flags, named))
			default:
				var fs []*pflag.Flag
				for _, n := range strings.Split(b.Args, ",") {
					f := flags.Lookup(strings.TrimSpace(n))
					if f == nil {
						err = errors.Join(err, fmt.Errorf("%s line %d: no flag --%s", pg.Path, b.Begin+1, strings.TrimSpace(n)))
						continue
					}
					fs = append(fs, f)
				}
				body = flagsTable(fs)
			}
			if err != nil {
				errs = append(errs, err)
			}
			bodies[j] = body
		}
		out[i] = Page{Path: pg.Path, Data: []byte(strings.Join(mdblock.Rewrite(parsed[i].lines, parsed[i].blocks, bodies), "\n"))}
	}
	for _, c := range list {
		if !listed[c.ID] {
			errs = append(errs, fmt.Errorf("check %s is in no table of the README or docs/: add its category to a %q marker", c.ID, mdblock.Marker("checks", "...", "docs")))
		}
	}
	if !restSeen {
		errs = append(errs, errors.New("no page has a "+mdblock.Marker("flags", "rest", "docs")+" block"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// checksTable renders the checks selected by args ("mode=pre category=a,b"),
// each linked to its section of checksDoc (docs/checks.md, relative to the
// page).
func checksTable(args string, list []checks.Check, listed map[string]bool, checksDoc string) (string, error) {
	mode := checks.ModePre | checks.ModePost | checks.ModeUpgrade
	var cats []string
	for _, kv := range strings.Fields(args) {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "mode" && v == "pre":
			mode = checks.ModePre
		case k == "mode" && v == "post":
			mode = checks.ModePost
		case k == "mode" && v == "upgrade":
			mode = checks.ModeUpgrade
		case k == "category":
			cats = strings.Split(v, ",")
		default:
			return "", fmt.Errorf("checks marker: unknown argument %q (mode=pre|post|upgrade, category=a,b)", kv)
		}
	}
	var b strings.Builder
	b.WriteString("| check | passes when | runs | on failure (impact; how to fix: the check's page) |\n|---|---|---|---|\n")
	for _, c := range list {
		if !c.Modes.Has(mode) || (cats != nil && !slices.Contains(cats, string(c.Category))) {
			continue
		}
		listed[c.ID] = true
		fmt.Fprintf(&b, "| [`%s`](%s#%s) | %s | %s | %s |\n", c.ID, checksDoc, c.ID, cell(strings.TrimSuffix(c.Title, ".")), applies(c.Meta, mode), onFailure(c.Meta))
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// applies says when a check runs, from its Meta.Applies (after the install,
// the access mode is the installed runtime's: the check decides).
func applies(m checks.Meta, mode checks.Mode) string {
	var parts []string
	if len(m.Applies.Access) > 0 && mode.Has(checks.ModePre) {
		modes := make([]string, len(m.Applies.Access))
		for i, a := range m.Applies.Access {
			modes[i] = string(a)
		}
		parts = append(parts, "in "+strings.Join(modes, " or ")+" mode")
	}
	if m.Applies.ExistingArgoCD {
		parts = append(parts, "with `--existing-argocd`")
	}
	for _, n := range m.Applies.Needs {
		parts = append(parts, "with "+inputPhrase(n))
	}
	if len(parts) == 0 {
		return "always"
	}
	return strings.Join(parts, ", ")
}

// inputPhrase names a needed input for the tables.
func inputPhrase(n checks.Input) string {
	switch n {
	case checks.InputValues:
		return "values (`-f`, `--set`)"
	case checks.InputIngressHost:
		return "an ingress host"
	}
	return string(n)
}

// restFlags returns the visible flags not in named, in cobra's order, with
// the kubectl connection flags whose help is cli-runtime's folded away.
func restFlags(flags *pflag.FlagSet, named map[string]bool) []*pflag.Flag {
	stock := pflag.NewFlagSet("kubectl", pflag.ContinueOnError)
	genericclioptions.NewConfigFlags(true).AddFlags(stock)
	var out, kubectl []*pflag.Flag
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || named[f.Name] || f.Name == "help" {
			return
		}
		if s := stock.Lookup(f.Name); s != nil && s.Usage == f.Usage {
			kubectl = append(kubectl, f)
			return
		}
		out = append(out, f)
	})
	if len(kubectl) > 0 {
		names := make([]string, len(kubectl))
		for i, f := range kubectl {
			names[i] = "`--" + f.Name + "`"
		}
		out = append(out, &pflag.Flag{Name: "", Usage: "kubectl's connection flags, as `kubectl options` describes them: " + strings.Join(names, ", ")})
	}
	return out
}

// flagsTable renders fs as "| flag | default | meaning |".
func flagsTable(fs []*pflag.Flag) string {
	var b strings.Builder
	b.WriteString("| flag | default | meaning |\n|---|---|---|\n")
	for _, f := range fs {
		if f.Name == "" { // the folded kubectl row
			fmt.Fprintf(&b, "| kubectl flags | | %s |\n", cell(f.Usage))
			continue
		}
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + ", " + name
		}
		varname, usage := pflag.UnquoteUsage(f)
		if varname != "" && f.Value.Type() != "bool" {
			name += " " + varname
		}
		def := ""
		switch f.DefValue {
		case "", "false", "[]", "0", "0s":
		default:
			def = "`" + f.DefValue + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, cell(def), cell(usage))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// cell escapes a Markdown table cell: pipes (also inside code spans, which
// GitHub splits cells on) and newlines.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// CommandFlags returns the flags of the plugin's root command as a user with
// an empty environment sees them (no HELM_* variables: kubectl's defaults).
func CommandFlags() *pflag.FlagSet {
	cmd := cli.NewCommand(genericiooptions.IOStreams{}, cli.Host{Getenv: func(string) string { return "" }})
	return cmd.Flags()
}

// onFailure is the README's "on failure" cell: the status, what it means
// for the install (Meta.Impact) and whether --fix repairs it, e.g.
// "`fail` · install-fails · fixable with `--fix`".
func onFailure(m checks.Meta) string {
	s := strings.TrimPrefix(failsAs(m), "on failure: ")
	if !m.Fatal && m.Severity != checks.SeverityWarn {
		s += " · " + string(m.Impact)
	}
	return s + fixable(m)
}
