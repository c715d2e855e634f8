package checks

import (
	"net"
	"path/filepath"
	"testing"

	rspb "helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// closedServer returns the address of a local port nothing listens on: an
// API server that is down.
func closedServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// TestUpgradeApplyCannotTry runs upgrade-apply through the kit where it
// cannot try the upgrade's writes, each a skip saying why: no REST
// configuration (a snapshot over fakes, a replayed bundle), an API server
// that does not answer, no chart, a release Helm refuses to upgrade. Its
// dry runs need a real API server, which the kit's fakes are not: the
// end-to-end upgrade cases (test/e2e/upgrade_test.go) run it against one,
// where it passes and fails as Helm does.
func TestUpgradeApplyCannotTry(t *testing.T) {
	c := targetChart(t, "0.31.0", "", configMapTemplate)
	deployedCM := func(t *testing.T) runtime.Object {
		return deployed{Version: "0.30.0", Manifest: configMapManifest}.record(t)
	}
	for _, tt := range []struct {
		name  string
		rel   func(*testing.T) runtime.Object
		chart string
		rest  func(*testing.T) *rest.Config
		want  outcome
	}{
		{"no REST configuration", deployedCM, c, nil,
			outcome{StatusSkip, []string{"no REST configuration to send dry runs with"}}},
		{"the API server does not answer", deployedCM, c, func(t *testing.T) *rest.Config { return &rest.Config{Host: closedServer(t)} },
			outcome{StatusSkip, []string{"the upgrade could not be tried: ", "connection refused"}}},
		{"no chart", deployedCM, filepath.Join(t.TempDir(), "missing"), nil,
			outcome{StatusSkip, []string{"missing"}}},
		{"Helm refuses the release", func(t *testing.T) runtime.Object {
			return helmRelease(t, DefaultNamespace, DefaultReleaseName, 1, rspb.StatusUninstalled, "")
		}, c, nil,
			outcome{StatusSkip, []string{"helm upgrade refuses the release (release-upgradable)"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := newKit(t).objects(tt.rel(t)).inMode(ModeUpgrade).helm(3).withChart(tt.chart)
			if tt.rest != nil {
				k.withREST(tt.rest(t))
			}
			tt.want.expect(t, k.run(UpgradeApply()))
		})
	}
}
