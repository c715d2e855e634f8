package plan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/yaml"
)

// MaxFileSize caps each values file, and standard input read with -f -:
// 10 MiB. Helm reads values files whole (io.ReadAll); a values file larger
// than this is not a chart's values, and /dev/zero would otherwise grow the
// process without end.
const MaxFileSize = 10 << 20

// Load merges values files (in order, later files win, maps merged key by key)
// and then --set expressions, exactly as `helm install -f ... --set ...` does.
// Only local files are read: remote URLs need Helm's getters. A file named
// "-" is read from stdin, as Helm does (pkg/cli/values readFile).
//
// The steps are those of Helm's pkg/cli/values Options.MergeValues (v3.22):
// each file is parsed with sigs.k8s.io/yaml and merged with mergeMaps (a copy
// of Helm's unexported function), then each --set goes through Helm's own
// strvals.ParseInto, then each --set-string (stringSets) through
// strvals.ParseIntoString. pkg/cli/values itself is not imported because it pulls
// in Helm's getters, OCI registry client and kubectl (tens of modules) for a
// function of twenty lines; values_test.go pins the behaviour. The error is
// one line: "failed to parse FILE: ...", "failed parsing --set data: ...",
// "values file FILE is larger than 10 MiB" or, when ctx ends first (a FIFO
// nobody writes to), "reading values file FILE: ...".
func Load(ctx context.Context, files, sets []string, stdin io.Reader, stringSets ...string) (map[string]any, error) {
	v, _, err := LoadWithSources(ctx, files, sets, stdin, stringSets...)
	return v, err
}

// LoadWithSources is Load, and the index of where each merged value came
// from (Sources): the files' positions read from the same bytes, each
// --set and --set-string as its flag.
func LoadWithSources(ctx context.Context, files, sets []string, stdin io.Reader, stringSets ...string) (map[string]any, Sources, error) {
	base := map[string]any{}
	var src Sources
	for _, f := range files {
		data, err := ReadFile(ctx, f, stdin)
		if err != nil {
			return nil, Sources{}, oneLine(err)
		}
		if base, err = mergeFile(base, ValuesFile{Name: f, Data: data}); err != nil {
			return nil, Sources{}, oneLine(err)
		}
		src.addFile(f, data)
	}
	for _, s := range sets {
		if err := set(base, s); err != nil {
			return nil, Sources{}, oneLine(err)
		}
		src.addSet("--set", s, false)
	}
	for _, s := range stringSets {
		if err := setString(base, s); err != nil {
			return nil, Sources{}, oneLine(err)
		}
		src.addSet("--set-string", s, true)
	}
	return base, src, nil
}

// ValuesFile is a values file read already: its name (for messages) and
// its content.
type ValuesFile struct {
	Name string
	Data []byte
}

// Merge merges values files read already (in order, later files win, maps
// merged key by key), then --set expressions, then --set-string ones, with
// Load's steps: Helm's pkg/cli/values Options.MergeValues, as `helm
// template -f FILE... --set ... --set-string ...` merges them (the way
// Argo CD's repo-server passes an Application's helm values:
// https://github.com/argoproj/argo-cd/blob/v3.2.6/util/helm/cmd.go
// template). The error is Helm's: "failed to parse NAME: ...", "failed
// parsing --set data: ..." or "failed parsing --set-string data: ...".
func Merge(files []ValuesFile, sets, stringSets []string) (map[string]any, error) {
	base := map[string]any{}
	var err error
	for _, f := range files {
		if base, err = mergeFile(base, f); err != nil {
			return nil, err
		}
	}
	for _, s := range sets {
		if err := set(base, s); err != nil {
			return nil, err
		}
	}
	for _, s := range stringSets {
		if err := setString(base, s); err != nil {
			return nil, err
		}
	}
	return base, nil
}

// mergeFile parses f (sigs.k8s.io/yaml, as Helm) and merges it over base
// (mergeMaps): a -f step of Helm's MergeValues.
func mergeFile(base map[string]any, f ValuesFile) (map[string]any, error) {
	cur := map[string]any{}
	if err := yaml.Unmarshal(f.Data, &cur); err != nil {
		return nil, fmt.Errorf("failed to parse %s: %w", f.Name, err)
	}
	return mergeMaps(base, cur), nil
}

