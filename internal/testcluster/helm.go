package testcluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/toolcache"
)

// HelmVersion is the Helm 3 client the end-to-end tests use: the Helm module
// this repository already depends on, so building it needs no module outside
// go.sum's neighbourhood.
const HelmVersion = "v3.22.0"

// Helm4Version is the Helm 4 client the end-to-end tests run beside Helm 3.
const Helm4Version = "v4.3.1"

var helmBinary, helm4Binary memo

// HelmGOGC is the GOGC environment entry the tests give the Helm clients
// they run (and Argo CD's repo-server, whose renders are Helm's): a render
// of the gitops-runtime chart 0.30.0 allocates about 1.6 GB over a few
// seconds, and collecting at 1000 % heap growth instead of the 400 the
// rest of the test processes get (TestMain) takes about 7 % less CPU for
// a heap of about 300 MB instead of 160 MB.
const HelmGOGC = "GOGC=1000"

// helmProfile is the CPU profile the Helm clients are built with (go
// install -pgo, https://go.dev/doc/pgo): `helm template` of every chart line
// in the fixtures, by both clients, written by `go run ./hack/helmpgo`.
// Profile-guided optimization changes how the compiler inlines and lays out
// Helm's own code, not what it does: the same source at the same version,
// rendering the same manifests for about an eighth less CPU (a Helm call
// of the tests is mostly that render).
//
//go:embed helm.pgo
var helmProfile []byte

// HelmBinary returns a real helm client of HelmVersion: $HELM_E2E_BIN when
// set, else one built once with `go install -pgo helm.sh/helm/v3/cmd/helm@HelmVersion`
// (helmProfile) into <user cache dir>/kubectl-gitops-preflight/helm-HelmVersion-pgo-<profile digest>
// and reused by later runs. It is built with Helm's release ldflag for its version, so
// `helm version` prints the full version as a released helm does. The test
// fails, saying why, when it cannot be built (no Go module proxy, say).
func HelmBinary(t testing.TB) string {
	t.Helper()
	return helmBinary.get(t, "HELM_E2E_BIN", func() (string, error) {
		return buildHelm("helm.sh/helm/v3", HelmVersion, "HELM_E2E_BIN")
	})
}

// Helm4Binary is HelmBinary for Helm 4 (module helm.sh/helm/v4, version
// Helm4Version): $HELM4_E2E_BIN when set, else built once and cached the same
// way.
func Helm4Binary(t testing.TB) string {
	t.Helper()
	return helm4Binary.get(t, "HELM4_E2E_BIN", func() (string, error) {
		return buildHelm("helm.sh/helm/v4", Helm4Version, "HELM4_E2E_BIN")
	})
}

// buildHelm builds module's cmd/helm at version into the user cache directory
// unless a helm reporting that version is already there, and returns its path.
func buildHelm(module, version, envVar string) (string, error) {
	cache, err := ToolCacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(helmProfile)
	dir := filepath.Join(cache, "helm-"+version+"-pgo-"+hex.EncodeToString(sum[:6]))
	path := filepath.Join(dir, "helm")
	if helmReports(path, version) {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// A build takes minutes: say so (make test shows lines that start
	// "testcluster: ").
	fmt.Fprintf(os.Stderr, "testcluster: building helm %s (once, a few minutes; cached in %s)\n", version, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	pkg := module + "/cmd/helm@" + version
	profile := filepath.Join(dir, "helm.pgo")
	if err := os.WriteFile(profile, helmProfile, 0o644); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "install", "-pgo", profile,
		"-ldflags", "-X "+module+"/internal/version.version="+version+" -X "+module+"/internal/version.gitTreeState=clean",
		pkg)
	cmd.Dir = dir // outside this module: `go install pkg@version` ignores go.mod
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", errors.New("building helm " + version + " (go install " + pkg + "; set " + envVar + " to use another helm): " + err.Error() + "\n" + string(out))
	}
	if !helmReports(path, version) {
		return "", errors.New("the helm built in " + dir + " does not report " + version)
	}
	return path, nil
}

// ToolCacheDir is where the tests and the demo keep the tools they build
// (the Helm 3 and 4 clients; make keeps the control plane and golangci-lint
// there too): internal/toolcache.Dir. `make distclean` removes it.
func ToolCacheDir() (string, error) { return toolcache.Dir() }

func helmReports(path, version string) bool {
	out, err := exec.Command(path, "version", "--short").Output()
	return err == nil && strings.HasPrefix(string(bytes.TrimSpace(out)), version)
}
