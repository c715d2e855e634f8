package chart

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	tparse "text/template/parse"

	"github.com/gobwas/glob"
	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// withoutUnreadFiles returns c with the chart files no template can read
// left out, when that cannot change the rendering; withCRDs keeps each
// chart's crds/ directory too (Argo CD's `helm template` prints it, Helm's
// client-only install does not read it: a crds/ file is otherwise kept only
// when a template reads it). c is not modified (Helm's install writes into the chart it
// renders: it drops disabled subcharts and renames aliased ones), so one
// loaded chart renders alike however often: the result is a copy of the
// chart tree, metadata included, sharing templates, values and file
// contents.
//
// Why: Helm's engine puts every chart's files (README, CI values, test
// files: about 490 KB over chart 0.30.0 and its subcharts) into each
// template's root context, under .Files and .Subcharts.<name>.Files, and
// the gitops-runtime chart copies that context with sprig's deepCopy
// (github.com/mitchellh/copystructure, one reflective step and allocation
// per byte) in 37 of its templates. Rendering chart 0.30.0 costs about
// 4.4 CPU seconds and 1.5 GB of allocations with every file, 0.65 s and
// 230 MB with the files its templates read (BenchmarkRender; 0.8 s with
// sealed-secrets' 6.6 KB crds/ file too, copied byte by byte); the rendered
// documents are those of `helm template` (end-to-end test, over the chart's
// own CI values files).
//
// A chart's files can only be read through .Files (Get, GetBytes, Lines,
// Glob, AsConfig, AsSecrets) or by naming the key "Files" (index, get,
// pluck), from the chart's own templates or an ancestor's (.Subcharts
// reaches the context of every subchart, never of a parent), or from a
// values string passed to tpl. So a chart keeps the files its own templates
// name as string literals to .Files.Get, GetBytes, Lines or Glob (matched as
// Helm's files.Glob matches, github.com/gobwas/glob), and every file when a template reads them any other way
// (chartFileReads), when an ancestor's template mentions Files, or when a
// values string of the tree or of the user mentions Files.
func withoutUnreadFiles(c *helmchart.Chart, userValues map[string]any, withCRDs bool) *helmchart.Chart {
	return pruneTree(c, valuesMention(userValues) || valuesMentionInTree(c), withCRDs)
}

// pruneFiles copies c's tree leaving out the files of each chart that
// neither its own templates nor an ancestor's can read (its crds/ directory
// included); keepAll keeps them all (and those of its subcharts).
func pruneFiles(c *helmchart.Chart, keepAll bool) *helmchart.Chart {
	return pruneTree(c, keepAll, false)
}

// pruneTree is pruneFiles; withCRDs keeps every chart's crds/ files.
func pruneTree(c *helmchart.Chart, keepAll, withCRDs bool) *helmchart.Chart {
	var r fileReads
	if keepAll {
		r.all = true
	} else {
		r = chartFileReads(c)
	}
	cp := *c
	// Helm's dependency processing writes into the chart's metadata (an
	// aliased dependency's name becomes its alias): the copy gets its own.
	if c.Metadata != nil {
		md := *c.Metadata
		md.Dependencies = make([]*helmchart.Dependency, len(c.Metadata.Dependencies))
		for i, d := range c.Metadata.Dependencies {
			if d != nil {
				dc := *d
				md.Dependencies[i] = &dc
			}
		}
		cp.Metadata = &md
	}
	if !r.all {
		cp.Files = nil
		for _, f := range c.Files {
			if withCRDs && strings.HasPrefix(f.Name, "crds/") || r.reads(f.Name) {
				cp.Files = append(cp.Files, f)
			}
		}
	}
	deps := c.Dependencies()
	pruned := make([]*helmchart.Chart, len(deps))
	for i, d := range deps {
		pruned[i] = pruneTree(d, r.all, withCRDs)
	}
	cp.SetDependencies(pruned...)
	return &cp
}

// fileReads is what a chart's templates can read of its files: all of them
// (and of its subcharts'), or the names and glob patterns they pass as
// string literals to .Files.Get, GetBytes, Lines and Glob.
type fileReads struct {
	all      bool
	names    map[string]bool
	patterns []glob.Glob
}

func (r fileReads) reads(name string) bool {
	if r.all || r.names[name] {
		return true
	}
	for _, g := range r.patterns {
		if g.Match(name) {
			return true
		}
	}
	return false
}

