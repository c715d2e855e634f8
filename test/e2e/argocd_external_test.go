package e2e

import (
	"context"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// TestExternalArgoCDSyncsTheRuntime: a runtime that brings its own Argo CD
// (argo-cd.enabled=false), installed with Helm at 0.27.6 into Argo CD's
// namespace as the chart requires (its validate-values hook looks for Argo
// CD's server Service there), then handed to that Argo CD: its application
// controller and repo-server with Argo CD's default settings, not the
// chart's, and an Application of Argo CD's namespace. --post finds the
// Application by its inventory and reads what the controller wrote. A
// commit to 0.30.0 is judged by --upgrade against the Argo CD it finds:
//   - Argo CD v3.1.8, outside the range of the commit's validate-values
//     hook (">=3.2 <=3.4"): argocd-version fails (upgrade-fails), and the
//     sync fails in PreSync, which --post names with the hook. (The hook's
//     pod runs no script under kwok: it fails as the script does outside
//     the range, hookRangeFails reading the range from the rendered hook.)
//   - v3.4.2, inside it: argocd-version passes.
func TestExternalArgoCDSyncsTheRuntime(t *testing.T) {
	tc.Parallel(t, tc.Long)
	const ns, name = "argocd", "runtime"
	const app = ns + "/" + name
	c := tc.Start(t)
	c.AddNode(t, tc.NodeSpec{Name: "worker-1", CPU: "8", Memory: "16Gi"})
	c.CreateNamespace(t, ns)
	createArgoCDServer(t, c, ns, "quay.io/argoproj/argocd:v3.1.8")
	// The argo-gateway HPA off: Argo CD calls an HPA that reads no metrics
	// Degraded (the test cluster serves no metrics API).
	v := runtimeValues(t, "argo-cd:\n  enabled: false\nargo-gateway:\n  hpa:\n    enabled: false\n")
	if out, code := helmCmd(t, c, tc.HelmBinary(t), "install", runtimeRelease, chartLine(t, "chart-0.27"), "-n", ns, "--no-hooks", "-f", v); code != 0 {
		t.Fatalf("helm install: %s", out)
	}
	argo := newArgoRealIn(t, c, ns, name, "", "")
	argo.Prune = true
	byoa := runtimeGlobals + noHPA + "  argo-cd:\n    enabled: false\n"
	post := func(t *testing.T) (tc.Result, reporters.Document) {
		t.Helper()
		return c.RunJSON(t, nil, "--post", "--only", "runtime-application", "-n", ns, "--release-name", runtimeRelease)
	}
	u030 := umbrella(t, "chart", "0.30.0", byoa)
	upgrade := func(t *testing.T) (tc.Result, reporters.Document) {
		t.Helper()
		res, doc := c.RunJSON(t, nil, "--upgrade", "--only", "release-upgradable,argocd-server,argocd-version,validation-hooks",
			"--chart", u030, "-n", ns, "--release-name", runtimeRelease)
		if doc.Upgrade == nil || doc.Upgrade.Application != app || doc.Upgrade.From != "0.27.6" || doc.Upgrade.To != "0.30.0" {
			t.Fatalf("upgrade = %+v, want Application %s from 0.27.6 to 0.30.0\n%s", doc.Upgrade, app, res.Stdout)
		}
		return res, doc
	}

	t.Run("the Application in Argo CD's namespace found", func(t *testing.T) {
		if !argo.sync(umbrella(t, "chart-0.27", "0.27.6", byoa)) {
			t.Fatal("Argo CD's sync of the installed 0.27.6 failed")
		}
		awaitHealthy(t, argo)
		res, doc := post(t)
		wantCode(t, res, cli.ExitOK)
		wantStatus(t, doc, "runtime-application", "pass", "Application "+app, "its inventory (status.resources) holds", "is Synced and Healthy")
	})
	t.Run("Argo CD v3.1.8 outside the commit's hook range: argocd-version fails, so does the sync", func(t *testing.T) {
		res, doc := upgrade(t)
		wantCode(t, res, cli.ExitFailed)
		ver := wantStatus(t, doc, "argocd-version", "fail", `Argo CD v3.1.8 does not satisfy ">=3.2 <=3.4"`, "validate-values hook of chart gitops-runtime 0.30.0")
		if ver.Impact != "upgrade-fails" {
			t.Errorf("argocd-version impact %s, want upgrade-fails", ver.Impact)
		}
		wantStatus(t, doc, "argocd-server", "pass", "Service "+ns+"/argocd-server")
		wantStatus(t, doc, "validation-hooks", "pass", "PreSync hooks of every sync of Application "+app)
		wantStatus(t, doc, "release-upgradable", "pass", "the runtime is upgraded by Argo CD: Application "+app)
		if !hookRangeFails(t, chartLine(t, "chart"), v, "v3.1.8") {
			t.Fatal("v3.1.8 is inside the range of chart 0.30.0's validate-values hook")
		}
		failing := umbrella(t, "chart", "0.30.0", byoa+"  installer:\n    image:\n      tag: e2e-fail\n")
		if argo.sync(failing) {
			t.Fatal("the sync went through the validate-values hook of a version outside its range")
		}
		res, doc = post(t)
		wantCode(t, res, cli.ExitFailed)
		wantStatus(t, doc, "runtime-application", "fail", "Application "+app, "last sync Failed", "PreSync hook Job "+ns+"/validate-values")
	})
	t.Run("Argo CD v3.4.2 inside it: argocd-version passes", func(t *testing.T) {
		c.Kubectl(t, "set", "image", "deployment/argocd-server", "-n", ns, "argocd-server=quay.io/argoproj/argocd:v3.4.2")
		res, doc := upgrade(t)
		wantCode(t, res, cli.ExitOK)
		wantStatus(t, doc, "argocd-version", "pass", `Argo CD v3.4.2 satisfies ">=3.2 <=3.4"`)
		// The commit would go through its hook (a sync of it is the
		// first subtest's, with a hook that passes).
		if hookRangeFails(t, chartLine(t, "chart"), v, "v3.4.2") {
			t.Fatal("v3.4.2 is outside the range of chart 0.30.0's validate-values hook")
		}
	})
}

// awaitHealthy waits (up to argoWait) until Argo CD says the
// Application is Synced and Healthy.
func awaitHealthy(t *testing.T, argo *argoReal) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), argoWait)
	defer cancel()
	if err := argo.cd.AwaitHealthy(ctx, argo.name); err != nil {
		t.Fatal(err)
	}
}