// set applies one --set expression to base in place (strvals.ParseInto).
func set(base map[string]any, expr string) error {
	if err := strvals.ParseInto(expr, base); err != nil {
		return fmt.Errorf("failed parsing --set data: %w", err)
	}
	return nil
}

// setString applies one --set-string expression to base in place
// (strvals.ParseIntoString).
func setString(base map[string]any, expr string) error {
	if err := strvals.ParseIntoString(expr, base); err != nil {
		return fmt.Errorf("failed parsing --set-string data: %w", err)
	}
	return nil
}

// ReadFile reads one values file ("-": stdin) of at most MaxFileSize bytes.
// Opening and reading run aside (opening a FIFO blocks until a writer
// comes), so ctx bounds the wait; the abandoned read ends with the process.
func ReadFile(ctx context.Context, name string, stdin io.Reader) ([]byte, error) {
	type read struct {
		data []byte
		err  error
	}
	ch := make(chan read, 1)
	go func() {
		var r io.Reader = stdin
		if name != "-" {
			f, err := os.Open(name)
			if err != nil {
				ch <- read{err: err}
				return
			}
			defer f.Close()
			r = f
		} else if r == nil {
			ch <- read{err: errors.New("-f -: no standard input")}
			return
		}
		data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
		ch <- read{data, err}
	}()
	label := name
	if name == "-" {
		label = "- (stdin)"
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("reading values file %s: %w", label, r.err)
		}
		if len(r.data) > MaxFileSize {
			return nil, fmt.Errorf("values file %s is larger than %d MiB, the cap on values files", label, MaxFileSize>>20)
		}
		return r.data, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("reading values file %s: stopped before it ended (%w)", label, context.Cause(ctx))
	}
}

// mergeMaps is Helm's (pkg/cli/values/options.go): maps merge key by key,
// anything else in b replaces a's value.
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if v, ok := v.(map[string]any); ok {
			if bv, ok := out[k]; ok {
				if bv, ok := bv.(map[string]any); ok {
					out[k] = mergeMaps(bv, v)
					continue
				}
			}
		}
		out[k] = v
	}
	return out
}

// Set applies one Helm --set expression (key=value) to v in place.
func Set(v map[string]any, expr string) error {
	return strvals.ParseInto(expr, v)
}

func oneLine(err error) error {
	return fmt.Errorf("%s", strings.Join(strings.Fields(err.Error()), " "))
}

// Lookup walks a dotted path of map keys ("global.runtime.ingress.enabled");
// keys containing dots are given as separate elements of path.
func Lookup(v map[string]any, path ...string) (any, bool) {
	var cur any = v
	for _, p := range path {
		for _, k := range splitPath(p) {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			cur, ok = m[k]
			if !ok {
				return nil, false
			}
		}
	}
	return cur, true
}

func splitPath(p string) []string { return strings.Split(p, ".") }

// String returns the value at path as a string ("" when absent or null).
// Numbers and booleans are formatted as Helm's templates would print them.
func String(v map[string]any, path ...string) string {
	x, ok := Lookup(v, path...)
	if !ok || x == nil {
		return ""
	}
	switch t := x.(type) {
	case string:
		return t
	case map[string]any, []any:
		return ""
	default:
		return fmt.Sprint(t)
	}
}

// Bool returns the value at path as a boolean, def when absent or null. As in
// Go templates' truthiness, a string "false" is still true; Helm's --set
// already turns "false" into a boolean, so that case only arises from
// quoted YAML, where the chart too would see a non-empty string.
func Bool(v map[string]any, def bool, path ...string) bool {
	x, ok := Lookup(v, path...)
	if !ok || x == nil {
		return def
	}
	switch t := x.(type) {
	case bool:
		return t
	case string:
		if b, err := strconv.ParseBool(t); err == nil {
			return b
		}
		return t != ""
	case int64:
		return t != 0
	case float64:
		return t != 0
	default:
		return true
	}
}

// Map returns the map at path (nil when absent or not a map).
func Map(v map[string]any, path ...string) map[string]any {
	x, _ := Lookup(v, path...)
	m, _ := x.(map[string]any)
	return m
}

// List returns the list at path (nil when absent or not a list).
func List(v map[string]any, path ...string) []any {
	x, _ := Lookup(v, path...)
	l, _ := x.([]any)
	return l
}

// Has reports whether path is present (even with a null value).
func Has(v map[string]any, path ...string) bool {
	_, ok := Lookup(v, path...)
	return ok
}