// chartFileReads analyses c's own templates. Anything but a literal
// argument (or a variable ranging over a literal .Files.Glob) to one of
// those methods, on the chart's own .Files or $.Files, counts as reading
// every file: .Files passed on, .Files.AsConfig, a computed name, another
// variable's .Files, .Subcharts.<name>.Files, the string "Files", a
// template that does not parse.
func chartFileReads(c *helmchart.Chart) fileReads {
	r := fileReads{names: map[string]bool{}}
	for _, t := range c.Templates {
		if t == nil || !strings.Contains(string(t.Data), "Files") {
			continue
		}
		if !templateFileReads(t.Name, string(t.Data), &r) {
			return fileReads{all: true}
		}
	}
	return r
}

// templateFileReads adds one template's literal reads to r; false means it
// may read any file.
func templateFileReads(name, text string, r *fileReads) bool {
	t := tparse.New(name)
	t.Mode = tparse.SkipFuncCheck
	trees := map[string]*tparse.Tree{}
	if _, err := t.Parse(text, "", "", trees); err != nil {
		return false
	}
	a := &readAnalysis{r: r, globVars: map[string]bool{}, otherVars: map[string]bool{}, argVars: map[string]bool{}}
	for _, tr := range trees {
		if tr.Root != nil {
			a.walk(tr.Root)
		}
	}
	for v := range a.argVars {
		if !a.globVars[v] || a.otherVars[v] {
			a.any = true
		}
	}
	return !a.any
}

type readAnalysis struct {
	r         *fileReads
	any       bool
	globVars  map[string]bool // declared by range over .Files.Glob "literal"
	otherVars map[string]bool // declared or assigned anywhere else
	argVars   map[string]bool // passed to a read method
}

// ownFilesMethod returns M for the idents of .Files.M or $.Files.M; ok is
// false for any other use of Files.
func ownFilesMethod(idents []string) (string, bool) {
	if len(idents) > 0 && idents[0] == "$" {
		idents = idents[1:]
	}
	if len(idents) == 2 && idents[0] == "Files" {
		switch idents[1] {
		case "Get", "GetBytes", "Lines", "Glob":
			return idents[1], true
		}
	}
	return "", false
}

func hasFiles(idents []string) bool {
	for _, id := range idents {
		if id == "Files" {
			return true
		}
	}
	return false
}

func (a *readAnalysis) walk(n tparse.Node) {
	switch n := n.(type) {
	case *tparse.ListNode:
		if n == nil {
			return
		}
		for _, x := range n.Nodes {
			a.walk(x)
		}
	case *tparse.ActionNode:
		a.walkPipe(n.Pipe, false)
	case *tparse.IfNode:
		a.walkBranch(&n.BranchNode, false)
	case *tparse.WithNode:
		a.walkBranch(&n.BranchNode, false)
	case *tparse.RangeNode:
		a.walkBranch(&n.BranchNode, true)
	case *tparse.TemplateNode:
		a.walkPipe(n.Pipe, false)
	}
}

// walkBranch analyses an if, with or range (isRange) and its lists.
func (a *readAnalysis) walkBranch(b *tparse.BranchNode, isRange bool) {
	a.walkPipe(b.Pipe, isRange)
	a.walk(b.List)
	a.walk(b.ElseList)
}

// walkPipe analyses a pipeline; isRange says it is a range's.
func (a *readAnalysis) walkPipe(p *tparse.PipeNode, isRange bool) {
	if p == nil {
		return
	}
	globRange := false
	if isRange && len(p.Cmds) == 1 && len(p.Cmds[0].Args) == 2 {
		if f, ok := identsOf(p.Cmds[0].Args[0]); ok {
			if m, own := ownFilesMethod(f); own && m == "Glob" {
				_, globRange = p.Cmds[0].Args[1].(*tparse.StringNode)
			}
		}
	}
	for _, v := range p.Decl {
		if globRange && len(v.Ident) == 1 {
			a.globVars[v.Ident[0]] = true
		} else {
			a.otherVars[v.Ident[0]] = true
		}
	}
	for _, c := range p.Cmds {
		a.walkCommand(c)
	}
}

