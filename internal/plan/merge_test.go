package plan

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
)

// TestMergeIsHelms: Merge gives what Helm's own pkg/cli/values
// Options.MergeValues gives for the same files, --set and --set-string
// (maps merged key by key, a later scalar or list replacing, null kept,
// --set before --set-string whatever their order on the command line),
// and fails where it fails, naming the file.
func TestMergeIsHelms(t *testing.T) {
	files := []ValuesFile{
		{Name: "a.yaml", Data: []byte("a: {x: 1, w: [1, 2]}\nb: keep\nc: {d: 1}\n")},
		{Name: "b.yaml", Data: []byte("a: {w: [3], z: null}\nc: scalar\ne: {f: true}\n")},
		{Name: "empty.yaml", Data: nil},
	}
	sets := []string{"a.x=2", "g=1,h.i=two", "list={a,b}"}
	stringSets := []string{"a.x=3", "j=true"}
	got, err := Merge(files, sets, stringSets)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var opts values.Options
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		if err := os.WriteFile(p, f.Data, 0o600); err != nil {
			t.Fatal(err)
		}
		opts.ValueFiles = append(opts.ValueFiles, p)
	}
	opts.Values, opts.StringValues = sets, stringSets
	want, err := opts.MergeValues(getter.Providers{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Merge\n got %#v\nwant %#v (Helm's)", got, want)
	}
	if _, err := Merge([]ValuesFile{{Name: "bad.yaml", Data: []byte("a: [\n")}}, nil, nil); err == nil || !strings.HasPrefix(err.Error(), "failed to parse bad.yaml: ") {
		t.Errorf("a file that does not parse: %v", err)
	}
	if _, err := Merge(nil, []string{"a[=1"}, nil); err == nil || !strings.HasPrefix(err.Error(), "failed parsing --set data: ") {
		t.Errorf("a --set that does not parse: %v", err)
	}
	if _, err := Merge(nil, nil, []string{"a[=1"}); err == nil || !strings.HasPrefix(err.Error(), "failed parsing --set-string data: ") {
		t.Errorf("a --set-string that does not parse: %v", err)
	}
}
