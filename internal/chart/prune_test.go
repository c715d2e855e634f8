package chart

import (
	"context"
	"strings"
	"testing"

	helmchart "helm.sh/helm/v3/pkg/chart"
)

// TestWithoutUnreadFiles: of the real chart 0.30.0, the files of the
// charts whose templates read none are left out (crds/ kept); sealed-secrets
// (dashboards/*.json) and redis-ha (certs/) keep theirs, and a values
// string mentioning Files keeps every file. The rendering itself is compared
// with real `helm template` end to end (TestRenderIsHelmTemplate).
func TestWithoutUnreadFiles(t *testing.T) {
	c, err := Load(context.Background(), Source{Ref: fixtureChart(t), Settings: isolatedSettings(t)})
	if err != nil {
		t.Fatal(err)
	}
	files := func(c *helmchart.Chart) map[string]int {
		n := map[string]int{}
		var walk func(c *helmchart.Chart, path string)
		walk = func(c *helmchart.Chart, path string) {
			path += "/" + c.Name()
			n[path] = len(c.Files)
			for _, d := range c.Dependencies() {
				walk(d, path)
			}
		}
		walk(c, "")
		return n
	}
	before, after := files(c), files(withoutUnreadFiles(c, nil))
	for path, n := range before {
		kept := strings.HasSuffix(path, "/sealed-secrets") || strings.HasSuffix(path, "/redis-ha")
		switch {
		case n == 0:
		case kept && after[path] != n:
			t.Errorf("%s: %d of %d files kept, want all", path, after[path], n)
		case !kept && after[path] != crdFiles(c, path):
			t.Errorf("%s: %d of %d files kept, want only crds/", path, after[path], n)
		}
	}
	if len(after) != len(before) {
		t.Errorf("charts %v, want %v", after, before)
	}
	all := files(withoutUnreadFiles(c, map[string]any{"x": `{{ .Files.Get "README.md" }}`}))
	for path, n := range before {
		if all[path] != n {
			t.Errorf("values mention Files: %s kept %d of %d", path, all[path], n)
		}
	}
	if files(c)["/gitops-runtime"] != before["/gitops-runtime"] {
		t.Error("the loaded chart was modified")
	}
}

// crdFiles counts the crds/ files of the chart at path ("/a/b").
func crdFiles(c *helmchart.Chart, path string) int {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for _, p := range parts[1:] {
		for _, d := range c.Dependencies() {
			if d.Name() == p {
				c = d
				break
			}
		}
	}
	n := 0
	for _, f := range c.Files {
		if strings.HasPrefix(f.Name, "crds/") {
			n++
		}
	}
	return n
}

func TestTemplateMentionsFiles(t *testing.T) {
	cases := map[string]bool{
		`{{ .Files.Get "x" }}`:                                     true,
		`{{ $.Files.Glob "a/*" }}`:                                 true,
		`{{ range $p, $_ := .Files.Glob "x" }}{{ end }}`:           true,
		`{{ index . "Files" }}`:                                    true,
		`{{ (.Subcharts.argo).Files.Get "x" }}`:                    true,
		`{{ if .Values.x }}{{ else }}{{ get $ "Files" }}{{ end }}`: true,
		`{{ with .Values }}{{ .Files }}{{ end }}`:                  true,
		`{{ define "a" }}{{ .Files.Lines "x" }}{{ end }}`:          true,
		`{{ .Files.Get "x" `:                                       true, // does not parse
		`ignoreMissingValueFiles: {{ .Values.x }}`:                 false,
		`Files are listed here: {{ .Values.x }}`:                   false,
		`{{ .Values.valueFiles }}`:                                 false,
		`{{ include "x" (dict "ValueFiles" 1) }}`:                  false,
	}
	for text, want := range cases {
		if got := templateMentionsFiles("t", text); got != want {
			t.Errorf("%q: %v, want %v", text, got, want)
		}
	}
	if !valuesMention(map[string]any{"a": []any{map[string]any{"b": `{{ .Files.Get "x" }}`}}}) {
		t.Error("a values string with .Files not seen")
	}
	if valuesMention(map[string]any{"valueFiles": []any{"a.yaml"}}) {
		t.Error("valueFiles counted")
	}
}
