package e2e

import (
	"os"
	"testing"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestMain runs the tests with the suite's slots (testcluster.Parallel): as
// many at once as go test's -parallel says, the long ones first.
//
// The programs the tests start from this environment (Helm, kubectl, etcd,
// kube-apiserver, the controllers and kwok) collect garbage at GOGC=400
// unless GOGC is set: the same behaviour for about an eighth less of their
// CPU (helm template of the chart 0.30.0: 4.8 s of CPU at Go's default, 4.2
// s at 400, with 166 MB instead of 106 MB of RSS), on the 2 cores the
// suite shares. Helm gets testcluster.HelmGOGC and the plugin's runs
// testcluster.PluginGOGC instead (testcluster.Run gives it PATH, HOME and
// that only).
func TestMain(m *testing.M) {
	if _, set := os.LookupEnv("GOGC"); !set {
		_ = os.Setenv("GOGC", "400")
	}
	os.Exit(tc.RunParallel(m))
}
