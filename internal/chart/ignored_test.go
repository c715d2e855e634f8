package chart

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// TestIgnoredValuesByRender: on the real chart 0.30.0, a values file with
// read keys (strings found by their markers, a number and a bool found by
// removal), a value equal to the chart's default, and keys the chart does
// not read (a misspelt one, one of a removed subchart, a whole subtree):
// only the unread ones are reported, decided in a handful of renders.
func TestIgnoredValuesByRender(t *testing.T) {
	c, err := loader.Load(fixtureChart(t))
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{
		"global": map[string]any{
			"runtime":       map[string]any{"name": "rt1"},
			"codefresh":     map[string]any{"accountId": "acc", "userToken": map[string]any{"token": "x"}},
			"imageRegistry": "registry.example.com",
			"imageRegistyr": "registry.example.com",
		},
		"app-proxy":       map[string]any{"image": map[string]any{"pullPolicy": "Always"}},
		"argo-events":     map[string]any{"enabled": true, "controller": map[string]any{"replicas": 2}},
		"argo-cd":         map[string]any{"enabled": true},
		"not-a-thing":     map[string]any{"a": map[string]any{"b": "c", "d": 1}},
		"internal-router": map[string]any{"replicaCount": 2},
	}
	start := time.Now()
	ig, err := IgnoredValues(context.Background(), c, "rel1", "ns1", vals, Capabilities{KubeVersion: "v1.30.2"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"argo-events.controller.replicas", "argo-events.enabled", "global.imageRegistyr", "not-a-thing.a.b", "not-a-thing.a.d"}
	if !reflect.DeepEqual(ig.Paths, want) {
		t.Errorf("ignored %v, want %v", ig.Paths, want)
	}
	if ig.Renders > 12 || len(ig.Undecided) > 0 {
		t.Errorf("%d renders (undecided %v): group testing should settle %d values in a handful", ig.Renders, ig.Undecided, len(ValueLeaves(vals)))
	}
	t.Logf("%d values, %d renders, %s", len(ValueLeaves(vals)), ig.Renders, time.Since(start))
	if vals["global"].(map[string]any)["imageRegistry"] != "registry.example.com" {
		t.Error("IgnoredValues wrote into the caller's values")
	}
}

// TestIgnoredValuesReadThroughB64enc: the values a pre-install run usually
// gets are strings, the user token among them, which chart 0.30.0 writes
// into a Secret through b64enc: its marker shows encoded, so the render
// with markers settles every one of them (two renders in all) and none is
// reported.
func TestIgnoredValuesReadThroughB64enc(t *testing.T) {
	c, err := loader.Load(fixtureChart(t))
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{"global": map[string]any{
		"runtime":   map[string]any{"name": "rt1"},
		"codefresh": map[string]any{"accountId": "acc", "userToken": map[string]any{"token": "x"}},
	}}
	ig, err := IgnoredValues(context.Background(), c, "rel1", "ns1", vals, Capabilities{KubeVersion: "v1.30.2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ig.Paths) != 0 || len(ig.Undecided) != 0 || ig.Renders != 2 {
		t.Errorf("ignored %v, undecided %v, %d renders; want none, none, 2", ig.Paths, ig.Undecided, ig.Renders)
	}
	// The run reuses Render's manifest as the render with every value:
	// it is the one IgnoredValues would do.
	caps := Capabilities{KubeVersion: "v1.30.2"}
	r, err := Render(context.Background(), c, "rel1", "ns1", vals, caps)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := installRelease(context.Background(), pruneFiles(withoutUnreadFiles(c, vals, false), true), "rel1", "ns1", vals, caps)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Manifest != r.releaseManifest || r.releaseManifest == "" {
		t.Error("Render's release manifest is not the render IgnoredValues does with every value")
	}
	// Beside the run's render, the markers settle every value: the run's
	// render is not even waited for, and one render is done in all.
	waited := false
	of, err := ignoredValues(context.Background(), c, "rel1", "ns1", vals, caps, func() (string, error) {
		waited = true
		return r.releaseManifest, nil
	}, nil)
	if err != nil || !reflect.DeepEqual(of.Paths, ig.Paths) || of.Renders != 1 || waited {
		t.Errorf("ignoredValues with the run's render: %+v, %v, waited for the run's render: %v; want %+v in 1 render, not waiting", of, err, waited, ig)
	}
	if !markerShows("data:\n  token: "+base64.StdEncoding.EncodeToString([]byte("gpfmark7x"))+"\n", "gpfmark7x") || markerShows("gpfmark1x", "gpfmark7x") {
		t.Error("markerShows: an encoded marker is read, another marker is not")
	}
}

// TestIgnoredValuesKeysWithDots: keys holding dots (label names) are keys,
// not paths: a subtree read whole through toYaml is read, an unread one
// whose keys look alike is ignored, and the decision ends.
func TestIgnoredValuesKeysWithDots(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"Chart.yaml":           "apiVersion: v2\nname: small\nversion: 0.1.0\n",
		"values.yaml":          "labels: {}\n",
		"templates/cm.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  labels: {{ toYaml .Values.labels | nindent 4 }}\ndata:\n  n: {{ .Values.replicas | default 1 | quote }}\n",
		"templates/_helps.tpl": "{{- define \"x\" }}{{ end }}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{
		"labels":   map[string]any{"app.kubernetes.io/name": "x", "app.kubernetes.io/part-of": "y"},
		"replicas": 3,
		"unused":   map[string]any{"a.b": 1, "a": map[string]any{"b": 2}},
	}
	ig, err := IgnoredValues(context.Background(), c, "r", "ns", vals, Capabilities{KubeVersion: "v1.30.2"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"unused.a.b", "unused.a.b"}; !reflect.DeepEqual(ig.Paths, want) {
		t.Errorf("ignored %v, want %v (both unused leaves)", ig.Paths, want)
	}
}

// TestIgnoredValuesIngressShortcuts: the values an ingress-mode run gives
// chart 0.30.0 (strings, a list of hosts, a bool under global): the hosts
// list is settled by its elements' markers with the strings, and the bool,
// under global, is judged against the whole chart's render with every
// value, not rendered again: three renders in all, nothing reported.
func TestIgnoredValuesIngressShortcuts(t *testing.T) {
	c, err := loader.Load(fixtureChart(t))
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{"global": map[string]any{
		"runtime": map[string]any{"name": "rt1", "ingress": map[string]any{
			"enabled": true, "hosts": []any{"rt1.example.com"}, "className": "internal-nginx"}},
		"codefresh": map[string]any{"accountId": "acc", "userToken": map[string]any{"token": "x"}},
	}}
	ig, err := IgnoredValues(context.Background(), c, "rel1", "ns1", vals, Capabilities{KubeVersion: "v1.30.2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ig.Paths) != 0 || len(ig.Undecided) != 0 || ig.Renders != 3 {
		t.Errorf("ignored %v, undecided %v, %d renders; want none, none, 3 (with every value, with markers, without the bool)", ig.Paths, ig.Undecided, ig.Renders)
	}
	// A hosts list the chart never reads (a misspelt parent key) is
	// still reported: its marker does not show and removing it changes
	// nothing.
	vals["global"].(map[string]any)["runtime"].(map[string]any)["ingres"] = map[string]any{"hosts": []any{"rt1.example.com"}}
	ig, err = IgnoredValues(context.Background(), c, "rel1", "ns1", vals, Capabilities{KubeVersion: "v1.30.2"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ig.Paths, []string{"global.runtime.ingres.hosts"}) {
		t.Errorf("ignored %v, want [global.runtime.ingres.hosts]", ig.Paths)
	}
	// The keys a judge leaves out (a shortcut flag's) are rendered with
	// but neither tried nor reported: the strings' markers decide the
	// rest in one render beside the run's.
	shortcut := map[string]bool{"global.runtime.ingress.enabled": true, "global.runtime.ingress.hosts": true, "global.runtime.ingress.className": true, "global.runtime.ingres.hosts": true}
	caps := Capabilities{KubeVersion: "v1.30.2"}
	r, err := Render(context.Background(), c, "rel1", "ns1", vals, caps)
	if err != nil {
		t.Fatal(err)
	}
	ig, err = ignoredValues(context.Background(), c, "rel1", "ns1", vals, caps, func() (string, error) { return r.releaseManifest, nil },
		func(key []string) bool { return !shortcut[strings.Join(key, ".")] })
	if err != nil || len(ig.Paths) != 0 || ig.Renders != 1 {
		t.Errorf("with a judge: %+v, %v; want nothing ignored in 1 render", ig, err)
	}
}

// TestShortcutKeysAreRead: the plugin's shortcut flags write chart keys
// the plugin chooses, and a run does not judge them among the user's
// values (they are not the user's to misspell). This holds them to the
// chart lines the tests carry instead: every key that selects what the
// shortcut asks for is read by each line. What IgnoredValues may report
// of them, which a run judging shortcut keys would wrongly report as a
// value the user gives and the chart ignores: keys that switch off a
// feature a line lacks (ingress mode's httpRoute.enabled=false before
// 0.30), and keys only the hooks read (--skip-ingress-validation's, read
// by the validate-values hook, which the comparison leaves out).
func TestShortcutKeysAreRead(t *testing.T) {
	cases := []struct {
		line string
		sc   plan.Shortcuts
		// mayIgnore are the keys the line ignores or only its hooks read.
		mayIgnore []string
	}{
		{"chart", plan.Shortcuts{AccessMode: "ingress", IngressHost: "rt1.example.com", IngressClass: "internal-nginx", SkipIngressValidation: true}, []string{"global.runtime.ingress.skipValidation"}},
		{"chart-0.27", plan.Shortcuts{IngressHost: "rt1.example.com", IngressClass: "internal-nginx"}, []string{"global.runtime.httpRoute.enabled"}},
		{"chart-0.26", plan.Shortcuts{IngressHost: "rt1.example.com", IngressClass: "internal-nginx"}, []string{"global.runtime.httpRoute.enabled"}},
		{"chart", plan.Shortcuts{IngressURL: "https://rt1.example.com", ExistingArgoCD: true}, nil},
		{"chart", plan.Shortcuts{AccessMode: "tunnel"}, nil},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %+v", tc.line, tc.sc), func(t *testing.T) {
			t.Parallel()
			c, err := loader.Load(fixtureLine(t, tc.line))
			if err != nil {
				t.Fatal(err)
			}
			vals := map[string]any{"global": map[string]any{"runtime": map[string]any{"name": "rt1"},
				"codefresh": map[string]any{"accountId": "acc", "userToken": map[string]any{"token": "x"}}}}
			if err := plan.ApplyShortcuts(vals, tc.sc); err != nil {
				t.Fatal(err)
			}
			ig, err := IgnoredValues(context.Background(), c, "rel1", "ns1", vals, Capabilities{KubeVersion: "v1.30.2"})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range append(ig.Paths, ig.Undecided...) {
				if !slices.Contains(tc.mayIgnore, p) {
					t.Errorf("chart %s ignores the shortcut's key %s (ignored %v, undecided %v)", tc.line, p, ig.Paths, ig.Undecided)
				}
			}
		})
	}
}

// TestMarkersThroughTheEngineAsThroughTheInstall: the render with markers
// goes through Helm's engine alone (renderFiles, markersShown); on the
// three chart lines, with markers in every kind of place (a value the
// release prints, one only a hook reads, one the chart encodes, one it
// never reads, a list of hosts), the markers it finds are those the
// install action's release manifest holds, hooks left out.
func TestMarkersThroughTheEngineAsThroughTheInstall(t *testing.T) {
	for _, line := range []string{"chart", "chart-0.27", "chart-0.26"} {
		t.Run(line, func(t *testing.T) {
			c, err := loader.Load(fixtureLine(t, line))
			if err != nil {
				t.Fatal(err)
			}
			markers := map[int][]string{0: {"gpfmark0x"}, 1: {"gpfmark1x"}, 2: {"gpfmark2x"}, 3: {"gpfmark3x"}, 4: {"gpfmark4x0x"}, 5: {"gpfmark5x"}, 6: {"gpfmark6x"}}
			vals := map[string]any{"global": map[string]any{
				"runtime": map[string]any{"name": "gpfmark0x", "ingress": map[string]any{
					"enabled": true, "hosts": []any{"gpfmark4x0x"}, "className": "gpfmark5x"}},
				"codefresh":     map[string]any{"accountId": "gpfmark1x", "userToken": map[string]any{"token": "gpfmark2x"}},
				"imageRegistyr": "gpfmark3x",
			}, "argo-cd": map[string]any{"configs": map[string]any{"cm": map[string]any{"url": "gpfmark6x"}}}}
			caps := Capabilities{KubeVersion: "v1.30.2", APIVersions: []string{"monitoring.coreos.com/v1"}}
			p := pruneFiles(withoutUnreadFiles(c, vals, false), true)
			rel, err := installRelease(context.Background(), pruneFiles(p, true), "rel1", "ns1", vals, caps)
			if err != nil {
				t.Fatal(err)
			}
			want := map[int]bool{}
			for i, ms := range markers {
				if anyMarkerShows(rel.Manifest, ms) {
					want[i] = true
				}
			}
			files, err := renderFiles(context.Background(), pruneFiles(p, true), "rel1", "ns1", vals, caps)
			if err != nil {
				t.Fatal(err)
			}
			got, err := markersShown(files, markers)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("through the engine %v, through the install %v", got, want)
			}
			// The test could fail: the release shows some markers and not
			// others (the misspelt key's), and a hook holds one the release
			// does not (the helm-values-config hook copies every value).
			if !want[0] || want[3] {
				t.Errorf("the release shows %v: want the runtime name's and not the misspelt key's", want)
			}
			hooks := ""
			for _, h := range rel.Hooks {
				hooks += h.Manifest
			}
			if line == "chart" && !strings.Contains(hooks, "gpfmark3x") {
				t.Error("no hook of chart 0.30.0 holds the misspelt key's marker: the hooks are not told apart")
			}
		})
	}
}
