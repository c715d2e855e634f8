package checks

import (
	"path/filepath"
	"testing"
)

// TestUpgradePath runs upgrade-path through the kit on a deployed release
// and a target chart: a step no rule forbids passes, skipping 0.26 fails
// with the version to upgrade to first and the command, a downgrade warns,
// and without a loadable chart it skips.
func TestUpgradePath(t *testing.T) {
	for _, tt := range []struct {
		name     string
		from, to string
		want     outcome
	}{
		{"0.26 to 0.27", "0.26.3", "0.27.0", outcome{StatusPass, []string{"chart 0.26.3 → 0.27.0: no documented step in between"}}},
		{"within 0.30", "0.30.0", "0.30.1", outcome{StatusPass, []string{"chart 0.30.0 → 0.30.1"}}},
		{"0.25 to 0.27 skips 0.26", "0.25.2", "0.27.0", outcome{StatusFail, []string{
			"chart 0.25.2 → 0.27.0 skips 0.26: upgrade to 0.26.x first", "You MUST upgrade to version 0.26.x",
			"https://github.com/codefresh-io/gitops-runtime-helm/commit/3887b8f4",
			"helm upgrade " + DefaultReleaseName + " ", " -n " + DefaultNamespace + " --version '~0.26'", "check the upgrade to 0.27.0 again"}}},
		{"downgrade", "0.30.0", "0.27.0", outcome{StatusWarn, []string{"chart 0.30.0 → 0.27.0 is a downgrade", "helm rollback " + DefaultReleaseName + " -n " + DefaultNamespace}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := targetChart(t, tt.to, "", configMapTemplate)
			rel := deployed{Version: tt.from, Manifest: configMapManifest}.record(t)
			tt.want.expect(t, newKit(t).objects(rel).with(Inputs{Chart: c}).inMode(ModeUpgrade).withChart(c).run(UpgradePath()))
		})
	}
	t.Run("no chart", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "missing")
		rel := deployed{Version: "0.26.0", Manifest: configMapManifest}.record(t)
		outcome{StatusSkip, []string{"missing"}}.expect(t, newKit(t).objects(rel).with(Inputs{Chart: missing}).inMode(ModeUpgrade).withChart(missing).run(UpgradePath()))
	})
}
