package chart

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
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

// TestCopyWithoutUnreadFiles: a chart directory copied without the files no
// template reads. The parent keeps the file its template names, its crds/
// file, .helmignore and what .helmignore hides (Helm still ignores it);
// a subchart whose template reads .Files.AsConfig keeps every file, its own
// subchart's included; another subchart loses its README; an archived
// subchart is copied whole; every kept file has its bytes.
func TestCopyWithoutUnreadFiles(t *testing.T) {
	src := filepath.Join(t.TempDir(), "parent")
	files := map[string]string{
		"Chart.yaml":                        "apiVersion: v2\nname: parent\nversion: 1.0.0\n",
		"values.yaml":                       "# comment kept\na: 1\n",
		".helmignore":                       "ignored/\n",
		"ignored/secret.txt":                "hidden",
		"README.md":                         "docs",
		"config/read.txt":                   "read",
		"config/unread.txt":                 "unread",
		"crds/crd.yaml":                     "kind: CustomResourceDefinition\n",
		"templates/cm.yaml":                 `data: {x: {{ .Files.Get "config/read.txt" | quote }}}`,
		"charts/all/Chart.yaml":             "apiVersion: v2\nname: all\nversion: 1.0.0\n",
		"charts/all/README.md":              "kept",
		"charts/all/templates/cm.yaml":      `data: {{ .Files.AsConfig | nindent 2 }}`,
		"charts/all/charts/deep/Chart.yaml": "apiVersion: v2\nname: deep\nversion: 1.0.0\n",
		"charts/all/charts/deep/README.md":  "kept under a parent that reads all",
		"charts/doc/Chart.yaml":             "apiVersion: v2\nname: doc\nversion: 1.0.0\n",
		"charts/doc/README.md":              "dropped",
		"charts/doc/templates/cm.yaml":      "data: {}\n",
	}
	for name, text := range files {
		p := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	packed, err := chartutil.Save(&helmchart.Chart{Metadata: &helmchart.Metadata{APIVersion: "v2", Name: "packed", Version: "1.0.0"},
		Files: []*helmchart.File{{Name: "README.md", Data: []byte("in the archive")}}}, filepath.Join(src, "charts"))
	if err != nil {
		t.Fatal(err)
	}
	archive, err := os.ReadFile(packed)
	if err != nil {
		t.Fatal(err)
	}
	files["charts/packed-1.0.0.tgz"] = string(archive)
	dst := filepath.Join(t.TempDir(), "copy")
	if err := CopyWithoutUnreadFiles(src, dst); err != nil {
		t.Fatal(err)
	}
	dropped := map[string]bool{"README.md": true, "config/unread.txt": true, "charts/doc/README.md": true}
	for name, text := range files {
		b, err := os.ReadFile(filepath.Join(dst, filepath.FromSlash(name)))
		switch {
		case dropped[name] && !os.IsNotExist(err):
			t.Errorf("%s: copied (%v)", name, err)
		case !dropped[name] && err != nil:
			t.Errorf("%s: %v", name, err)
		case !dropped[name] && string(b) != text:
			t.Errorf("%s: %q, want %q", name, b, text)
		}
	}
	if err := CopyWithoutUnreadFiles(filepath.Join(src, "missing"), filepath.Join(t.TempDir(), "x")); err == nil {
		t.Error("a missing chart copied without an error")
	}
}