func identsOf(n tparse.Node) ([]string, bool) {
	switch n := n.(type) {
	case *tparse.FieldNode:
		return n.Ident, true
	case *tparse.VariableNode:
		return n.Ident, true
	}
	return nil, false
}

func (a *readAnalysis) walkCommand(c *tparse.CommandNode) {
	for i, arg := range c.Args {
		switch n := arg.(type) {
		case *tparse.FieldNode, *tparse.VariableNode:
			idents, _ := identsOf(n)
			if !hasFiles(idents) {
				continue
			}
			m, own := ownFilesMethod(idents)
			if !own || i+1 >= len(c.Args) {
				a.any = true
				continue
			}
			switch lit := c.Args[i+1].(type) {
			case *tparse.StringNode:
				if m == "Glob" {
					g, err := glob.Compile(lit.Text, '/') // as Helm's files.Glob
					if err != nil {
						a.any = true // Helm then globs "**"
						continue
					}
					a.r.patterns = append(a.r.patterns, g)
				} else {
					a.r.names[lit.Text] = true
				}
			case *tparse.VariableNode:
				if len(lit.Ident) != 1 {
					a.any = true
					continue
				}
				a.argVars[lit.Ident[0]] = true
			default:
				a.any = true
			}
		case *tparse.ChainNode:
			if hasFiles(n.Field) {
				a.any = true
			}
			if p, ok := n.Node.(*tparse.PipeNode); ok {
				a.walkPipe(p, false)
			}
		case *tparse.PipeNode:
			a.walkPipe(n, false)
		case *tparse.StringNode:
			if filesWord.MatchString(n.Text) {
				a.any = true
			}
		}
	}
}

// valuesMentionInTree reports whether the default values of a chart of the
// tree mention Files (a string a template may pass to tpl).
func valuesMentionInTree(c *helmchart.Chart) bool {
	if valuesMention(c.Values) {
		return true
	}
	for _, d := range c.Dependencies() {
		if valuesMentionInTree(d) {
			return true
		}
	}
	return false
}

var filesWord = regexp.MustCompile(`\bFiles\b`)

// valuesMention reports whether any string (key or value) in v mentions
// Files: a values string rendered with tpl could read a chart file.
func valuesMention(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if filesWord.MatchString(k) || valuesMention(x) {
				return true
			}
		}
	case []any:
		for _, x := range t {
			if valuesMention(x) {
				return true
			}
		}
	case string:
		return filesWord.MatchString(t)
	}
	return false
}

// CopyWithoutUnreadFiles copies the chart directory src (its subcharts
// included) to dst byte for byte, leaving out each chart's files that
// withoutUnreadFiles leaves out of a render: those no template of the chart
// or of an ancestor can read. Every crds/ file and .helmignore stay (Helm
// installs the first; the second keeps what it ignores ignored), and a
// subchart kept as an archive is copied whole. Helm renders the copy as it
// renders src, at a fraction of the CPU: `helm template` of chart 0.30.0
// takes about 4.7 CPU seconds, three quarters of them in sprig's deepCopy
// of the README files (end-to-end test TestHelmRendersTheTrimmedCharts).
//
// Errors: a chart that Helm's loader cannot load, and the file system's.
func CopyWithoutUnreadFiles(src, dst string) error {
	c, err := loader.LoadDir(src)
	if err != nil {
		return err
	}
	return copyChartDir(src, dst, valuesMentionInTree(c), c)
}

// copyChartDir copies one chart directory; c is that chart as loaded, and
// keepAll keeps every file of it and of its subcharts.
func copyChartDir(src, dst string, keepAll bool, c *helmchart.Chart) error {
	r := fileReads{all: true}
	if !keepAll {
		r = chartFileReads(c)
	}
	drop := map[string]bool{}
	for _, f := range c.Files {
		if !r.reads(f.Name) && !strings.HasPrefix(f.Name, "crds/") && f.Name != ".helmignore" {
			drop[f.Name] = true
		}
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if parent, name := filepath.Split(rel); d.IsDir() && filepath.Clean(parent) == "charts" {
			sub, err := loader.LoadDir(p)
			if err != nil {
				return fmt.Errorf("subchart %s: %w", name, err)
			}
			if err := copyChartDir(p, out, r.all, sub); err != nil {
				return err
			}
			return fs.SkipDir
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		case drop[filepath.ToSlash(rel)]:
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: not a regular file", p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
}
