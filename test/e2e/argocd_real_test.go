package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

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
	app := a.cd.WaitOperation(a.t, a.name, rev, 5*time.Minute)
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

// waitHealthy waits until Argo CD says the Application is Healthy.
func (a *argoReal) waitHealthy() {
	a.t.Helper()
	waitFor(a.t, 3*time.Minute, "Application "+a.name+" Healthy", func() bool {
		h, _, _ := unstructured.NestedString(a.application().Object, "status", "health", "status")
		return h == "Healthy"
	})
}

// health is the health Argo CD gives the object of the Application's
// inventory (status.resources) in the runtime's namespace of group, kind
// and name, "" when it lists none.
func (a *argoReal) health(group, kind, name string) string {
	a.t.Helper()
	a.cd.Refresh(a.t, a.name)
	resources, _, _ := unstructured.NestedSlice(a.application().Object, "status", "resources")
	for _, r := range resources {
		m, _ := r.(map[string]any)
		g, _ := m["group"].(string)
		if m["kind"] == kind && m["name"] == name && m["namespace"] == runtimeNS && g == group {
			h, _, _ := unstructured.NestedString(m, "health", "status")
			return h
		}
	}
	return ""
}
