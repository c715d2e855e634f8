package chart

import (
	"context"
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// EnvKey is a values key that adds environment variables to the
// containers of some rendered pods: a map of NAME: value (the
// gitops-runtime chart's component "env" values) or a list of {name,
// value} (the subcharts' "env" and "extraEnv").
type EnvKey struct {
	Path []string
	// List is true for a list of {name, value}; Len is the entries it
	// holds in the effective values (a --set of an index replaces the
	// whole list, so a list that holds some is appended to in a values
	// file instead).
	List bool
	Len  int
	// Pods are the pods it reaches ("Kind/namespace/name"), sorted.
	Pods []string
}

// SetPath is the key as `helm --set` takes it (see ImageKey.SetPath).
func (k EnvKey) SetPath() string { return ImageKey{Path: k.Path}.SetPath() }

// SetFlags returns the --set-string flags, each quoted for a shell
// ('path=value', commas escaped), that add each variable of vars (NAME,
// value; in order) through the key; nil for a list that already holds
// entries (its variables are appended in a values file instead).
func (k EnvKey) SetFlags(vars [][2]string) []string {
	if k.List && k.Len > 0 {
		return nil
	}
	flag := func(path, v string) string {
		return "--set-string '" + path + "=" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), ",", `\,`) + "'"
	}
	var out []string
	for i, v := range vars {
		if k.List {
			at := k.SetPath() + "[" + strconv.Itoa(i) + "]"
			out = append(out, flag(at+".name", v[0]), flag(at+".value", v[1]))
		} else {
			out = append(out, flag(k.SetPath()+"."+v[0], v[1]))
		}
	}
	return out
}

// envKeyName matches the names of values that hold environment variables.
var envKeyName = regexp.MustCompile(`(?i)^(extra)?env(vars)?$`)

// envMarker is the variable a marked render adds through candidate i.
func envMarker(i int) string { return "PFM" + strconv.Itoa(i) + "X" }

// EnvKeys finds, by asking Helm, the values keys that add environment
// variables to the rendered pods' containers (init containers included):
// every map or list of the effective values named env, extraEnv or
// envVars (reached through maps) gets a variable of its own, the chart is
// rendered once more with all of them (in groups when that fails, see
// markedRenders), and a key reaches a pod when a container of the pod has
// its variable. It returns the keys by the pods they reach ("Kind/namespace/name",
// the namespace as rendered), each pod's keys with the fewest pods reached
// first: the key of that component before a key of all the chart's; and
// the keys whose marked render could not be read (TraceFailure, no
// Value): the pods they reach are not known.
func (p *Pending) EnvKeys(ctx context.Context) (map[string][]EnvKey, []TraceFailure, error) {
	_, effective, err := p.userValues(ctx)
	if err != nil {
		return nil, nil, err
	}
	var cands []EnvKey
	var set []setting
	walkValues(effective, func(path []string, v any) bool {
		if !envKeyName.MatchString(path[len(path)-1]) {
			return true
		}
		marker := envMarker(len(cands))
		switch t := v.(type) {
		case map[string]any:
			m := copyValues(t)
			m[marker] = "1"
			cands = append(cands, EnvKey{Path: path})
			set = append(set, setting{path: path, value: m})
			return false
		case []any:
			l := append(append([]any(nil), t...), map[string]any{"name": marker, "value": "1"})
			cands = append(cands, EnvKey{Path: path, List: true, Len: len(t)})
			set = append(set, setting{path: path, value: l})
		}
		return true
	})
	reached := make([]map[string]bool, len(cands))
	failed, err := p.markedRenders(ctx, set, func(r *Rendering, group []int) error {
		pods, err := r.Pods()
		if err != nil {
			return err
		}
		in := map[int]bool{}
		for _, i := range group {
			in[i] = true
		}
		for _, pod := range pods {
			for _, c := range append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
				for _, e := range c.Env {
					n, ok := markerIndex(e.Name)
					if !ok || !in[n] {
						continue
					}
					if reached[n] == nil {
						reached[n] = map[string]bool{}
					}
					reached[n][pod.Kind+"/"+pod.Namespace+"/"+pod.Name] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	out := map[string][]EnvKey{}
	for i, k := range cands {
		for pod := range reached[i] {
			k.Pods = append(k.Pods, pod)
		}
		sort.Strings(k.Pods)
		for _, pod := range k.Pods {
			out[pod] = append(out[pod], k)
		}
	}
	for _, ks := range out {
		sort.SliceStable(ks, func(a, b int) bool {
			if len(ks[a].Pods) != len(ks[b].Pods) {
				return len(ks[a].Pods) < len(ks[b].Pods)
			}
			return ks[a].SetPath() < ks[b].SetPath()
		})
	}
	return out, traceFailures(failed, func(i int) ([]string, string) { return cands[i].Path, "" }), nil
}

// markerIndex reads the candidate index of an envMarker name.
func markerIndex(name string) (int, bool) {
	if !strings.HasPrefix(name, "PFM") || !strings.HasSuffix(name, "X") {
		return 0, false
	}
	n, err := strconv.Atoi(name[3 : len(name)-1])
	return n, err == nil
}
