package plan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSourcesFollowHelmsMerge: every merged value is indexed with the
// writer that won in Helm's order (later files, maps merged key by key,
// anything else replacing; then --set and --set-string), at the line and
// column of its key (a list item at its own position); a key the later
// file replaced with a scalar forgets what was under it.
func TestSourcesFollowHelmsMerge(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.yaml", `global:
  runtime:
    name: first
    ingress:
      hosts:
        - a.example.com
        - b.example.com
      className: nginx
  codefresh:
    accountId: acc
tunnel-client:
  enabled: true
`)
	b := writeFile(t, dir, "b.yaml", `# second file
global:
  runtime:
    ingress:
      className:   traefik
  codefresh: null
base: &base
  x: 1
merged:
  <<: *base
  y: 2
`)
	v, src, err := LoadWithSources(context.Background(), []string{a, b},
		[]string{"global.runtime.name=second", "tunnel-client.enabled=false,argo-cd.enabled=false"}, nil,
		"global.runtime.ingress.hosts[1]=c.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if got := String(v, "global.runtime.ingress.className"); got != "traefik" {
		t.Fatalf("merge: className %q", got)
	}
	for path, want := range map[string]string{
		"global.runtime.name":                "--set global.runtime.name=second",
		"global.runtime.ingress.className":   b + ":5:7",
		"global.runtime.ingress.hosts":       a + ":5:7",
		"global.runtime.ingress.hosts[0]":    a + ":6:11",
		"global.runtime.ingress.hosts[1]":    "--set-string global.runtime.ingress.hosts[1]=c.example.com",
		"global.codefresh":                   b + ":6:3",
		"tunnel-client.enabled":              "--set tunnel-client.enabled=false,argo-cd.enabled=false",
		"argo-cd.enabled":                    "--set tunnel-client.enabled=false,argo-cd.enabled=false",
		"merged.x":                           b + ":8:3", // where the anchor holds it
		"merged.y":                           b + ":11:3",
		"global.runtime.ingress":             b + ":4:5",
		"global.runtime.ingress.hosts[1].no": "",
		"global.codefresh.accountId":         "",
	} {
		got, ok := src.Of(path)
		if want == "" {
			if ok {
				t.Errorf("%s: indexed as %s, want nothing (replaced or absent)", path, got)
			}
			continue
		}
		if !ok || got.String() != want {
			t.Errorf("%s: %q (found %v), want %q", path, got.String(), ok, want)
		}
		if ok && got.Path != path {
			t.Errorf("%s: Path %q", path, got.Path)
		}
	}
	// The index travels through its entries (a bundle) unchanged.
	if again := NewSources(src.Entries()); again.String() != src.String() {
		t.Errorf("entries round trip:\n%s\nwant\n%s", again, src)
	}
}

// TestSourcesOfThePlan: New indexes the files, the flags and the shortcut
// flags (each naming itself), and the chart version: --chart-version, or
// the Chart.yaml line of a local umbrella chart's gitops-runtime
// dependency, else of the chart's own version.
func TestSourcesOfThePlan(t *testing.T) {
	dir := t.TempDir()
	vals := writeFile(t, dir, "values.yaml", "global:\n  runtime:\n    name: Bad_Name\n")
	umbrella := filepath.Join(dir, "umbrella")
	if err := os.Mkdir(umbrella, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, umbrella, "Chart.yaml", "apiVersion: v2\nname: runtime\nversion: 1.0.0\ndependencies:\n  - name: other\n    version: 9.9.9\n  - name: gitops-runtime\n    repository: oci://quay.io/codefresh\n    version: 0.26.8\n")
	in, err := New(Flags{ValueFiles: []string{vals}, Chart: umbrella, Shortcuts: Shortcuts{IngressHost: "h.example.com", IngressClass: "nginx"}})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"global.runtime.name":              vals + ":3:5",
		"global.runtime.ingress.hosts[0]":  "--ingress-host h.example.com",
		"global.runtime.ingress.enabled":   "--ingress-host h.example.com",
		"global.runtime.ingress.className": "--ingress-class nginx",
	} {
		if got, ok := in.Sources.Of(path); !ok || got.String() != want {
			t.Errorf("%s: %q, want %q", path, got.String(), want)
		}
	}
	if got := in.RuntimeNameSource.String(); got != vals+":3:5" {
		t.Errorf("runtime name from %q", got)
	}
	if got, want := in.ChartVersionSource.String(), filepath.Join(umbrella, "Chart.yaml")+":9:5"; got != want {
		t.Errorf("umbrella chart version at %q, want %q", got, want)
	}
	writeFile(t, umbrella, "Chart.yaml", "apiVersion: v2\nname: gitops-runtime\nversion: 0.30.0\n")
	if got, ok := ChartVersionSource(umbrella); !ok || got.Line != 3 {
		t.Errorf("chart's own version at %v", got)
	}
	in, err = New(Flags{Chart: "oci://quay.io/codefresh/gitops-runtime", ChartVersion: "0.30.0", Shortcuts: Shortcuts{ExistingArgoCD: true}})
	if err != nil {
		t.Fatal(err)
	}
	if got := in.ChartVersionSource.String(); got != "--chart-version 0.30.0" {
		t.Errorf("chart version from %q", got)
	}
	if got, _ := in.Sources.Of("argo-cd.enabled"); got.Flag != "--existing-argocd" || got.Anchored() {
		t.Errorf("argo-cd.enabled from %+v", got)
	}
	if !strings.Contains(in.Sources.String(), "argo-cd.enabled\t--existing-argocd") {
		t.Errorf("index:\n%s", in.Sources)
	}
}
