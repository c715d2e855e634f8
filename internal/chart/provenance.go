package chart

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chartutil"
)

// ImageKey is a values key that produces all or part of an image
// reference, and its value: the key's path, one element per map key
// ("app-proxy", "image", "repository") or list index ("[0]").
type ImageKey struct {
	Path  []string
	Value string
}

// SetPath is the key as `helm --set` takes it: the path's elements joined
// by dots, a dot or comma inside an element escaped with a backslash, an
// index of a list ("[0]") written after its list's key ("a.b[0].c").
func (k ImageKey) SetPath() string {
	var b strings.Builder
	for i, p := range k.Path {
		if _, ok := listIndex(p); ok {
			b.WriteString(p)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		p = strings.ReplaceAll(p, `\`, `\\`)
		p = strings.ReplaceAll(p, ".", `\.`)
		b.WriteString(strings.ReplaceAll(p, ",", `\,`))
	}
	return b.String()
}

// InList reports whether the key is inside a list of the values. Helm
// replaces a list as a whole (values files and --set alike: --set a[0].b=x
// makes the list [{b: x}]), so such a key is set by copying its list,
// changed, into a values file (ListPath names it).
func (k ImageKey) InList() bool { return k.ListPath() != "" }

// ListPath is the SetPath of the outermost list the key is inside, "" for
// a key outside lists.
func (k ImageKey) ListPath() string {
	for i, p := range k.Path {
		if _, ok := listIndex(p); ok {
			return ImageKey{Path: k.Path[:i]}.SetPath()
		}
	}
	return ""
}

// listIndex reads a path element that indexes a list ("[3]").
func listIndex(p string) (int, bool) {
	if len(p) < 3 || p[0] != '[' || p[len(p)-1] != ']' {
		return 0, false
	}
	n, err := strconv.Atoi(p[1 : len(p)-1])
	return n, err == nil && n >= 0
}

// SetFlag is `--set PATH=VALUE` for the key (commas in the value
// escaped). For a key inside a list (InList) the flag would replace the
// list: say ListPath instead.
func (k ImageKey) SetFlag() string {
	return "--set " + k.SetPath() + "=" + strings.ReplaceAll(k.Value, ",", `\,`)
}

// markerPattern matches the markers a provenance render appends to values.
var markerPattern = regexp.MustCompile(`\+?pfm\d+x`)

func marker(i int) string { return "pfm" + strconv.Itoa(i) + "x" }

// marked returns v with marker i appended so that the value keeps its shape:
// as semver build metadata for a version ("v3.7.2+pfm3x": every semver
// comparison a template makes is unchanged), else as a suffix.
func marked(v string, i int) string {
	if _, err := semver.NewVersion(v); err == nil && !strings.Contains(v, "+") {
		return v + "+" + marker(i)
	}
	return v + marker(i)
}

// errNotRendered is returned by the provenance calls of a run whose chart
// did not render.
var errNotRendered = errors.New("the chart did not render")

// userValues returns the run's user values and the effective values (the
// chart's defaults coalesced with them, as the templates see them).
func (p *Pending) userValues(ctx context.Context) (user, effective map[string]any, err error) {
	if _, err := p.Wait(ctx); err != nil {
		return nil, nil, err
	}
	if p.chart == nil {
		return nil, nil, errNotRendered
	}
	// The values as the templates see them: dependencies enabled and
	// aliased as Helm's install processes them (a copy of the chart: Helm
	// writes into the one it processes), then coalesced.
	c := pruneFiles(p.chart, true)
	if err := chartutil.ProcessDependenciesWithMerge(c, copyValues(p.vals)); err != nil {
		return nil, nil, fmt.Errorf("chart dependencies: %w", err)
	}
	effective, err = chartutil.CoalesceValues(c, copyValues(p.vals))
	if err != nil {
		return nil, nil, fmt.Errorf("effective values: %w", err)
	}
	return p.vals, effective, nil
}

// Rerender renders the run's chart again, as the run rendered it (release,
// namespace, capabilities), with the run's user values and set over them;
// it is how a check asks Helm what a change of values does.
func (p *Pending) Rerender(ctx context.Context, set []ImageKey) (*Rendering, error) {
	s := make([]setting, len(set))
	for i, k := range set {
		s[i] = setting{path: k.Path, value: k.Value}
	}
	return p.renderWith(ctx, s)
}

// setting is one value a re-render sets: at a path of map keys, any value
// (a string, a map, a list).
type setting struct {
	path  []string
	value any
}

// renderWith renders the run's chart with the run's user values and set
// over them (see Rerender).
func (p *Pending) renderWith(ctx context.Context, set []setting) (*Rendering, error) {
	user, effective, err := p.userValues(ctx)
	if err != nil {
		return nil, err
	}
	vals := copyValues(user)
	for _, s := range set {
		setAt(vals, effective, s.path, s.value)
	}
	return Render(ctx, p.chart, p.name, p.ns, vals, p.caps)
}

// TraceFailure is a values key whose marked render could not be read: Helm
// failed to render the chart with the key's marker, or the rendered
// objects did not decode (a marker in a field of a fixed shape, such as a
// resource quantity). What the key produces is not known.
type TraceFailure struct {
	Path []string
	// Value is the key's value in the effective values (a string key's).
	Value string
	// Err is Helm's error, or the decoder's.
	Err string
}

// SetPath is the key as `helm --set` takes it (see ImageKey.SetPath).
func (f TraceFailure) SetPath() string { return ImageKey{Path: f.Path}.SetPath() }

// FailuresIn returns the failures of failed whose value occurs in ref:
// the keys that might have produced ref but could not be traced.
func FailuresIn(ref string, failed []TraceFailure) []TraceFailure {
	var out []TraceFailure
	for _, f := range failed {
		if f.Value != "" && strings.Contains(ref, f.Value) {
			out = append(out, f)
		}
	}
	return out
}

// markedRenders renders the chart with every setting of set at once and
// calls read with the render and the indexes of the settings in it. When
// that render fails (a marked value some template cannot take), or read
// returns an error (the render's objects do not decode), the settings are
// split in halves, in their order (a component's keys stay together), and
// each half is tried the same way, down to single settings: read is called
// once for every setting that is part of a render it can read, and a
// setting that fails alone is returned with the error of its own render.
// One setting that breaks the render costs about 2·log2(len(set)) renders
// more. The error is the context's.
func (p *Pending) markedRenders(ctx context.Context, set []setting, read func(r *Rendering, group []int) error) (map[int]error, error) {
	failed := map[int]error{}
	if len(set) == 0 {
		return failed, nil
	}
	// try returns why the group's render cannot be read, or the context's
	// error.
	try := func(group []int) (error, error) {
		sub := make([]setting, len(group))
		for j, i := range group {
			sub[j] = set[i]
		}
		r, err := p.renderWith(ctx, sub)
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		if err != nil {
			return err, nil
		}
		return read(r, group), nil
	}
	var solve func(group []int) error
	solve = func(group []int) error {
		why, err := try(group)
		switch {
		case err != nil:
			return err
		case why == nil:
			return nil
		case len(group) == 1:
			failed[group[0]] = why
			return nil
		}
		h := len(group) / 2
		if err := solve(group[:h]); err != nil {
			return err
		}
		return solve(group[h:])
	}
	every := make([]int, len(set))
	for i := range set {
		every[i] = i
	}
	if err := solve(every); err != nil {
		return nil, err
	}
	return failed, nil
}

// setAt writes v at path in vals (the user's values), making the maps on
// the way. A list on the way is the user's, else a copy of the one in
// effective (the values the templates see) at the same path: Helm
// replaces a list as a whole, so an element is set in a copy of the list
// the chart would have rendered, its other elements kept.
func setAt(vals, effective map[string]any, path []string, v any) {
	setIn(vals, effective, path, v)
}

// setIn returns dst with v at path, dst changed in place where it is a map
// or list already; src is dst's counterpart in the effective values.
func setIn(dst, src any, path []string, v any) any {
	if len(path) == 0 {
		return v
	}
	if i, ok := listIndex(path[0]); ok {
		l, ok := dst.([]any)
		if !ok {
			sl, _ := src.([]any)
			l, _ = copyAny(sl).([]any)
		}
		for len(l) <= i {
			l = append(l, nil)
		}
		var se any
		if sl, ok := src.([]any); ok && i < len(sl) {
			se = sl[i]
		}
		l[i] = setIn(l[i], se, path[1:], v)
		return l
	}
	m, ok := dst.(map[string]any)
	if !ok {
		m = map[string]any{}
	}
	var sc any
	if sm, ok := src.(map[string]any); ok {
		sc = sm[path[0]]
	}
	m[path[0]] = setIn(m[path[0]], sc, path[1:], v)
	return m
}

// copyAny returns a deep copy of a values tree (maps, lists, scalars).
func copyAny(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = copyAny(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = copyAny(x)
		}
		return out
	}
	return v
}

// leaf is a string value of the effective values at a path of map keys.
type leaf struct {
	path  []string
	value string
}

// walkValues calls visit with the path and value of every key of v, in
// path order (each map's keys sorted, depth first), and descends into a
// map value when visit returns true. Values inside lists are not visited:
// one cannot be set without replacing its list.
func walkValues(v map[string]any, visit func(path []string, value any) bool) {
	var walk func(v map[string]any, prefix []string)
	walk = func(v map[string]any, prefix []string) {
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			path := append(append([]string(nil), prefix...), k)
			if m, ok := v[k].(map[string]any); visit(path, v[k]) && ok {
				walk(m, path)
			}
		}
	}
	walk(v, nil)
}

// walkStrings calls visit with the path and value of every string of v,
// in lists too (an element's path element is its index, "[2]"), maps'
// keys sorted, depth first.
func walkStrings(v any, prefix []string, visit func(path []string, v string)) {
	switch t := v.(type) {
	case string:
		visit(prefix, t)
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkStrings(t[k], append(append([]string(nil), prefix...), k), visit)
		}
	case []any:
		for i, x := range t {
			walkStrings(x, append(append([]string(nil), prefix...), "["+strconv.Itoa(i)+"]"), visit)
		}
	}
}

// ImageKeys finds, for each reference of refs (rendered by the run, with
// pods), the values keys that produce it, by asking Helm: every string
// value of the effective values that occurs in some reference as a run of
// its parts (occursAsPart) gets a marker of its own appended, the chart is rendered once more with all of
// them set, and a key produces a reference when the reference at the same
// place (workload, container, field) carries its marker. A reference no
// key produces gets none: the template writes it. When the marked render
// fails or its pods do not decode, the keys are tried again in smaller
// groups (markedRenders); a key that still fails alone is returned as a
// TraceFailure, and the references its value occurs in (FailuresIn) are
// not known to have no key. The error is the context's, or the run's
// render's.
func (p *Pending) ImageKeys(ctx context.Context, pods []Pod, refs []ImageRef) ([][]ImageKey, []TraceFailure, error) {
	_, effective, err := p.userValues(ctx)
	if err != nil {
		return nil, nil, err
	}
	var all []leaf
	walkStrings(effective, nil, func(path []string, v string) {
		all = append(all, leaf{path: path, value: v})
	})
	var cands []leaf
	for _, l := range all {
		if len(l.value) < 3 {
			continue
		}
		for _, r := range refs {
			if occursAsPart(r.Ref, l.value) {
				cands = append(cands, l)
				break
			}
		}
	}
	out := make([][]ImageKey, len(refs))
	places := make(map[string][]int, len(refs))
	for i, r := range refs {
		pl := r.place(pods)
		places[pl] = append(places[pl], i)
	}
	set := make([]setting, len(cands))
	for i, c := range cands {
		set[i] = setting{path: c.path, value: marked(c.value, i)}
	}
	failed, err := p.markedRenders(ctx, set, func(r2 *Rendering, group []int) error {
		pods2, refs2, err := r2.Images()
		if err != nil {
			return err // its pods do not decode: markedRenders tries smaller groups
		}
		seen := map[string]int{}
		for _, r := range refs2 {
			pl := markerPattern.ReplaceAllString(r.place(pods2), "")
			n := seen[pl]
			seen[pl]++
			idx := places[pl]
			if n >= len(idx) {
				continue
			}
			i := idx[n]
			for _, ci := range group {
				if strings.Contains(r.Ref, marker(ci)) {
					out[i] = append(out[i], ImageKey{Path: cands[ci].path, Value: cands[ci].value})
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, traceFailures(failed, func(i int) ([]string, string) { return cands[i].path, cands[i].value }), nil
}

// traceFailures returns the failures of markedRenders as TraceFailures in
// the order of their settings, with each key's path and value from key.
func traceFailures(failed map[int]error, key func(i int) ([]string, string)) []TraceFailure {
	idx := make([]int, 0, len(failed))
	for i := range failed {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]TraceFailure, 0, len(idx))
	for _, i := range idx {
		path, v := key(i)
		out = append(out, TraceFailure{Path: path, Value: v, Err: failed[i].Error()})
	}
	return out
}

// occursAsPart reports whether v occurs in the image reference ref as a
// run of whole parts: starting at the reference's start, after a '/', ':'
// or '@' (or after a 'v' there: a tag "v" + version), and ending at its
// end or before a '/', ':', '@', '-' or '_' (or v itself ending in '/',
// ':' or '@'). A registry, a repository, a name, a tag or a digest, and
// any run of them, occurs so; a value found only inside a part (the cpu
// request "0.2" in the tag "1.0.2") does not: a template that builds one
// part of an image from pieces of values is not traced.
func occursAsPart(ref, v string) bool {
	sep := func(c byte) bool { return c == '/' || c == ':' || c == '@' }
	startOK := func(i int) bool {
		return i == 0 || sep(ref[i-1]) || ref[i-1] == 'v' && (i == 1 || sep(ref[i-2]))
	}
	endOK := func(j int) bool {
		return j == len(ref) || sep(ref[j]) || ref[j] == '-' || ref[j] == '_' || sep(v[len(v)-1])
	}
	for off := 0; ; {
		i := strings.Index(ref[off:], v)
		if i < 0 {
			return false
		}
		i += off
		if startOK(i) && endOK(i+len(v)) {
			return true
		}
		off = i + 1
	}
}

// MirrorPlan is what moves a rendering's images to a mirror.
type MirrorPlan struct {
	// Set are the values to set, each key once, in path order.
	Set []ImageKey
	// Moves maps a reference (by index) to the keys of Set that move it.
	Moves map[int][]ImageKey
	// Unmoved are the references (by index) still elsewhere once the chart
	// renders with Set: no value of the chart moves them.
	Unmoved []int
}

// PlanMirror works out the values that put every reference of refs where
// the mirror list keeps it (MirrorTarget), from the keys that produce each
// one (ImageKeys): a key holding the reference's registry is set to the
// mirror, a key holding registry/repository gets the mirror in place of
// the registry, and a key holding the repository of a Docker Hub name
// written without a registry gets the mirror in place of its first
// component, as the mirror list does. Helm then decides: the chart is
// rendered with them, and a reference that render does not put at its
// MirrorTarget is Unmoved.
func (p *Pending) PlanMirror(ctx context.Context, mirror string, pods []Pod, refs []ImageRef, keys [][]ImageKey) (*MirrorPlan, error) {
	mirror = strings.TrimSuffix(mirror, "/")
	plan := &MirrorPlan{Moves: map[int][]ImageKey{}}
	byPath := map[string]ImageKey{}
	for i, r := range refs {
		if AtMirror(r.Ref, mirror) {
			continue
		}
		written := ""
		if j := strings.IndexByte(r.Ref, '/'); j > 0 {
			written = r.Ref[:j]
		}
		explicit := written != "" && (strings.ContainsAny(written, ".:") || written == "localhost")
		for _, k := range keys[i] {
			v, ok := "", false
			switch {
			case explicit && (k.Value == written || k.Value == written+"/"):
				v, ok = mirror, true
			case explicit && strings.HasPrefix(k.Value, written+"/"):
				v, ok = mirror+k.Value[len(written):], true
			case !explicit && strings.HasPrefix(r.Ref, k.Value):
				v, ok = MirrorTarget(k.Value, mirror), true
			}
			if ok {
				nk := ImageKey{Path: k.Path, Value: v}
				byPath[nk.SetPath()] = nk
				plan.Moves[i] = append(plan.Moves[i], nk)
			}
		}
	}
	for _, k := range byPath {
		plan.Set = append(plan.Set, k)
	}
	sort.Slice(plan.Set, func(a, b int) bool { return plan.Set[a].SetPath() < plan.Set[b].SetPath() })
	r2, err := p.Rerender(ctx, plan.Set)
	if err != nil {
		return nil, fmt.Errorf("rendering with the mirror's values: %w", err)
	}
	pods2, refs2, err := r2.Images()
	if err != nil {
		return nil, err
	}
	// The references of the new render by place, in order: the n-th
	// reference at a place is where the n-th one was.
	after := map[string][]string{}
	for _, r := range refs2 {
		after[r.place(pods2)] = append(after[r.place(pods2)], r.Ref)
	}
	nth := map[string]int{}
	for i, r := range refs {
		pl := r.place(pods)
		n := nth[pl]
		nth[pl]++
		if AtMirror(r.Ref, mirror) {
			continue
		}
		if n >= len(after[pl]) || after[pl][n] != MirrorTarget(r.Ref, mirror) {
			plan.Unmoved = append(plan.Unmoved, i)
			delete(plan.Moves, i)
		}
	}
	return plan, nil
}
