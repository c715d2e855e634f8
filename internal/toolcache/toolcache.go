// Package toolcache names the folder where make, the end-to-end tests and
// the demo keep the tools they build from the Go module proxy (the test
// control plane, golangci-lint, the Helm 3 and 4 clients, Argo CD), each in a
// subfolder named after its version, so that every checkout on a machine
// shares one build of each. `make distclean` removes it.
package toolcache

import (
	"os"
	"path/filepath"
)

// Dir is kubectl-gitops-preflight in the user cache directory
// (os.UserCacheDir: $XDG_CACHE_HOME, else ~/.cache on Linux;
// ~/Library/Caches on macOS). It fails only when no such directory can be
// named ($HOME unset).
func Dir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "kubectl-gitops-preflight"), nil
}
