package plan

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/strvals"
)

// Source is where one value of the planned install came from, so that a
// finding caused by the value can point at the line to change: a values
// file given with -f (File as given, "-" for standard input; Line and Column
// 1-based, of the value's key, or of the item for a list item), a flag
// (Flag: "--set global.runtime.name=x", "--ingress-host"), or the chart's
// own Chart.yaml for its version. Path is the value's key in the values,
// dotted, list items as [i] ("global.runtime.ingress.hosts[0]"); "" for a
// chart version.
type Source struct {
	Path   string `json:"path,omitempty"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	Flag   string `json:"flag,omitempty"`
}

// Anchored reports whether s names a line of a file on disk (not standard
// input, not a flag): what an annotation of a pull request can point at.
func (s Source) Anchored() bool { return s.File != "" && s.File != "-" && s.Line > 0 }

// String is "values.yaml:12:5", "values.yaml:12", or the flag.
func (s Source) String() string {
	switch {
	case s.File != "" && s.Line > 0 && s.Column > 0:
		return s.File + ":" + strconv.Itoa(s.Line) + ":" + strconv.Itoa(s.Column)
	case s.File != "" && s.Line > 0:
		return s.File + ":" + strconv.Itoa(s.Line)
	case s.File != "":
		return s.File
	}
	return s.Flag
}

// Sources indexes the merged values by key path: for every key and list
// item of the values, where the value that won came from, in Helm's order
// (-f files in order, maps merged key by key and anything else replacing,
// then --set, --set-string and the shortcut flags). Positions are read
// with a YAML parser that keeps them (go.yaml.in/yaml/v3 nodes) from the
// same bytes Load parses. The zero value indexes nothing.
type Sources struct {
	m map[string]Source // by key, the path's segments joined by sep
}

// SourceEntry is one entry of the index: the key path's segments (a list
// item as "[i]") and its source. Entries (and NewSources) carry the index
// through a bundle.
type SourceEntry struct {
	Key    []string `json:"key"`
	Source Source   `json:"source"`
}

const sep = "\x00"

// NewSources rebuilds an index from its entries.
func NewSources(entries []SourceEntry) Sources {
	s := Sources{}
	for _, e := range entries {
		s.put(e.Key, e.Source)
	}
	return s
}

// Entries lists the index, sorted by path.
func (s Sources) Entries() []SourceEntry {
	out := make([]SourceEntry, 0, len(s.m))
	for k, src := range s.m {
		out = append(out, SourceEntry{Key: strings.Split(k, sep), Source: src})
	}
	slices.SortFunc(out, func(a, b SourceEntry) int { return slices.Compare(a.Key, b.Key) })
	return out
}

// Len is the number of indexed keys and list items.
func (s Sources) Len() int { return len(s.m) }

// Of returns where the value at path came from: path is dotted, list items
// as [i] ("global.runtime.ingress.hosts[0]"); false when no -f file or flag
// gave it (the chart's default applies).
func (s Sources) Of(path string) (Source, bool) {
	src, ok := s.m[strings.Join(splitSourcePath(path), sep)]
	return src, ok
}

// OfKey is Of for a key path given by its segments (a list item as "[i]"),
// for keys that hold dots themselves.
func (s Sources) OfKey(key []string) (Source, bool) {
	src, ok := s.m[strings.Join(key, sep)]
	return src, ok
}

// Shortcut reports whether the value came from one of the plugin's
// shortcut flags (--access-mode, --ingress-host, --ingress-class,
// --ingress-url, --existing-argocd, ...), which write keys the plugin
// chooses, rather than from a values file or a --set flag, whose keys are
// the user's.
func (s Source) Shortcut() bool {
	return s.File == "" && s.Flag != "" && !strings.HasPrefix(s.Flag, "--set")
}

// splitSourcePath splits "a.b[0].c" into a, b, [0], c.
func splitSourcePath(p string) []string {
	var out []string
	for _, part := range strings.Split(p, ".") {
		for {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				break
			}
			out = append(out, part[i:i+j+1])
			part = part[i+j+1:]
		}
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}

// pathString is the dotted form of key segments.
func pathString(key []string) string {
	var b strings.Builder
	for i, k := range key {
		if i > 0 && !strings.HasPrefix(k, "[") {
			b.WriteByte('.')
		}
		b.WriteString(k)
	}
	return b.String()
}

func (s *Sources) put(key []string, src Source) {
	if s.m == nil {
		s.m = map[string]Source{}
	}
	src.Path = pathString(key)
	s.m[strings.Join(key, sep)] = src
}

// putNew records src at key unless the key is indexed already: a --set
// that writes under a map or into a list item keeps the container's own
// source.
func (s *Sources) putNew(key []string, src Source) {
	if _, ok := s.m[strings.Join(key, sep)]; !ok {
		s.put(key, src)
	}
}

// replace records src at key and forgets everything under key: the value
// there replaced whatever was before.
func (s *Sources) replace(key []string, src Source) {
	prefix := strings.Join(key, sep) + sep
	for k := range s.m {
		if strings.HasPrefix(k, prefix) {
			delete(s.m, k)
		}
	}
	s.put(key, src)
}

// addFile indexes one values file's top-level mapping, merged over what is
// indexed as Helm merges the files (mergeMaps). A file whose YAML this
// parser cannot read adds nothing: Load has already accepted or refused
// it with Helm's parser.
func (s *Sources) addFile(name string, data []byte) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return
	}
	s.addMapping(name, nil, resolve(doc.Content[0]))
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// addMapping walks a mapping node at key: merge keys (<<) first, then the
// explicit keys over them, as YAML merges.
func (s *Sources) addMapping(file string, key []string, n *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Tag == "!!merge" || k.Value == "<<" {
			v := resolve(n.Content[i+1])
			if v != nil && v.Kind == yaml.SequenceNode {
				for _, m := range v.Content {
					s.addMapping(file, key, resolve(m))
				}
			} else {
				s.addMapping(file, key, v)
			}
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Tag == "!!merge" || k.Value == "<<" {
			continue
		}
		s.addNode(file, append(slices.Clip(key), k.Value), k.Line, k.Column, resolve(n.Content[i+1]))
	}
}

// addNode records one value at key (positioned at line, column): a map
// merges with what is there, anything else replaces it.
func (s *Sources) addNode(file string, key []string, line, col int, v *yaml.Node) {
	src := Source{File: file, Line: line, Column: col}
	if v != nil && v.Kind == yaml.MappingNode {
		s.put(key, src)
		s.addMapping(file, key, v)
		return
	}
	s.replace(key, src)
	if v != nil && v.Kind == yaml.SequenceNode {
		for i, item := range v.Content {
			item = resolve(item)
			s.addNode(file, append(slices.Clip(key), "["+strconv.Itoa(i)+"]"), item.Line, item.Column, item)
		}
	}
}

// addSet indexes one --set (or, with asString, --set-string) expression:
// every key it writes gets the flag as its source. The expression is
// parsed by Helm's strvals into an empty map to learn its keys; Load has
// already applied it to the values.
func (s *Sources) addSet(flag, expr string, asString bool) {
	tmp := map[string]any{}
	parse := strvals.ParseInto
	if asString {
		parse = strvals.ParseIntoString
	}
	if err := parse(expr, tmp); err != nil {
		return
	}
	s.addFlagValue(Source{Flag: flag + " " + expr}, nil, tmp)
}

// addFlagValue records src for every key of v under key: the scalars it
// writes replace what was there; the maps and lists that hold them keep
// their source when they had one. A list written by index (--set a[1]=x)
// leaves the items it does not name alone.
func (s *Sources) addFlagValue(src Source, key []string, v any) {
	switch t := v.(type) {
	case map[string]any:
		if len(key) > 0 {
			s.putNew(key, src)
		}
		for k, x := range t {
			s.addFlagValue(src, append(slices.Clip(key), k), x)
		}
	case []any:
		s.putNew(key, src)
		for i, x := range t {
			if x != nil {
				s.addFlagValue(src, append(slices.Clip(key), "["+strconv.Itoa(i)+"]"), x)
			}
		}
	default:
		s.replace(key, src)
	}
}

// addShortcuts indexes the keys ApplyShortcuts writes, each with the flag
// that wrote it.
func (s *Sources) addShortcuts(sc Shortcuts) {
	mode := sc.AccessMode
	modeFlag := "--access-mode " + mode
	if mode == "" {
		switch {
		case sc.IngressHost != "":
			mode, modeFlag = string(AccessIngress), "--ingress-host "+sc.IngressHost
		case sc.IngressURL != "":
			mode, modeFlag = string(AccessServiceMesh), "--ingress-url "+sc.IngressURL
		}
	}
	for _, expr := range shortcutSets(AccessMode(mode)) {
		tmp := map[string]any{}
		if err := strvals.ParseInto(expr, tmp); err == nil {
			s.addFlagValue(Source{Flag: modeFlag}, nil, tmp)
		}
	}
	put := func(flag string, v any, keys ...string) {
		s.addFlagValue(Source{Flag: flag}, keys, v)
	}
	if sc.IngressHost != "" {
		put("--ingress-host "+sc.IngressHost, []any{sc.IngressHost}, "global", "runtime", "ingress", "hosts")
	}
	if sc.IngressClass != "" {
		put("--ingress-class "+sc.IngressClass, sc.IngressClass, "global", "runtime", "ingress", "className")
	}
	if sc.IngressURL != "" {
		put("--ingress-url "+sc.IngressURL, sc.IngressURL, "global", "runtime", "ingressUrl")
	}
	if sc.ExistingArgoCD {
		put("--existing-argocd", false, "argo-cd", "enabled")
	}
	if sc.SkipIngressValidation {
		put("--skip-ingress-validation", true, "global", "runtime", "ingress", "skipValidation")
	}
}

// ChartVersionSourceOf is where the version of the chart chartRef (with
// --chart-version version) is written: the flag when given, else the
// Chart.yaml line of a local chart directory (ChartVersionSource); zero
// when neither.
func ChartVersionSourceOf(chartRef, version string) Source {
	switch {
	case version != "":
		return Source{Flag: "--chart-version " + version}
	case chartRef != "":
		src, _ := ChartVersionSource(chartRef)
		return src
	}
	return Source{}
}

// ChartVersionSource is where the version of a local chart directory is
// written: in its Chart.yaml, the version of the dependency named
// gitops-runtime when the chart is an umbrella chart that carries it
// (dependencies[].version), else the chart's own version. It returns false
// for a chart that is not a local directory, or a Chart.yaml that does not
// say.
func ChartVersionSource(chartDir string) (Source, bool) {
	if fi, err := os.Stat(chartDir); err != nil || !fi.IsDir() {
		return Source{}, false
	}
	file := filepath.Join(chartDir, "Chart.yaml")
	f, err := os.Open(file)
	if err != nil {
		return Source{}, false
	}
	defer f.Close()
	var doc yaml.Node
	if err := yaml.NewDecoder(io.LimitReader(f, MaxFileSize)).Decode(&doc); err != nil || len(doc.Content) == 0 {
		return Source{}, false
	}
	root := resolve(doc.Content[0])
	at := func(n *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil, nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i], resolve(n.Content[i+1])
			}
		}
		return nil, nil
	}
	if _, deps := at(root, "dependencies"); deps != nil && deps.Kind == yaml.SequenceNode {
		for _, d := range deps.Content {
			if _, name := at(resolve(d), "name"); name != nil && name.Value == RuntimeChartName {
				if k, _ := at(resolve(d), "version"); k != nil {
					return Source{File: file, Line: k.Line, Column: k.Column}, true
				}
			}
		}
	}
	if k, _ := at(root, "version"); k != nil {
		return Source{File: file, Line: k.Line, Column: k.Column}, true
	}
	return Source{}, false
}

// RuntimeChartName is the gitops-runtime chart's name (its Chart.yaml), as
// an umbrella chart names it among its dependencies.
const RuntimeChartName = "gitops-runtime"

// String renders the index one entry a line ("path<TAB>source"), for
// tests and debugging.
func (s Sources) String() string {
	var b strings.Builder
	for _, e := range s.Entries() {
		fmt.Fprintf(&b, "%s\t%s\n", e.Source.Path, e.Source)
	}
	return b.String()
}

// SourceIndex is every source of a plan: the values' index and where the
// runtime name and the chart version come from. A bundle records it, so
// that a replay (which reads the recorded values from a file of its own)
// anchors its findings where the live run did.
type SourceIndex struct {
	Values       []SourceEntry `json:"values"`
	RuntimeName  Source        `json:"runtimeName"`
	ChartVersion Source        `json:"chartVersion"`
}

// SourceIndex returns the plan's sources.
func (in Install) SourceIndex() SourceIndex {
	return SourceIndex{Values: in.Sources.Entries(), RuntimeName: in.RuntimeNameSource, ChartVersion: in.ChartVersionSource}
}

// WithSourceIndex returns in with its sources replaced by x's.
func (in Install) WithSourceIndex(x SourceIndex) Install {
	in.Sources = NewSources(x.Values)
	in.RuntimeNameSource, in.ChartVersionSource = x.RuntimeName, x.ChartVersion
	return in
}
