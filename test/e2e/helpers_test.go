package e2e

import (
	"os"
	"path/filepath"
	"testing"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// fakeHelm writes an executable that prints `version` as `helm version
// --short` would and returns the HELM_BIN=... environment entry for it.
func fakeHelm(t *testing.T, version string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "helm")
	script := "#!/bin/sh\nif [ \"$1\" = version ]; then echo '" + version + "'; exit 0; fi\nexit 1\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return "HELM_BIN=" + p
}

// wantStatus is expectCheck, the one assertion on a check of a report (the
// older name).
func wantStatus(t *testing.T, doc reporters.Document, id, status string, msgs ...string) reporters.CheckDocument {
	t.Helper()
	return expectCheck(t, doc, id, status, msgs...)
}

func wantCode(t *testing.T, res tc.Result, code int) {
	t.Helper()
	if res.Code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", res.Code, code, res.Stdout, res.Stderr)
	}
}
