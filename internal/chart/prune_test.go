package chart

import (
	"context"
	"strings"
	"testing"

	helmchart "helm.sh/helm/v3/pkg/chart"
)

// TestWithoutUnreadFiles: of the real chart 0.30.0, each chart keeps only
// the files its templates read (and its crds/ files when asked): sealed-secrets its
// dashboards/*.json (.Files.Glob), redis-ha none of its files (it reads
// certs/* that the chart does not ship); a values string mentioning Files
// keeps every file. The rendering itself is compared with real `helm
// template` end to end (TestRenderIsHelmTemplate).
func TestWithoutUnreadFiles(t *testing.T) {
	c, err := Load(context.Background(), Source{Ref: fixtureChart(t), Settings: isolatedSettings(t)})
	if err != nil {
		t.Fatal(err)
	}
	files := func(c *helmchart.Chart) map[string][]string {
		n := map[string][]string{}
		var walk func(c *helmchart.Chart, path string)
		walk = func(c *helmchart.Chart, path string) {
			path += "/" + c.Name()
			n[path] = []string{}
			for _, f := range c.Files {
				n[path] = append(n[path], f.Name)
			}
			for _, d := range c.Dependencies() {
				walk(d, path)
			}
		}
		walk(c, "")
		return n
	}
	before := files(c)
	dashboards, crds := 0, 0
	for _, withCRDs := range []bool{false, true} {
		after := files(withoutUnreadFiles(c, nil, withCRDs))
		if len(after) != len(before) {
			t.Fatalf("charts %v, want %v", after, before)
		}
		for path, names := range before {
			var want []string
			for _, n := range names {
				isCRD := strings.HasPrefix(n, "crds/")
				if isCRD && withCRDs || strings.HasSuffix(path, "/sealed-secrets") && strings.HasPrefix(n, "dashboards/") && strings.HasSuffix(n, ".json") {
					want = append(want, n)
				}
				if isCRD {
					crds++
				} else if strings.HasPrefix(n, "dashboards/") {
					dashboards++
				}
			}
			if strings.Join(after[path], ",") != strings.Join(want, ",") {
				t.Errorf("withCRDs %v: %s kept %v, want %v", withCRDs, path, after[path], want)
			}
		}
	}
	if dashboards == 0 || crds == 0 {
		t.Errorf("the fixture chart has %d dashboards and %d crds/ files, want both", dashboards, crds)
	}
	all := files(withoutUnreadFiles(c, map[string]any{"x": `{{ .Files.Get "README.md" }}`}, false))
	for path, names := range before {
		if len(all[path]) != len(names) {
			t.Errorf("values mention Files: %s kept %d of %d", path, len(all[path]), len(names))
		}
	}
	if len(files(c)["/gitops-runtime"]) != len(before["/gitops-runtime"]) {
		t.Error("the loaded chart was modified")
	}
}

// TestTemplateFileReads: literal reads are named, any other read of .Files
// reads every file.
func TestTemplateFileReads(t *testing.T) {
	type want struct {
		all   bool
		reads []string // file names that must be read
		not   []string // file names that must not
	}
	cases := map[string]want{
		`{{ .Files.Get "certs/ca.crt" | b64enc }}`:                                                  {reads: []string{"certs/ca.crt"}, not: []string{"README.md"}},
		`{{ $.Files.GetBytes "a.txt" }}{{ .Files.Lines "b.txt" }}`:                                  {reads: []string{"a.txt", "b.txt"}, not: []string{"c.txt"}},
		`{{ range $p, $_ := .Files.Glob "dash/*.json" }}{{ $.Files.Get $p }}{{ end }}`:              {reads: []string{"dash/a.json"}, not: []string{"dash/a.yaml", "README.md"}},
		`{{ (.Files.Glob "conf/**").AsConfig }}`:                                                    {reads: []string{"conf/a/b.ini"}, not: []string{"README.md"}},
		`{{ .Files.AsSecrets }}`:                                                                    {all: true},
		`{{ .Files.Get .Values.file }}`:                                                             {all: true},
		`{{ .Files.Get (printf "certs/%s" .Values.x) }}`:                                            {all: true},
		`{{ "x" | .Files.Get }}`:                                                                    {all: true},
		`{{ include "t" .Files }}`:                                                                  {all: true},
		`{{ index . "Files" }}`:                                                                     {all: true},
		`{{ .Subcharts.redis.Files.Get "x" }}`:                                                      {all: true},
		`{{ $ctx := deepCopy . }}{{ $ctx.Files.Get "x" }}`:                                          {all: true},
		`{{ range $p, $_ := .Files.Glob "d/*" }}{{ end }}{{ $p := .Values.f }}{{ $.Files.Get $p }}`: {all: true},
		`{{ .Files.Glob "[" }}`:                                                                     {all: true},
		`{{ .Files.Get "x" `:                                                                        {all: true},
		`{{ if .Values.x }}{{ else }}{{ with .Values }}{{ $.Files.Get "y" }}{{ end }}{{ end }}`:     {reads: []string{"y"}, not: []string{"x"}},
		`ignoreMissingValueFiles: {{ .Values.valueFiles }}`:                                         {not: []string{"README.md"}},
	}
	for text, w := range cases {
		r := fileReads{names: map[string]bool{}}
		ok := templateFileReads("t", text, &r)
		if ok == w.all {
			t.Errorf("%q: reads every file %v, want %v", text, !ok, w.all)
			continue
		}
		for _, n := range w.reads {
			if !r.reads(n) {
				t.Errorf("%q does not read %s", text, n)
			}
		}
		for _, n := range w.not {
			if r.reads(n) {
				t.Errorf("%q reads %s", text, n)
			}
		}
	}
	if !valuesMention(map[string]any{"a": []any{map[string]any{"b": `{{ .Files.Get "x" }}`}}}) {
		t.Error("a values string with .Files not seen")
	}
	if valuesMention(map[string]any{"valueFiles": []any{"a.yaml"}}) {
		t.Error("valueFiles counted")
	}
}
