package chart

import (
	"context"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// helmSplit is releaseutil.SplitManifests' documents in its order.
func helmSplit(s string) []string {
	docs := releaseutil.SplitManifests(s)
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	var out []string
	for _, k := range keys {
		out = append(out, docs[k])
	}
	return out
}

// TestSplitDocumentsAsHelm: splitDocuments returns what Helm's
// releaseutil.SplitManifests returns, on the manifests (hooks included) of
// the three chart lines and on random streams of separators, whitespace
// and text.
func TestSplitDocumentsAsHelm(t *testing.T) {
	t.Parallel() // seconds of rendering under the race detector, beside the other parallel ones
	for _, line := range []string{"chart", "chart-0.27", "chart-0.26"} {
		c, err := loader.Load(fixtureLine(t, line))
		if err != nil {
			t.Fatal(err)
		}
		vals := map[string]any{"global": map[string]any{"runtime": map[string]any{"name": "rt1"},
			"codefresh": map[string]any{"accountId": "acc", "userToken": map[string]any{"token": "x"}}}}
		rel, err := installRelease(context.Background(), c, "rel1", "ns1", vals, Capabilities{KubeVersion: "v1.30.2"})
		if err != nil {
			t.Fatal(err)
		}
		manifest := rel.Manifest
		for _, h := range rel.Hooks {
			manifest += "\n---\n# Source: " + h.Path + "\n" + h.Manifest + "\n"
		}
		got, want := splitDocuments(manifest), helmSplit(manifest)
		if len(want) < 100 || !reflect.DeepEqual(got, want) {
			t.Errorf("chart %s: %d documents, Helm's split has %d", line, len(got), len(want))
		}
	}
	pieces := []string{"---", "--", "-", "\n", "\r\n", " ", "\t", "\f", "\v", "\u00a0", "a", "kind: X", "# c", "----", "\n---\n"}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 50000; i++ {
		var s string
		for n := r.Intn(12); n > 0; n-- {
			s += pieces[r.Intn(len(pieces))]
		}
		if got, want := splitDocuments(s), helmSplit(s); !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
			t.Fatalf("%q: split %q, Helm's %q", s, got, want)
		}
	}
}

// FuzzSplitDocuments holds splitDocuments to Helm's split on any input.
func FuzzSplitDocuments(f *testing.F) {
	for _, s := range []string{"", "---", "a\n---\nb", "---\n---\n", " \n---x\n--- \r\n---\t\fy", "a\n\n---\n---\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := splitDocuments(s), helmSplit(s); !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
			t.Fatalf("%q: split %q, Helm's %q", s, got, want)
		}
	})
}

// TestManifestObjectsOnce: a manifest parsed again is not parsed again,
// and each caller's objects are its own.
func TestManifestObjectsOnce(t *testing.T) {
	m := "---\n# Source: a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: x\n"
	first, err := ManifestObjects(m)
	if err != nil || len(first) != 1 {
		t.Fatal(first, err)
	}
	first[0].Namespace = ""
	again, err := ManifestObjects(m)
	if err != nil || len(again) != 1 || again[0].Namespace != "x" {
		t.Fatalf("the second caller got %+v, %v: the first caller's write leaked", again, err)
	}
	parsedManifests.Lock()
	_, kept := parsedManifests.m[m]
	parsedManifests.Unlock()
	if !kept {
		t.Error("the manifest's objects are not kept")
	}
}
