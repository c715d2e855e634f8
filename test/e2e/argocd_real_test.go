package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// TestArgoCDApplyAndPruneAgreeWithArgoCD: a runtime installed with Helm
// at 0.26.8 (Argo Rollouts on, a live Rollout), handed to Argo CD itself
// (its application controller and repo-server, testcluster.StartArgoCD,
// with the runtime's own Argo CD settings) and synced from a Git repository
// on disk. For each commit the plugin's --upgrade says first whether Argo
// CD applies it and what its prune deletes; then the controller syncs the
// commit and the test compares:
//   - client-side apply: the ApplicationSet CRD with a 200-byte annotation
//     passes the API server's 256 KiB of annotations (kubectl's
//     last-applied configuration): upgrade-apply fails, and so does the
//     sync; the 0.26 CRD as it ships fits (Argo CD marks no CRD with its
//     tracking): upgrade-apply passes, and the sync goes through;
//   - server-side apply with prune, to 0.30.0: the prune deletes the Argo
//     Rollouts controller, which Argo CD tracks, while a Rollout lives
//     (upgrade-deletes fails, runtime-breaks), and leaves the Rollouts CRD,
//     which it does not track, and the Rollout with it.
func TestArgoCDApplyAndPruneAgreeWithArgoCD(t *testing.T) {
	tc.Parallel(t, tc.Long)
	// The test cluster serves no metrics API (no metrics-server): Argo CD
	// takes an HPA that cannot read its metrics for Degraded, so the
	// runtime runs without its argo-gateway HPA.
	c, v, dyn, rollouts := runtimeWithRollout(t, "argo-gateway.hpa.enabled=false")
	argo := newArgoReal(t, c, "e2e-runtime", chartLine(t, "chart-0.26"), v)
	argo.apply() // the Application, before its first commit
	values026 := runtimeGlobals + noHPA + "  argo-rollouts:\n    enabled: true\n"

	t.Run("client-side apply: a CRD annotation takes the ApplicationSet CRD past kubectl's last-applied annotation", func(t *testing.T) {
		annotated := umbrella(t, "chart-0.26", "0.26.8", values026+crdNote)
		_, doc := upgradePlugin(t, c, annotated)
		wantStatus(t, doc, "upgrade-apply", "fail", "the sync fails", "client-side apply (kubectl apply, last-applied)", "applicationsets.argoproj.io", "Too long")
		agreeApply(t, doc, argo.sync(annotated))
		res, doc := post(t, c, "--only=runtime-application")
		wantCode(t, res, cli.ExitFailed)
		wantStatus(t, doc, "runtime-application", "fail", "last sync Failed: one or more synchronization tasks completed unsuccessfully", "applicationsets.argoproj.io", "Too long")
	})
	t.Run("client-side apply: the 0.26 ApplicationSet CRD as it ships fits", func(t *testing.T) {
		u026 := umbrella(t, "chart-0.26", "0.26.8", values026)
		_, doc := upgradePlugin(t, c, u026)
		wantStatus(t, doc, "upgrade-apply", "pass", "client-side apply (kubectl apply, last-applied)")
		agreeApply(t, doc, argo.sync(u026))
	})
	t.Run("server-side apply with prune to 0.30: the controller goes, its untracked CRD and the Rollout stay", func(t *testing.T) {
		argo.Prune, argo.ServerSideApply = true, true
		argo.apply()
		u030 := umbrella(t, "chart", "0.30.0", runtimeGlobals+noHPA)
		_, doc := upgradePlugin(t, c, u030)
		wantStatus(t, doc, "upgrade-apply", "pass", "server-side apply (argocd-controller, conflicts forced)")
		del := wantStatus(t, doc, "upgrade-deletes", "fail", "removes the Argo Rollouts controller (Deployment codefresh/argo-rollouts) while 1 rollouts.argoproj.io live: "+runtimeNS+"/checkout")
		if del.Impact != "runtime-breaks" || strings.Contains(del.Message, "deletes CRD") {
			t.Errorf("upgrade-deletes impact %s, want runtime-breaks and no CRD deleted: %s", del.Impact, del.Message)
		}
		// Judged in the commit's pull request, the finding points at the
		// version bump: the umbrella's gitops-runtime dependency line.
		wantVersionLine(t, del, u030, "0.30.0")
		agreeApply(t, doc, argo.sync(u030))
		waitFor(t, 60*time.Second, "argo-rollouts pruned", func() bool {
			_, err := c.Kube.AppsV1().Deployments(runtimeNS).Get(context.Background(), "argo-rollouts", metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
		if _, err := dyn.Resource(rollouts).Namespace(runtimeNS).Get(context.Background(), "checkout", metav1.GetOptions{}); err != nil {
			t.Errorf("the Rollout is gone after the sync (the plugin said its CRD stays): %v", err)
		}
	})
}

// wantVersionLine fails the test unless ch is anchored to the line of the
// umbrella chart dir's Chart.yaml that sets the gitops-runtime dependency
// to version.
func wantVersionLine(t *testing.T, ch reporters.CheckDocument, dir, version string) {
	t.Helper()
	file := filepath.Join(dir, "Chart.yaml")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	line := 0
	for i, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == "version: "+version {
			line = i + 1 // the last one: the dependency's, after the chart's own
		}
	}
	if s := ch.Source; s == nil || s.File != file || s.Line != line {
		t.Errorf("%s is anchored at %+v, want %s:%d (the gitops-runtime dependency's version)", ch.ID, s, file, line)
	}
}

// noHPA turns the argo-gateway HPA off in an umbrella chart's values
// (gitops-runtime: after runtimeGlobals; a value that follows nests under
// it too).
const noHPA = "gitops-runtime:\n  argo-gateway:\n    hpa:\n      enabled: false\n"

// crdNote is a 200-byte annotation on the Argo CD chart's CRDs
// (argo-cd.crds.annotations), nested under gitops-runtime:.
var crdNote = "  argo-cd:\n    crds:\n      annotations:\n        e2e.example.com/note: " + strings.Repeat("n", 200) + "\n"

// agreeApply fails the test unless upgrade-apply of the plugin's
// --upgrade of a commit (doc) and Argo CD's sync of that commit (synced:
// it Succeeded) say the same: Argo CD applies the commit, or refuses it.
func agreeApply(t *testing.T, doc reporters.Document, synced bool) {
	t.Helper()
	ch := tc.Check(t, doc, "upgrade-apply")
	if refused := ch.Status == "fail"; refused == synced {
		t.Errorf("upgrade-apply %s (%s), Argo CD's sync succeeded: %v", ch.Status, ch.Message, synced)
	}
}

// argoReal is the runtime's Application synced by Argo CD itself
// (testcluster.StartArgoCD) from a Git repository on disk that holds the
// runtime's chart at resources/<name>/chart, as the Shared Configuration
// Repository does. Its fields are the Application's sync policy, which
// apply writes: Prune (syncPolicy.automated.prune) and ServerSideApply
// (the sync option ServerSideApply=true). The sync is automated with
// self-heal, as the runtime's Application has it: a commit is synced when
// the controller sees it.
type argoReal struct {
	t                      *testing.T
	c                      *tc.Cluster
	cd                     *tc.ArgoCD
	repo                   *tc.GitRepo
	name, path             string
	Prune, ServerSideApply bool
	created                bool
}

// newArgoReal starts Argo CD beside c with the settings of the runtime
// chart given (installed, or rendered with values when the release is
// not), and an empty repository; apply creates the Application.
func newArgoReal(t *testing.T, c *tc.Cluster, name, chart, values string) *argoReal {
	t.Helper()
	cd := tc.StartArgoCD(t, c, tc.ArgoCDOptions{Namespace: runtimeNS, Chart: chart, Release: runtimeRelease, Values: values})
	return &argoReal{t: t, c: c, cd: cd, repo: tc.NewGitRepo(t), name: name, path: "resources/" + name + "/chart"}
}

// apply creates the Application, or updates its sync policy to the
// fields': project default, the in-cluster destination, the chart at path
// of the repository at HEAD with the runtime's release name.
func (a *argoReal) apply() {
	a.t.Helper()
	ctx := context.Background()
	apps := dynamic.NewForConfigOrDie(a.c.Admin).Resource(tc.ApplicationGVR).Namespace(runtimeNS)
	if !a.created {
		app := tc.RuntimeApplication(a.name, runtimeNS, a.repo.URL(), a.path, runtimeRelease, a.Prune, a.ServerSideApply)
		if _, err := apps.Create(ctx, app, metav1.CreateOptions{}); err != nil {
			a.t.Fatalf("creating Application %s: %v", a.name, err)
		}
		a.created = true
		return
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"syncPolicy": tc.RuntimeSyncPolicy(a.Prune, a.ServerSideApply)}})
	if err != nil {
		a.t.Fatal(err)
	}
	if _, err := apps.Patch(ctx, a.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		a.t.Fatalf("updating Application %s: %v", a.name, err)
	}
}

