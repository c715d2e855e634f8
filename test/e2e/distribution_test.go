package e2e

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

const versionPkg = "github.com/gitops-preflight/kubectl-gitops-preflight/internal/version"

// TestKubectlPlugin runs the plugin through the real kubectl on PATH, as a
// user does: a binary built with release ldflags is put as
// kubectl-gitops_preflight in a directory on PATH together with the
// kubectl_complete-gitops_preflight helper from the repository root.
// No control plane: neither command reads the cluster.
func TestKubectlPlugin(t *testing.T) {
	testcluster.Parallel(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl is not on PATH; the kubectl plugin test needs the real kubectl")
	}
	root := testcluster.RepoRoot(t)
	dir := t.TempDir()
	// Built as make build and make dist build it (static, -trimpath), so
	// that the Go build cache already holds every package.
	build := exec.Command("go", "build", "-trimpath", "-ldflags",
		"-X "+versionPkg+".Version=v9.8.7-e2e -X "+versionPkg+".Commit=abc1234 -X "+versionPkg+".Date=2026-01-02T03:04:05Z",
		"-o", filepath.Join(dir, "kubectl-gitops_preflight"), "./cmd/kubectl-gitops_preflight")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	copyFile(t, filepath.Join(root, "kubectl_complete-gitops_preflight"), filepath.Join(dir, "kubectl_complete-gitops_preflight"), 0o755)
	env := []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + t.TempDir()}

	out, _ := run(t, env, kubectl, "gitops-preflight", "version")
	for _, want := range []string{"kubectl gitops-preflight v9.8.7-e2e\n", "commit: abc1234\n", "built:  2026-01-02T03:04:05Z\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl gitops-preflight version printed %q, want it to contain %q", out, want)
		}
	}
	out, _ = run(t, env, kubectl, "gitops-preflight", "--version")
	if !strings.HasPrefix(out, "kubectl gitops-preflight v9.8.7-e2e\n") {
		t.Errorf("kubectl gitops-preflight --version printed %q", out)
	}

	// kubectl >= 1.26 completes plugins through kubectl_complete-<name> on PATH.
	// Only the checks of the selected mode are offered (the run rejects the
	// others), and nothing but candidates reaches the shell (the helper drops
	// cobra's stderr notes; run captures stdout and stderr together).
	out, _ = run(t, env, kubectl, "__complete", "gitops-preflight", "--only", "")
	for _, c := range checks.All() {
		if strings.Contains(out, c.ID+"\t") != c.Modes.Has(checks.ModePre) {
			t.Errorf("kubectl __complete gitops-preflight --only '': %s offered=%v, modes %s:\n%s", c.ID, !c.Modes.Has(checks.ModePre), c.Modes, out)
		}
	}
	// kubectl's own __complete notes its directive on stderr once; a second
	// note would be the helper's, which reaches the user's shell.
	if n := strings.Count(out, "Completion ended"); n != 1 {
		t.Errorf("%d directive notes: the completion helper lets cobra's stderr through:\n%s", n, out)
	}
	// Fixed choices are all offered; the shell filters them by the prefix.
	out, _ = run(t, env, kubectl, "__complete", "gitops-preflight", "-o", "")
	for _, f := range []string{"table", "wide", "json", "yaml", "junit"} {
		if !strings.Contains(out, "\n"+f+"\n") {
			t.Errorf("kubectl __complete gitops-preflight -o '' lacks %s:\n%s", f, out)
		}
	}
}

