package argocd

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSetCheckouts: a source of the chart's own repository is read from
// the checkout --chart is in; another repository only from the checkout
// --argocd-source gives, which also wins over the chart's.
func TestSetCheckouts(t *testing.T) {
	root := t.TempDir()
	chartDir := filepath.Join(root, "resources", "rt1", "chart")
	if err := os.MkdirAll(chartDir, 0o755); err != nil {
		t.Fatal(err)
	}
	given := t.TempDir()
	base := func() *SyncBase {
		return &SyncBase{SourceRepoURL: "https://git.example/org/isc.git", SourcePath: "resources/rt1/chart", Refs: map[string]SyncRef{
			"isc":    {RepoURL: "https://GIT.example/org/isc/"},
			"values": {RepoURL: "https://git.example/org/values.git"},
		}}
	}
	b := base()
	b.SetCheckouts(nil, chartDir)
	if b.Refs["isc"].Dir != root || b.Refs["values"].Dir != "" {
		t.Errorf("dirs %+v, want isc at %s, values unread", b.Refs, root)
	}
	b = base()
	b.SetCheckouts(map[string]string{"values": given, "isc": given}, chartDir)
	if b.Refs["isc"].Dir != given || b.Refs["values"].Dir != given {
		t.Errorf("dirs %+v, want both at %s", b.Refs, given)
	}
	b = base()
	b.SetCheckouts(nil, filepath.Join(root, "elsewhere"))
	if b.Refs["isc"].Dir != "" {
		t.Errorf("a chart outside the source's path: %+v", b.Refs)
	}
}

// TestSameRepo compares repository URLs as Argo CD normalizes them.
func TestSameRepo(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"https://git.example/org/isc.git", "https://GIT.example/org/isc/", true},
		{"https://git.example/org/isc", " https://git.example/org/isc.git ", true},
		{"https://git.example/org/isc", "https://git.example/org/values", false},
		{"", "", false},
	} {
		if got := SameRepo(c.a, c.b); got != c.same {
			t.Errorf("SameRepo(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
