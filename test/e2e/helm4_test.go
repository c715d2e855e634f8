package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestHelm4Plugin is the Helm 4 side of TestHelmPlugin: `helm plugin install`
// of a checkout laid out as `make build` leaves it into a real Helm 4
// (testcluster.Helm4Version, own HELM_*_HOME dirs), then `helm
// gitops-preflight` with Helm's -n and --kube-context against the test API
// server. helm-version must pass with the Helm 4 client ($HELM_BIN), and
// the exit code must pass through. It also pins down where Helm 4 puts a
// locally installed plugin: under $HELM_DATA_HOME/plugins even when
// HELM_PLUGINS points elsewhere, so that a Helm run with that HELM_PLUGINS
// does not list it (the README says so).
func TestHelm4Plugin(t *testing.T) {
	testcluster.Parallel(t)
	helm := testcluster.Helm4Binary(t)
	root := testcluster.RepoRoot(t)
	c := testcluster.Start(t)
	c.AddNode(t, testcluster.NodeSpec{Name: "node-1", CPU: "4", Memory: "16Gi"})
	c.CreateNamespace(t, "team-a")
	kubeconfig := goodAndBrokenKubeconfig(t, c)

	checkout := pluginCheckout(t, root)

	home := t.TempDir()
	dataHome := filepath.Join(home, "data")
	elsewhere := filepath.Join(home, "elsewhere-plugins")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"HELM_CONFIG_HOME=" + filepath.Join(home, "config"),
		"HELM_DATA_HOME=" + dataHome,
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"),
		"KUBECONFIG=" + kubeconfig,
	}

	out, code := run(t, env, helm, "version", "--short")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "v4.") {
		t.Fatalf("helm version --short = %q (exit %d), want a Helm 4", out, code)
	}
	if out, code := run(t, env, helm, "plugin", "install", checkout); code != 0 {
		t.Fatalf("helm 4 plugin install: exit %d\n%s", code, out)
	}
	out, _ = run(t, env, helm, "plugin", "list")
	if !strings.Contains(out, "gitops-preflight") || !strings.Contains(out, "0.1.0") {
		t.Fatalf("helm 4 plugin list does not show gitops-preflight 0.1.0:\n%s", out)
	}

	t.Run("-n and --kube-context reach the plugin; helm-version passes", func(t *testing.T) {
		res := helmRun(t, env, helm, "gitops-preflight", "--kube-context", "good", "-n", "team-a", "--only", "helm-version,runtime-namespace", "-o", "json")
		if res.Code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
		}
		doc := res.JSON(t)
		if doc.Cluster.Context != "good" {
			t.Errorf("cluster.context = %q, want good (HELM_KUBECONTEXT; the current context is broken)", doc.Cluster.Context)
		}
		if ns := testcluster.Check(t, doc, "runtime-namespace"); ns.Status != "pass" || !strings.Contains(ns.Message, "namespace team-a exists") {
			t.Errorf("runtime-namespace: %s %q, want pass about team-a (HELM_NAMESPACE)", ns.Status, ns.Message)
		}
		want := strings.TrimPrefix(testcluster.Helm4Version, "v")
		if hv := testcluster.Check(t, doc, "helm-version"); hv.Status != "pass" || !strings.Contains(hv.Message, want) {
			t.Errorf("helm-version: %s %q, want pass with %s (HELM_BIN of Helm 4)", hv.Status, hv.Message, want)
		}
	})
	t.Run("a failing check passes exit 1 through Helm 4", func(t *testing.T) {
		res := helmRun(t, env, helm, "gitops-preflight", "--kube-context", "good", "-n", "Bad_NS", "--only", "runtime-namespace", "-o", "json")
		if res.Code != cli.ExitFailed {
			t.Fatalf("exit %d, want 1\n%s\n%s", res.Code, res.Stdout, res.Stderr)
		}
		if ns := testcluster.Check(t, res.JSON(t), "runtime-namespace"); ns.Status != "fail" {
			t.Errorf("runtime-namespace: %s %q, want fail", ns.Status, ns.Message)
		}
	})
	t.Run("a local install lands under HELM_DATA_HOME/plugins even with HELM_PLUGINS set", func(t *testing.T) {
		env2 := append(append([]string(nil), env...), "HELM_PLUGINS="+elsewhere)
		if out, code := run(t, env, helm, "plugin", "uninstall", "gitops-preflight"); code != 0 {
			t.Fatalf("helm 4 plugin uninstall: exit %d\n%s", code, out)
		}
		if out, code := run(t, env2, helm, "plugin", "install", checkout); code != 0 {
			t.Fatalf("helm 4 plugin install with HELM_PLUGINS: exit %d\n%s", code, out)
		}
		entries, _ := os.ReadDir(elsewhere)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		data, _ := os.ReadDir(filepath.Join(dataHome, "plugins"))
		var dataNames []string
		for _, e := range data {
			dataNames = append(dataNames, e.Name())
		}
		t.Logf("HELM_PLUGINS=%s holds %v; $HELM_DATA_HOME/plugins holds %v", elsewhere, names, dataNames)
		listed, _ := run(t, env2, helm, "plugin", "list")
		t.Logf("helm plugin list with HELM_PLUGINS set:\n%s", listed)
		listedData, _ := run(t, env, helm, "plugin", "list")
		if out, code := run(t, env2, helm, "gitops-preflight", "--help"); code == 0 {
			t.Errorf("helm gitops-preflight ran with HELM_PLUGINS pointing elsewhere:\n%s", out)
		}
		if strings.Contains(listed, "gitops-preflight") || !strings.Contains(listedData, "gitops-preflight") {
			t.Errorf("helm plugin list: with HELM_PLUGINS set:\n%s\nwithout:\n%s\nwant it listed only without HELM_PLUGINS (it went to $HELM_DATA_HOME/plugins)", listed, listedData)
		}
		if len(dataNames) != 1 || len(names) != 0 {
			t.Errorf("Helm 4 local install: $HELM_DATA_HOME/plugins holds %v, HELM_PLUGINS holds %v; want the plugin under $HELM_DATA_HOME/plugins only", dataNames, names)
		}
	})
	t.Run("Helm 3, by contrast, installs it under HELM_PLUGINS", func(t *testing.T) {
		helm3 := testcluster.HelmBinary(t)
		home3 := t.TempDir()
		plugins3 := filepath.Join(home3, "plugins")
		env3 := []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + home3,
			"HELM_CONFIG_HOME=" + filepath.Join(home3, "config"),
			"HELM_DATA_HOME=" + filepath.Join(home3, "data"),
			"HELM_CACHE_HOME=" + filepath.Join(home3, "cache"),
			"HELM_PLUGINS=" + plugins3,
		}
		if out, code := run(t, env3, helm3, "plugin", "install", checkout); code != 0 {
			t.Fatalf("helm 3 plugin install: exit %d\n%s", code, out)
		}
		entries, _ := os.ReadDir(plugins3)
		if _, err := os.Stat(filepath.Join(home3, "data", "plugins")); len(entries) != 1 || err == nil {
			t.Errorf("Helm 3 local install: HELM_PLUGINS holds %d entries, $HELM_DATA_HOME/plugins exists: %v; want the plugin under HELM_PLUGINS only", len(entries), err == nil)
		}
		if out, _ := run(t, env3, helm3, "plugin", "list"); !strings.Contains(out, "gitops-preflight") {
			t.Errorf("helm 3 plugin list with HELM_PLUGINS does not show the plugin:\n%s", out)
		}
	})
}

// TestHelmVersionForms runs helm-version through the built binary against
// every form `helm version --short` prints, Helm 3 and 4: releases
// (v<x.y.z>+g<commit>) and Helms built from source without version flags
// (v<x.y>, no patch). The real Helm 3 and 4 clients are TestHelmPlugin's and
// TestHelm4Plugin's; these are the forms those builds do not print.
func TestHelmVersionForms(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.Start(t)
	for out, want := range map[string]string{
		"v4.3":             "pass",
		"v3.22":            "pass",
		"v4.3.1+g5b7d2a1":  "pass",
		"v3.22.0+gabc":     "pass",
		"v3.11":            "pass",
		"v3.10":            "fail",
		"v3.10.3+g663a896": "fail",
		"v3.8":             "fail",
	} {
		res, doc := c.RunJSON(t, []string{fakeHelm(t, out)}, "--only", "helm-version")
		code := 0
		if want == "fail" {
			code = 1
		}
		ch := wantStatus(t, doc, "helm-version", want, out)
		if res.Code != code {
			t.Errorf("helm printing %q: exit %d, want %d (%s %q)", out, res.Code, code, ch.Status, ch.Message)
		}
	}
}
