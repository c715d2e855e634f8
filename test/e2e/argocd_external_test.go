package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
//   - v3.4.2, inside it: argocd-version passes;
//   - then --post on a sync held by its hook, a commit that does not
//     render and --wait on the controller (heldSyncSteps).
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
	t.Run("a sync held by its hook, a commit that does not render, --wait until the controller has synced", func(t *testing.T) {
		heldSyncSteps(t, c, argo, byoa, post)
	})
}

// heldSyncSteps: --post on the states of a sync the controller is in the
// middle of, and --wait on the controller:
//   - the validate-values hook's pod never ends (kwok runs a container whose
//     image tag is e2e-runs-forever without end): the sync stays in PreSync,
//     and an object the commit adds is OutOfSync, not in the Application's
//     health; --post says a sync is running and names the hook, and --wait 15s
//     says so again after re-reading it for 15 s; the sync is then ended
//     as `argocd app terminate-op` ends it;
//   - a commit whose chart does not render (a template that calls fail):
//     the repo-server's render fails and --post names the ComparisonError
//     with Helm's message;
//   - a commit that renders, synced: --post --wait re-reads the Application
//     while the controller syncs it, until it is Synced and Healthy (a
//     warning remains: the Helm release record still says 0.27.6).
func heldSyncSteps(t *testing.T, c *tc.Cluster, argo *argoReal, values string, post func(*testing.T) (tc.Result, reporters.Document)) {
	app := argo.ns + "/" + argo.name
	postWait := func(wait string) (tc.Result, reporters.Document) {
		return c.RunJSON(t, nil, "--post", "--only", "runtime-application", "-n", argo.ns, "--release-name", runtimeRelease, "--wait", wait)
	}
	chart := umbrella(t, "chart", "0.30.0", values+"  installer:\n    image:\n      tag: e2e-runs-forever\n")
	// An object the commit adds: not created until the sync gets past
	// PreSync.
	writeTemplate(t, chart, "added.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: e2e-added\ndata:\n  a: b\n")
	rev := argo.commit(chart)
	waitEvery(t, argoWait, argoPoll, "the sync of "+rev[:8]+" held by its PreSync hook", func() bool {
		// Argo CD waits on the hook Job alone once the hooks created with it
		// (its ServiceAccount, RBAC, ConfigMap) are done.
		op := argo.operation()
		return op.Running() && op.Revision == rev && strings.Contains(op.Message, "batch/Job/validate-values") && len(op.RunningHooks()) == 1
	})
	res, doc := post(t)
	wantCode(t, res, cli.ExitFailed)
	ra := wantStatus(t, doc, "runtime-application", "fail", "a sync is running to revision "+rev[:8], "PreSync hook Job "+argo.ns+"/validate-values Running",
		"argocd app terminate-op "+app, "resources out of sync")
	// Argo CD 3 leaves an object the sync has not created out of the
	// Application's health ("Missing resources should not affect parent
	// app health"): it is OutOfSync, the Application Healthy, and the
	// plugin says no health.
	held := argo.app()
	added := false
	for _, r := range held.OutOfSync() {
		added = added || (r.Kind == "ConfigMap" && r.Name == "e2e-added")
	}
	if !added || held.Health != "Healthy" || strings.Contains(ra.Message, "health ") {
		t.Errorf("the added ConfigMap out of sync: %v, Application health %s; the plugin: %s", added, held.Health, ra.Message)
	}
	res, doc = postWait("15s")
	wantCode(t, res, cli.ExitFailed)
	wantStatus(t, doc, "runtime-application", "fail", "a sync is running to revision "+rev[:8])
	if res.Elapsed < 15*time.Second {
		t.Errorf("--wait 15s ended after %s with the sync still running", res.Elapsed)
	}
	argo.terminate()

	broken := umbrella(t, "chart", "0.30.0", values)
	const brokenMessage = "e2e: this commit does not render"
	writeTemplate(t, broken, "broken.yaml", `{{ fail "`+brokenMessage+`" }}`+"\n")
	rev = argo.commit(broken)
	waitEvery(t, argoWait, argoPoll, "Argo CD's ComparisonError of "+rev[:8], func() bool {
		_, found := argo.condition("ComparisonError", brokenMessage)
		return found
	})
	res, doc = post(t)
	wantCode(t, res, cli.ExitFailed)
	wantStatus(t, doc, "runtime-application", "fail", "condition ComparisonError", brokenMessage, "an error condition stops Argo CD from comparing or syncing")

	// After the terminated sync Argo CD's automated sync leaves the next
	// commit alone ("Skipping auto-sync: failed previous sync attempt to
	// [<held>] and will not retry", in the controller's log) when its first
	// comparison of it already recorded it; the commit is synced as the
	// Sync button syncs it, unless the controller has started on it.
	rev = argo.commit(umbrella(t, "chart", "0.30.0", values))
	argo.awaitCompared(rev)
	if op := argo.operation(); op.Revision != rev && !op.Running() {
		if cond, found := argo.condition("SyncError", "Failed last sync attempt"); found {
			t.Logf("Argo CD's automated sync leaves %s: %s", rev[:8], cond.Message)
			res, doc = post(t)
			wantCode(t, res, cli.ExitFailed)
			wantStatus(t, doc, "runtime-application", "fail", "condition SyncError: Failed last sync attempt", "does not try a failed sync again", "argocd app sync "+app)
		}
		argo.syncNow(rev)
	}
	res, doc = postWait("6m")
	wantCode(t, res, cli.ExitOK)
	// A warning, not a failure: the Helm release record still says 0.27.6.
	wantStatus(t, doc, "runtime-application", "warn", "Application "+app, "is Synced and Healthy", "the live objects run chart 0.30.0")
	if op := argo.operation(); op.Phase != "Succeeded" || op.Revision != rev {
		t.Errorf("--wait passed, and Argo CD's last sync is %s of %s, not Succeeded of %s", op.Phase, op.Revision, rev)
	}
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

// writeTemplate writes a template file name into chart's templates.
func writeTemplate(t *testing.T, chart, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(chart, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(chart, "templates", name), text)
}
