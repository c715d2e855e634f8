package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

// TestWithCheckouts: a source of the chart's own repository is read from
// the checkout --chart is in; another repository only from the checkout
// --argocd-source gives, which also wins over the chart's.
func TestWithCheckouts(t *testing.T) {
	root := t.TempDir()
	chartDir := filepath.Join(root, "resources", "rt1", "chart")
	if err := os.MkdirAll(chartDir, 0o755); err != nil {
		t.Fatal(err)
	}
	given := t.TempDir()
	base := func() *chart.SyncBase {
		return &chart.SyncBase{SourceRepoURL: "https://git.example/org/isc.git", SourcePath: "resources/rt1/chart", Refs: map[string]chart.SyncRef{
			"isc":    {RepoURL: "https://GIT.example/org/isc/"},
			"values": {RepoURL: "https://git.example/org/values.git"},
		}}
	}
	b := base()
	withCheckouts(b, nil, chartDir)
	if b.Refs["isc"].Dir != root || b.Refs["values"].Dir != "" {
		t.Errorf("dirs %+v, want isc at %s, values unread", b.Refs, root)
	}
	b = base()
	withCheckouts(b, map[string]string{"values": given, "isc": given}, chartDir)
	if b.Refs["isc"].Dir != given || b.Refs["values"].Dir != given {
		t.Errorf("dirs %+v, want both at %s", b.Refs, given)
	}
	b = base()
	withCheckouts(b, nil, filepath.Join(root, "elsewhere"))
	if b.Refs["isc"].Dir != "" {
		t.Errorf("a chart outside the source's path: %+v", b.Refs)
	}
}