// sync commits chart (a directory) at the Application's path, lets the
// controller see the commit, waits for its sync of it and returns whether
// that sync Succeeded.
func (a *argoReal) sync(chart string) bool {
	a.t.Helper()
	if !a.created {
		a.apply()
	}
	rev := a.repo.Commit(a.t, chart, a.path, "runtime chart")
	a.cd.Refresh(a.t, a.name)
	// A commit that changes nothing Argo CD renders leaves the
	// Application Synced, and the automated sync does nothing: a sync is
	// asked for, as the Sync button does.
	waitFor(a.t, 5*time.Minute, "Argo CD's comparison with "+rev[:8], func() bool {
		st := a.application().Object
		compared, _, _ := unstructured.NestedString(st, "status", "sync", "revision")
		return compared == rev
	})
	st := a.application().Object
	status, _, _ := unstructured.NestedString(st, "status", "sync", "status")
	synced, _, _ := unstructured.NestedString(st, "status", "operationState", "syncResult", "revision")
	if _, running := st["operation"]; status == "Synced" && synced != rev && !running {
		a.syncNow(rev)
	}
	app := a.cd.WaitOperation(a.t, a.name, rev, 8*time.Minute)
	phase, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "phase")
	msg, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "message")
	a.t.Logf("Argo CD synced %s: %s: %s", rev[:8], phase, msg)
	return phase == "Succeeded"
}