// TestHelmPlugin installs the plugin into a real Helm (own HELM_*_HOME dirs)
// from a checkout laid out as `make build` leaves it (plugin.yaml,
// plugin.complete, bin/kubectl-gitops_preflight) and runs `helm
// gitops-preflight` against the test API server. It shows that Helm's
// --kube-context, -n and --kubeconfig reach the plugin (as HELM_KUBECONTEXT,
// HELM_NAMESPACE and KUBECONFIG), that explicit plugin flags win, that Helm
// passes the exit code through, and that HELM_BIN feeds helm-version.
func TestHelmPlugin(t *testing.T) {
	testcluster.Parallel(t)
	helm := testcluster.HelmBinary(t)
	root := testcluster.RepoRoot(t)
	c := testcluster.Start(t)
	c.AddNode(t, testcluster.NodeSpec{Name: "node-1", CPU: "4", Memory: "16Gi"})
	c.CreateNamespace(t, "team-a")

	// A kubeconfig whose current context is unreachable; "good" is the cluster.
	kubeconfig := goodAndBrokenKubeconfig(t, c)

	checkout := pluginCheckout(t, root)

	home := t.TempDir()
	base := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"HELM_CONFIG_HOME=" + filepath.Join(home, "config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "data"),
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"),
	}
	env := append(append([]string(nil), base...), "KUBECONFIG="+kubeconfig)

	if out, code := run(t, env, helm, "plugin", "install", checkout); code != 0 {
		t.Fatalf("helm plugin install: exit %d\n%s", code, out)
	}
	out, _ := run(t, env, helm, "plugin", "list")
	if !strings.Contains(out, "gitops-preflight") || !strings.Contains(out, "0.1.0") {
		t.Fatalf("helm plugin list does not show gitops-preflight 0.1.0:\n%s", out)
	}

	t.Run("Helm's context and namespace", func(t *testing.T) {
		res := helmRun(t, env, helm, "gitops-preflight", "--kube-context", "good", "-n", "team-a", "-o", "json")
		if res.Code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
		}
		doc := res.JSON(t)
		if doc.Cluster.Context != "good" {
			t.Errorf("cluster.context = %q, want good (HELM_KUBECONTEXT)", doc.Cluster.Context)
		}
		if ns := testcluster.Check(t, doc, "runtime-namespace"); ns.Status != "pass" || !strings.Contains(ns.Message, "namespace team-a exists") {
			t.Errorf("runtime-namespace: %s %q, want pass about team-a (HELM_NAMESPACE)", ns.Status, ns.Message)
		}
		if hv := testcluster.Check(t, doc, "helm-version"); hv.Status != "pass" || !strings.Contains(hv.Message, "3.22.0") {
			t.Errorf("helm-version: %s %q, want pass with 3.22.0 (HELM_BIN)", hv.Status, hv.Message)
		}
		if strings.Contains(res.Stderr, "\r") {
			t.Errorf("progress line written to a non-terminal stderr: %q", res.Stderr)
		}
	})
	t.Run("without --kube-context the unreachable current context is used", func(t *testing.T) {
		res := helmRun(t, env, helm, "gitops-preflight", "-o", "json")
		if res.Code != cli.ExitUnreachable {
			t.Fatalf("exit %d, want 3 (Helm's exit code passes through)\n%s\n%s", res.Code, res.Stdout, res.Stderr)
		}
		if doc := res.JSON(t); doc.Cluster.Context != "broken" {
			t.Errorf("cluster.context = %q, want broken", doc.Cluster.Context)
		}
	})
	t.Run("an explicit --context wins over Helm's", func(t *testing.T) {
		res := helmRun(t, env, helm, "gitops-preflight", "--kube-context", "broken", "--context", "good", "-n", "team-a", "-o", "json")
		if res.Code != 0 {
			t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
		}
		if doc := res.JSON(t); doc.Cluster.Context != "good" {
			t.Errorf("cluster.context = %q, want good", doc.Cluster.Context)
		}
	})
	t.Run("Helm's --kubeconfig, JUnit output and a failing check", func(t *testing.T) {
		res := helmRun(t, base, helm, "gitops-preflight", "--kubeconfig", c.AdminKubeconfig(), "-n", "Bad_NS", "-o", "junit")
		if res.Code != cli.ExitFailed {
			t.Fatalf("exit %d, want 1\n%s\n%s", res.Code, res.Stdout, res.Stderr)
		}
		var suites struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Suites   []struct {
				Cases []struct {
					Name    string `xml:"name,attr"`
					Failure *struct {
						Type string `xml:"type,attr"`
					} `xml:"failure"`
				} `xml:"testcase"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal([]byte(res.Stdout), &suites); err != nil {
			t.Fatalf("-o junit is not XML: %v\n%s", err, res.Stdout)
		}
		var failed []string
		for _, tc := range suites.Suites[0].Cases {
			if tc.Failure != nil {
				failed = append(failed, tc.Name+":"+tc.Failure.Type)
			}
		}
		pre := 0
		for _, c := range checks.All() {
			if c.Modes.Has(checks.ModePre) {
				pre++
			}
		}
		if suites.Name != "helm gitops-preflight" {
			t.Errorf("junit report named %q under Helm", suites.Name)
		}
		if suites.Tests != pre || suites.Failures != 1 || strings.Join(failed, ",") != "runtime-namespace:fail" {
			t.Errorf("junit: %d tests, %d failures %v; want %d tests (the pre-install catalogue) and runtime-namespace failing\n%s", suites.Tests, suites.Failures, failed, pre, res.Stdout)
		}
	})
	t.Run("help and completion under Helm", func(t *testing.T) {
		out, _ := run(t, env, helm, "gitops-preflight", "--help")
		if !strings.Contains(out, "helm gitops-preflight [flags]") || strings.Contains(out, "kubectl gitops-preflight") {
			t.Errorf("help under Helm:\n%s", out)
		}
		out, _ = run(t, env, helm, "__complete", "gitops-preflight", "--skip", "")
		if !strings.Contains(out, "node-resources") || !strings.Contains(out, "runtime-name") || strings.Count(out, "Completion ended") != 1 {
			t.Errorf("helm __complete gitops-preflight --skip '' (plugin.complete):\n%s", out)
		}
	})
}
