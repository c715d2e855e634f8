package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// expectReplayed asserts the statuses of checks in a report (any exit
// code), on a run recorded with --bundle whose replay must agree with it
// (testcluster.RunJSONReplayed).
func expectReplayed(t *testing.T, c *testcluster.Cluster, want map[string]string, args ...string) {
	t.Helper()
	expectCodeReplayed(t, c, anyCode, want, args...)
}

// sameReport fails the test when two JSON reports differ, apart from the
// checks whose replay may differ (Meta.ReplayDiffers).
func sameReport(t *testing.T, live, replay reporters.Document) {
	t.Helper()
	testcluster.SameReport(t, live, replay)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// run runs a program with exactly env and returns its combined output and
// exit code; it fails the test only when the program cannot start.
func run(t *testing.T, env []string, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	default:
		t.Fatalf("running %s: %v", name, err)
		return "", -1
	}
}

// helmRun is run with stdout and stderr apart.
func helmRun(t *testing.T, env []string, helm string, args ...string) testcluster.Result {
	t.Helper()
	// A run of the checks through Helm gets the harness's blackhole rules too,
	// so that platform-reachable never dials the real platform hosts.
	if len(args) > 1 && args[0] == "gitops-preflight" && strings.HasPrefix(args[1], "-") {
		args = append(append([]string(nil), args...), testcluster.Blackhole...)
	}
	cmd := exec.Command(helm, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := testcluster.Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running helm: %v", err)
	}
	return res
}

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

func wantCode(t *testing.T, res testcluster.Result, code int) {
	t.Helper()
	if res.Code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", res.Code, code, res.Stdout, res.Stderr)
	}
}

// concurrently returns run, which runs f as the subtest name of t in a
// goroutine of its own, and wait, which returns when every subtest run
// started has ended. t.Run may be called from several goroutines at once:
// the subtests run beside each other without taking a slot of go test's
// -parallel (which the suite's other tests hold).
func concurrently(t *testing.T) (run func(name string, f func(t *testing.T)), wait func()) {
	var wg sync.WaitGroup
	return func(name string, f func(t *testing.T)) { wg.Go(func() { t.Run(name, f) }) }, wg.Wait
}

// anyCode, as expectCodeReplayed's code, asserts no exit code.
const anyCode = -1

// expectCodeReplayed runs the plugin with args, recorded with --bundle
// and replayed (the replay must agree: testcluster.RunJSONReplayed), and
// asserts the statuses of checks in its report and its exit code (unless
// anyCode).
func expectCodeReplayed(t *testing.T, c *testcluster.Cluster, code int, want map[string]string, args ...string) {
	t.Helper()
	res, doc := c.RunJSONReplayed(t, nil, args...)
	for id, st := range want {
		if got := testcluster.Check(t, doc, id); string(got.Status) != st {
			t.Errorf("%s: %s = %s (%s), want %s\nstderr: %s", strings.Join(args, " "), id, got.Status, got.Message, st, res.Stderr)
		}
	}
	if code != anyCode && res.Code != code {
		t.Errorf("%s: exit %d, want %d\nstdout: %s", strings.Join(args, " "), res.Code, code, res.Stdout)
	}
}

// post runs `--post` with args and returns the report.
func post(t *testing.T, c *testcluster.Cluster, args ...string) (testcluster.Result, reporters.Document) {
	t.Helper()
	return c.RunJSON(t, nil, append([]string{"--post"}, args...)...)
}

// wantStatus asserts a check's status and that its message contains each of want.
func wantStatus(t *testing.T, doc reporters.Document, id, status string, want ...string) reporters.CheckDocument {
	t.Helper()
	ch := testcluster.Check(t, doc, id)
	if ch.Status != status {
		t.Fatalf("%s = %s (%s; hint %q), want %s", id, ch.Status, ch.Message, ch.Hint, status)
	}
	for _, w := range want {
		if !strings.Contains(ch.Message, w) && !strings.Contains(ch.Hint, w) {
			t.Fatalf("%s message %q / hint %q lacks %q", id, ch.Message, ch.Hint, w)
		}
	}
	return ch
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// postReplayed is post on a run recorded with --bundle whose replay must
// agree with it (testcluster.RunJSONReplayed).
func postReplayed(t *testing.T, c *testcluster.Cluster, args ...string) (testcluster.Result, reporters.Document) {
	t.Helper()
	return c.RunJSONReplayed(t, nil, append([]string{"--post"}, args...)...)
}
