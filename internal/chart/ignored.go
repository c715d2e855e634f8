package chart

import (
	"context"
	"encoding/base64"
	"fmt"
	"path"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// Ignored is what the render says of the values the user gives a chart.
type Ignored struct {
	// Paths are the dotted paths of the user's values the chart ignores:
	// removing each leaves the rendered manifest unchanged, and its value
	// is not the chart's own default (which would leave it unchanged too).
	Paths []string
	// Renders is how many renders the decision took (the first included).
	Renders int
	// Undecided are the paths left undecided when MaxRenders ran out.
	Undecided []string
}

// MaxRenders bounds the renders of one IgnoredValues call.
const MaxRenders = 48

// IgnoredValues decides, by Helm's own render, which of the values vals
// the chart c ignores: a leaf of vals is ignored when the manifest c
// renders without it (as `helm install RELEASE -n NAMESPACE`, with the
// cluster's capabilities) is the manifest it renders with it. Hooks are
// left out of the comparison: the chart's helm-values-config hook copies
// every value. The chart's names for values are never guessed.
//
// Cost: one render with every value; one with each string value replaced
// by a marker, whose markers found in the manifest are read (one render
// settles most of a values file); the rest are removed by subtrees of the
// values, a subtree that changes the manifest split by its next key
// (group testing along the tree), the renders of one level run
// concurrently; at most MaxRenders in all. vals is not modified. A chart that does not render
// with vals returns the *RenderError.
func IgnoredValues(ctx context.Context, c *helmchart.Chart, releaseName, namespace string, vals map[string]any, caps Capabilities) (*Ignored, error) {
	return ignoredValues(ctx, c, releaseName, namespace, vals, caps, nil, nil)
}

// ignoredValues is IgnoredValues; base, when not nil, returns the manifest
// of the render with every value (counted among the renders: it was one),
// waited for only when a comparison needs it: a render under way elsewhere
// (the run's own, Start's; its error is that render's), so that the renders
// that do not compare against it (the one with markers, those of a part of
// the chart) run beside it and it is not done again. judge, when not nil,
// says which leaves of vals (by key path) are the user's to judge; the
// others are rendered with but never reported.
func ignoredValues(ctx context.Context, c *helmchart.Chart, releaseName, namespace string, vals map[string]any, caps Capabilities, base func() (string, error), judge func(key []string) bool) (*Ignored, error) {
	out := &Ignored{}
	var mu sync.Mutex
	// The files the templates cannot read are left out once; each render
	// gets its own copy of the tree (Helm's dependency processing writes
	// into it).
	pruned := withoutUnreadFiles(c, vals, false)
	renderChart := func(c *helmchart.Chart, v map[string]any) (string, error) {
		mu.Lock()
		out.Renders++
		mu.Unlock()
		rel, err := installRelease(ctx, pruneFiles(c, true), releaseName, namespace, v, caps)
		if err != nil {
			return "", err
		}
		return rel.Manifest, nil
	}
	render := func(v map[string]any) (string, error) { return renderChart(pruned, v) }
	// fullBase is the manifest of the whole chart with every value: the
	// caller's render, or one of its own, waited for (once) by the first
	// comparison that needs it.
	var (
		baseOnce sync.Once
		fullBase string
		baseErr  error
	)
	full := func() (string, error) {
		baseOnce.Do(func() {
			if base != nil {
				fullBase, baseErr = base()
				mu.Lock()
				out.Renders++
				mu.Unlock()
				return
			}
			fullBase, baseErr = render(vals)
		})
		return fullBase, baseErr
	}
	// A group of values under one key is judged on the part of the chart
	// tree that can see them (reduceFor), against that part's own base,
	// rendered once per part.
	type part struct {
		once sync.Once
		c    *helmchart.Chart
		base string
		err  error
	}
	parts := map[string]*part{}
	partFor := func(group [][]string) *part {
		c, key := reduceFor(pruned, group)
		if key == "" {
			// The whole chart: its render with every value is fullBase.
			return &part{c: pruned, base: fullBase}
		}
		mu.Lock()
		p, ok := parts[key]
		if !ok {
			p = &part{c: c}
			parts[key] = p
		}
		mu.Unlock()
		p.once.Do(func() { p.base, p.err = renderChart(p.c, vals) })
		return p
	}
	if base == nil {
		// Without a caller's render, a chart that does not render with
		// vals is said before anything else is tried.
		if _, err := full(); err != nil {
			return nil, err
		}
	}
	defaults, err := chartutil.CoalesceValues(c, map[string]any{})
	if err != nil {
		return nil, fmt.Errorf("chart defaults: %w", err)
	}
	var cands [][]string
	for _, p := range leafPaths(vals) {
		if judge != nil && !judge(p) {
			continue
		}
		v, _ := lookup(vals, p)
		if d, ok := lookup(defaults, p); ok && reflect.DeepEqual(d, v) {
			continue // the chart's own default: removing it changes nothing, yet it is read
		}
		cands = append(cands, p)
	}
	if len(cands) == 0 {
		return out, nil
	}

	// Markers: a string value, or a list of them, whose marker shows in
	// the manifest is read.
	marked := copyValues(vals)
	markers := map[int][]string{}
	for i, p := range cands {
		v, _ := lookup(vals, p)
		switch t := v.(type) {
		case string:
			m := fmt.Sprintf("gpfmark%dx", i)
			markers[i] = []string{m}
			set(marked, p, m)
		case []any:
			l, _ := lookup(marked, p)
			ml, _ := l.([]any)
			for j, x := range t {
				if isString(x) && j < len(ml) {
					m := fmt.Sprintf("gpfmark%dx%dx", i, j)
					markers[i] = append(markers[i], m)
					ml[j] = m
				}
			}
		}
	}
	if len(markers) > 0 {
		// Through Helm's engine alone (renderFiles): only the text counts.
		mu.Lock()
		out.Renders++
		mu.Unlock()
		files, err := renderFiles(ctx, pruneFiles(pruned, true), releaseName, namespace, marked, caps)
		var shown map[int]bool
		if err == nil {
			shown, err = markersShown(files, markers)
		}
		if err == nil {
			var rest [][]string
			for i, p := range cands {
				if !shown[i] {
					rest = append(rest, p)
				}
			}
			cands = rest
		} else if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if len(cands) > 0 {
		// The comparisons below need the whole chart's render.
		if _, err := full(); err != nil {
			return nil, err
		}
	}

	// Group testing along the values tree: a subtree whose removal leaves
	// the manifest unchanged is ignored whole; one that changes it is
	// split by its next key. Groups of one level are rendered at once.
	// At most a few renders at once (each is CPU-bound); goroutines wait
	// for a slot, never the group (a test starts the tests below it).
	slots := make(chan struct{}, max(1, min(runtime.GOMAXPROCS(0), 4)))
	var wg sync.WaitGroup
	var firstErr error
	var descend func(group [][]string, depth int)
	test := func(group [][]string, depth int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			mu.Lock()
			over := out.Renders >= MaxRenders || firstErr != nil
			if over {
				out.Undecided = append(out.Undecided, joined(group)...)
			}
			mu.Unlock()
			if over {
				<-slots
				return
			}
			without := copyValues(vals)
			for _, p := range group {
				remove(without, p)
			}
			pt := partFor(group)
			base, c := pt.base, pt.c
			if pt.err != nil {
				// The part does not render alone: the whole chart decides.
				base, c = fullBase, pruned
			}
			m, err := renderChart(c, without)
			<-slots
			if err != nil && ctx.Err() != nil {
				mu.Lock()
				firstErr = ctx.Err()
				mu.Unlock()
				return
			}
			if err == nil && m == base {
				mu.Lock()
				out.Paths = append(out.Paths, joined(group)...)
				mu.Unlock()
				return
			}
			// Read (or needed: the chart does not render without it):
			// a single value is decided, a group is split.
			if len(group) > 1 {
				descend(group, depth+1)
			}
		}()
	}
	descend = func(group [][]string, depth int) {
		longest := 0
		for _, p := range group {
			longest = max(longest, len(p))
		}
		for ; len(group) > 1 && depth < longest; depth++ {
			if parts := partition(group, depth); len(parts) > 1 {
				for _, p := range parts {
					test(p, depth)
				}
				return
			}
			// One key shared at this level: split further down.
		}
		for _, p := range group {
			test([][]string{p}, depth)
		}
	}
	descend(cands, 0)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	sort.Strings(out.Paths)
	sort.Strings(out.Undecided)
	return out, nil
}

// anyMarkerShows reports whether any of the markers shows in m.
func anyMarkerShows(m string, markers []string) bool {
	for _, mk := range markers {
		if markerShows(m, mk) {
			return true
		}
	}
	return false
}

// markerShows reports whether marker mk shows in the manifest m as it is
// or encoded by the chart's b64enc, as a Secret's data holds a value (the
// chart's user token, say): either way the chart reads the value.
func markerShows(m, mk string) bool {
	return strings.Contains(m, mk) || strings.Contains(m, strings.TrimRight(base64.StdEncoding.EncodeToString([]byte(mk)), "="))
}

// partition groups dotted paths (distinct, sorted) by their key at depth;
// a path with no key there is a group of its own.
func partition(paths [][]string, depth int) [][][]string {
	var out [][][]string
	idx := map[string]int{}
	for _, p := range paths {
		// Keys are joined with a byte no YAML key holds.
		k := strings.Join(p[:min(depth+1, len(p))], "\x00")
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], p)
	}
	return out
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// lookup returns the value at a dotted path of nested maps.
func lookup(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, k := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// set sets the value at a dotted path that exists.
func set(m map[string]any, keys []string, v any) {
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	m[keys[len(keys)-1]] = v
}

// remove deletes the value at a dotted path; a map it empties goes too.
func remove(m map[string]any, keys []string) {
	var walk func(m map[string]any, keys []string) bool
	walk = func(m map[string]any, keys []string) bool {
		if len(keys) == 1 {
			delete(m, keys[0])
			return len(m) == 0
		}
		next, ok := m[keys[0]].(map[string]any)
		if !ok {
			return false
		}
		if walk(next, keys[1:]) {
			delete(m, keys[0])
		}
		return len(m) == 0
	}
	walk(m, keys)
}

// IgnoredValues decides which of the values the upgrade gives the target
// chart it ignores (the package function IgnoredValues), rendered as the
// upgrade renders: for helm upgrade, the new revision's user values
// (Values); for an Argo CD sync, the umbrella chart's own values (the
// runtime's values, in the Shared Configuration Repository) with the
// Application's helm values over them, the paths as the umbrella holds
// them ("gitops-runtime.global.imageRegistry").
func (u *Upgrade) IgnoredValues(ctx context.Context) (*Ignored, error) {
	c, name, ns, vals := u.Chart, u.Last.Name, u.Last.Namespace, u.Values
	if u.Sync != nil {
		// The umbrella's values.yaml is the user's: judge it with the rest,
		// as values over a copy of the chart that has none of its own.
		cp := *u.Chart
		cp.Values = map[string]any{}
		c, name, ns = &cp, u.Sync.ReleaseName, u.Sync.Namespace
		vals = chartutil.CoalesceTables(copyValues(u.Values), copyValues(u.Chart.Values))
	}
	// The target rendered already (as the upgrade renders it): the render
	// with every value, as an install, is done only when a comparison
	// needs it, not when the markers settle every value.
	return ignoredValues(ctx, c, name, ns, vals, u.caps, func() (string, error) {
		rel, err := installRelease(ctx, pruneFiles(withoutUnreadFiles(c, vals, false), true), name, ns, vals, u.caps)
		if err != nil {
			return "", err
		}
		return rel.Manifest, nil
	}, nil)
}

// reduceFor returns the part of chart c whose output can change with the
// values of group (dotted paths sharing their keys down the chart tree),
// and a key naming that part: under a dependency's name or alias, the
// other dependencies keep their values and named templates (_*.tpl) but
// render nothing (a subchart sees its own values and the globals, nothing
// of its siblings'); under a chart's own key, every dependency renders
// nothing (none sees it); under "global" or "tags" everything renders.
func reduceFor(c *helmchart.Chart, group [][]string) (*helmchart.Chart, string) {
	if len(group) == 0 {
		return c, ""
	}
	keys := group[0]
	for _, ks := range group[1:] {
		n := 0
		for n < len(keys) && n < len(ks) && keys[n] == ks[n] {
			n++
		}
		keys = keys[:n]
	}
	var walk func(c *helmchart.Chart, keys []string, key string) (*helmchart.Chart, string)
	walk = func(c *helmchart.Chart, keys []string, key string) (*helmchart.Chart, string) {
		if len(keys) == 0 || keys[0] == "global" || keys[0] == "tags" {
			// Globals reach every subchart; tags enable them.
			return c, key
		}
		name := ""
		for _, d := range c.Metadata.Dependencies {
			if d != nil && (d.Alias == keys[0] || d.Alias == "" && d.Name == keys[0]) {
				name = d.Name
			}
		}
		cp := *c
		deps := c.Dependencies()
		out := make([]*helmchart.Chart, len(deps))
		sub := key + "/" + keys[0]
		if name == "" {
			sub += "(own)"
		}
		for i, d := range deps {
			if d.Metadata != nil && d.Metadata.Name == name {
				out[i], sub = walk(d, keys[1:], sub)
			} else {
				out[i] = silenced(d)
			}
		}
		cp.SetDependencies(out...)
		return &cp, sub
	}
	return walk(c, keys, "")
}

// silenced is a copy of c and its dependencies that renders nothing: only
// the named templates (_*.tpl) are kept, which other charts may include.
func silenced(c *helmchart.Chart) *helmchart.Chart {
	cp := *c
	cp.Templates = nil
	for _, t := range c.Templates {
		if strings.HasPrefix(path.Base(t.Name), "_") {
			cp.Templates = append(cp.Templates, t)
		}
	}
	deps := c.Dependencies()
	out := make([]*helmchart.Chart, len(deps))
	for i, d := range deps {
		out[i] = silenced(d)
	}
	cp.SetDependencies(out...)
	return &cp
}

// leafPaths returns the key paths of the leaves of v (an empty map counts
// as a leaf), sorted as their dotted forms.
func leafPaths(v map[string]any) [][]string {
	var out [][]string
	var walk func(prefix []string, m map[string]any)
	walk = func(prefix []string, m map[string]any) {
		for k, x := range m {
			p := append(append([]string(nil), prefix...), k)
			if sub, ok := x.(map[string]any); ok && len(sub) > 0 {
				walk(p, sub)
				continue
			}
			out = append(out, p)
		}
	}
	walk(nil, v)
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], ".") < strings.Join(out[j], ".") })
	return out
}

// joined returns the dotted form of each path.
func joined(paths [][]string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = strings.Join(p, ".")
	}
	return out
}
