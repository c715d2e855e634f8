package checks

import (
	"reflect"
	"testing"

	rspb "helm.sh/helm/v3/pkg/release"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

func TestKeptDefaults(t *testing.T) {
	up := func(reuse bool) *chart.Upgrade {
		return &chart.Upgrade{
			Options: chart.UpgradeValues{Reuse: reuse},
			// The target chart's defaults.
			TargetDefaults: map[string]any{"global": map[string]any{
				"image":   map[string]any{"tag": "0.27", "registry": "quay.io"},
				"runtime": map[string]any{"name": ""},
				"newKey":  true,
			}},
			// What the templates see with --reuse-values: the previous
			// computed values (the deployed chart's defaults, the user's).
			TargetComputed: map[string]any{"global": map[string]any{
				"image":   map[string]any{"tag": "0.26", "registry": "quay.io"},
				"runtime": map[string]any{"name": "rt1"},
			}},
			Current: &rspb.Release{Config: map[string]any{"global": map[string]any{"runtime": map[string]any{"name": "rt1"}}}},
		}
	}
	got := keptDefaults(up(true))
	want := []string{"global.image.tag (0.26 → 0.27)", "global.newKey (unset → true)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("keptDefaults = %q, want %q (the user's runtime name is not a default)", got, want)
	}
	if got := keptDefaults(up(false)); got != nil {
		t.Errorf("without --reuse-values: %q, want none", got)
	}
}
