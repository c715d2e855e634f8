package testcluster

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// HelmVersion is the Helm client the Helm-plugin e2e test installs the plugin
// into: the Helm module this repository already depends on, so building it
// needs no module outside go.sum's neighbourhood.
const HelmVersion = "v3.22.0"

var helmBinary memo

// HelmBinary returns a real helm client of HelmVersion: $HELM_E2E_BIN when
// set, else one built once with `go install helm.sh/helm/v3/cmd/helm@HelmVersion`
// into <user cache dir>/kubectl-gitops-preflight/helm-HelmVersion and reused
// by later runs. It is built with Helm's release ldflag for its version, so
// `helm version` prints the full version as a released helm does. The test
// fails, saying why, when it cannot be built (no Go module proxy, say).
func HelmBinary(t testing.TB) string {
	t.Helper()
	return helmBinary.get(t, "HELM_E2E_BIN", func() (string, error) {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir := filepath.Join(cache, "kubectl-gitops-preflight", "helm-"+HelmVersion)
		path := filepath.Join(dir, "helm")
		if helmReports(path, HelmVersion) {
			return path, nil
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "install",
			"-ldflags", "-X helm.sh/helm/v3/internal/version.version="+HelmVersion+" -X helm.sh/helm/v3/internal/version.gitTreeState=clean",
			"helm.sh/helm/v3/cmd/helm@"+HelmVersion)
		cmd.Dir = dir // outside this module: `go install pkg@version` ignores go.mod
		cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", errors.New("building helm " + HelmVersion + " (go install helm.sh/helm/v3/cmd/helm@" + HelmVersion + "; set HELM_E2E_BIN to use another helm): " + err.Error() + "\n" + string(out))
		}
		if !helmReports(path, HelmVersion) {
			return "", errors.New("the helm built in " + dir + " does not report " + HelmVersion)
		}
		return path, nil
	})
}

func helmReports(path, version string) bool {
	out, err := exec.Command(path, "version", "--short").Output()
	return err == nil && strings.HasPrefix(string(bytes.TrimSpace(out)), version)
}
