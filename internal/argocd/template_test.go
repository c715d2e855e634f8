package argocd

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestPrepareTemplateMergesAsHelm: an umbrella chart's value file, inline
// values and parameters merge as Argo CD passes them to helm template
// (files in order, inline values last among files, --set over all,
// --set-string after --set); the chart's own values.yaml is not a value
// file (Helm reads it as the chart's defaults).
func TestPrepareTemplateMergesAsHelm(t *testing.T) {
	files := map[string][]byte{
		"Chart.yaml":       []byte("apiVersion: v2\nname: codefresh-gitops-runtime\nversion: 0.30.0\n"),
		"values.yaml":      []byte("a: chart\n"),
		"values-prod.yaml": []byte("a: prod\nb: prod\nc: prod\nm: {x: 1, v: 1}\n"),
	}
	base := SyncBase{ReleaseName: "rt1", Namespace: "codefresh", ValueFiles: []string{"./values-prod.yaml"}, InlineValues: "b: inline\nd: inline\nm: {v: 2}\n",
		Parameters: []SyncParameter{{Name: "d", Value: "2", ForceString: true}, {Name: "c", Value: "1"}, {Name: "e", Value: "true"}}}
	tpl, err := PrepareTemplate(base, "codefresh-gitops-runtime", files)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": "prod", "b": "inline", "c": int64(1), "d": "2", "e": true, "m": map[string]any{"x": float64(1), "v": float64(2)}}
	if !reflect.DeepEqual(tpl.Values, want) {
		t.Errorf("values %#v, want %#v", tpl.Values, want)
	}
	if tpl.ReleaseName != "rt1" || tpl.Namespace != "codefresh" || !tpl.IncludeCRDs || len(tpl.Unread) != 0 {
		t.Errorf("template %+v", tpl)
	}
	base.SkipCRDs = true
	if tpl, err := PrepareTemplate(base, "c", files); err != nil || tpl.IncludeCRDs {
		t.Errorf("skipCrds: %+v, %v", tpl, err)
	}
	if _, err := PrepareTemplate(SyncBase{ValueFiles: []string{"missing.yaml"}}, "c", files); err == nil || !strings.Contains(err.Error(), `Application value file "missing.yaml" is not in chart c`) {
		t.Errorf("a missing value file: %v", err)
	}
	if _, err := PrepareTemplate(SyncBase{ValueFiles: []string{"missing.yaml"}, IgnoreMissingValueFiles: true}, "c", files); err != nil {
		t.Errorf("ignoreMissingValueFiles: %v", err)
	}
}

// TestPrepareTemplateInlineValues: valuesObject wins over values; values
// that do not parse, and a parameter Helm cannot parse, are a ValuesError
// naming where they come from.
func TestPrepareTemplateInlineValues(t *testing.T) {
	tpl, err := PrepareTemplate(SyncBase{InlineValues: "a: text\n", ValuesObject: map[string]any{"a": "object"}}, "c", nil)
	if err != nil || !reflect.DeepEqual(tpl.Values, map[string]any{"a": "object"}) {
		t.Errorf("valuesObject over values: %v, %v", tpl, err)
	}
	for name, b := range map[string]SyncBase{
		"inline":     {InlineValues: "a: [\n"},
		"value file": {ValueFiles: []string{"bad.yaml"}},
		"parameter":  {Parameters: []SyncParameter{{Name: "a[", Value: "1"}}},
	} {
		_, err := PrepareTemplate(b, "c", map[string][]byte{"bad.yaml": []byte("a: [\n")})
		var ve *ValuesError
		if !errors.As(err, &ve) || !strings.HasPrefix(ve.Msg, "the Application's helm values: ") {
			t.Errorf("%s: %v, want a ValuesError", name, err)
		}
	}
	_, err = PrepareTemplate(SyncBase{ValueFiles: []string{"bad.yaml"}}, "c", map[string][]byte{"bad.yaml": []byte("a: [\n")})
	if err == nil || !strings.Contains(err.Error(), "failed to parse bad.yaml: ") {
		t.Errorf("the error names the value file: %v", err)
	}
}

// TestPrepareTemplateFromAnotherSource: a multi-source Application's value
// file "$values/PATH" is read from the checkout of the source whose ref is
// values, in its place among the value files; without a checkout it is
// left out and said (never an error); a ref no source has, a file the
// checkout lacks, or a path out of the repository is an error.
func TestPrepareTemplateFromAnotherSource(t *testing.T) {
	files := map[string][]byte{"values-a.yaml": []byte("a: chart-file\nb: chart-file\n")}
	checkout := t.TempDir()
	if err := os.MkdirAll(filepath.Join(checkout, "values"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(checkout, "values", "codefresh.yaml"), []byte("b: other-repo\nc: other-repo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := SyncBase{ValueFiles: []string{"values-a.yaml", "$values/values/codefresh.yaml"}, InlineValues: "c: inline\n",
		Refs: map[string]SyncRef{"values": {RepoURL: "https://git.example/org/values.git", TargetRevision: "main", Dir: checkout}}}
	tpl, err := PrepareTemplate(base, "gitops-runtime", files)
	if err != nil || len(tpl.Unread) != 0 {
		t.Fatal(err, tpl)
	}
	if want := map[string]any{"a": "chart-file", "b": "other-repo", "c": "inline"}; !reflect.DeepEqual(tpl.Values, want) {
		t.Errorf("values %#v, want %#v", tpl.Values, want)
	}
	base.Refs = map[string]SyncRef{"values": {RepoURL: "https://git.example/org/values.git"}}
	if tpl, err = PrepareTemplate(base, "gitops-runtime", files); err != nil {
		t.Fatal(err)
	}
	if len(tpl.Unread) != 1 || tpl.Unread[0] != "$values/values/codefresh.yaml (ref values: https://git.example/org/values.git at HEAD)" {
		t.Errorf("unread %q", tpl.Unread)
	}
	if want := map[string]any{"a": "chart-file", "b": "chart-file", "c": "inline"}; !reflect.DeepEqual(tpl.Values, want) {
		t.Errorf("values without the checkout %#v, want %#v", tpl.Values, want)
	}
	for name, b := range map[string]SyncBase{
		"unknown ref":     {ValueFiles: []string{"$other/values.yaml"}, Refs: base.Refs},
		"missing file":    {ValueFiles: []string{"$values/nope.yaml"}, Refs: map[string]SyncRef{"values": {Dir: checkout}}},
		"out of the repo": {ValueFiles: []string{"$values/../x.yaml"}, Refs: map[string]SyncRef{"values": {Dir: checkout}}},
	} {
		var ve *ValuesError
		if _, err := PrepareTemplate(b, "gitops-runtime", files); !errors.As(err, &ve) {
			t.Errorf("%s: %v, want a ValuesError", name, err)
		}
	}
	if _, err := PrepareTemplate(SyncBase{ValueFiles: []string{"$values/nope.yaml"}, IgnoreMissingValueFiles: true, Refs: map[string]SyncRef{"values": {Dir: checkout}}}, "gitops-runtime", files); err != nil {
		t.Errorf("ignoreMissingValueFiles: %v", err)
	}
}