// syncNow asks the controller to sync rev now (the Application's
// operation, as `argocd app sync` and the Sync button write it), with the
// Application's prune and sync options.
func (a *argoReal) syncNow(rev string) {
	a.t.Helper()
	sync := map[string]any{"revision": rev, "prune": a.Prune}
	if a.ServerSideApply {
		sync["syncOptions"] = []any{"ServerSideApply=true"}
	}
	patch, err := json.Marshal(map[string]any{"operation": map[string]any{"initiatedBy": map[string]any{"username": "e2e"}, "sync": sync}})
	if err != nil {
		a.t.Fatal(err)
	}
	if _, err := dynamic.NewForConfigOrDie(a.c.Admin).Resource(tc.ApplicationGVR).Namespace(runtimeNS).Patch(context.Background(), a.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		a.t.Fatalf("asking Application %s to sync: %v", a.name, err)
	}
}

// application is the Application as the controller last wrote it.
func (a *argoReal) application() *unstructured.Unstructured {
	a.t.Helper()
	app, err := dynamic.NewForConfigOrDie(a.c.Admin).Resource(tc.ApplicationGVR).Namespace(runtimeNS).Get(context.Background(), a.name, metav1.GetOptions{})
	if err != nil {
		a.t.Fatal(err)
	}
	return app
}
