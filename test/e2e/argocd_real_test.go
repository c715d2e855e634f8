package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestArgoCDRealSyncAgainstStandIn: the real Argo CD (testcluster.StartArgoCD:
// its application controller and repo-server, with the settings of the
// runtime chart's Argo CD subchart) syncs an Application (automated, prune
// on) from a Git repository on disk (file://) holding a small chart at
// resources/<runtime>/chart, as the Shared Configuration Repository does:
// a ConfigMap kept, a ConfigMap the second commit removes, a Deployment and
// a PreSync hook Job. The first commit is Synced and Succeeded, its objects
// and the hook Job (marked hook) in status.resources, the hook run and
// Succeeded; the second prunes the removed ConfigMap. Then the stand-in (testcluster.ArgoSync) syncs the same
// two commits on a second cluster, and each sync's phase, sync status,
// inventory, hooks, remaining objects and their tracking are compared: a
// difference is logged ("the stand-in differs from Argo CD"), not failed,
// to learn from.
func TestArgoCDRealSyncAgainstStandIn(t *testing.T) {
	tc.Parallel(t, tc.Long, tc.Slots(2))
	tc.ArgoCDBinary(t) // a first build takes minutes: before the clusters start
	const runtime = "rt-e2e"
	path := "resources/" + runtime + "/chart"
	var clusters [2]*tc.Cluster
	for i := range clusters {
		clusters[i] = tc.Start(t)
		clusters[i].AddNode(t, tc.NodeSpec{Name: "worker-1", CPU: "8", Memory: "16Gi"})
		clusters[i].CreateNamespace(t, runtimeNS)
	}
	withArgo, withSim := clusters[0], clusters[1]
	repo := tc.NewGitRepo(t)
	revs := []string{repo.Commit(t, smallRuntimeChart(t, true), path, "runtime chart: settings, extra, web and a PreSync hook")}
	argo := tc.StartArgoCD(t, withArgo, tc.ArgoCDOptions{Namespace: runtimeNS, Chart: chartLine(t, "chart"),
		Release: runtimeRelease, Values: chartValues(t, renderingValues)})
	createRealApplication(t, withArgo, runtime, repo.URL(), path)
	var gotReal [2]syncSummary
	gotReal[0] = summarizeSync(t, withArgo, argo.WaitOperation(t, runtime, revs[0], 5*time.Minute))
	want := syncSummary{Phase: "Succeeded", Sync: "Synced",
		// The hook Job is kept (BeforeHookCreation: deleted before the next
		// sync creates it again); Argo CD lists it as a hook, with no sync
		// status and requiring pruning, and the Application Synced.
		Resources: []string{"ConfigMap/" + runtimeRelease + "-extra Synced", "ConfigMap/" + runtimeRelease + "-settings Synced",
			"Deployment/" + runtimeRelease + "-web Synced", "Job/" + runtimeRelease + "-presync (hook) (requires pruning)"},
		Live: []string{"ConfigMap/" + runtimeRelease + "-extra", "ConfigMap/" + runtimeRelease + "-settings", "Deployment/" + runtimeRelease + "-web", "Job/" + runtimeRelease + "-presync"}}
	wantSync(t, "Argo CD, first commit", gotReal[0], want)
	if len(gotReal[0].Hooks) != 1 || !strings.HasPrefix(gotReal[0].Hooks[0], "PreSync Job/"+runtimeRelease+"-presync Succeeded") {
		t.Errorf("Argo CD, first commit: hooks %q, want the PreSync Job Succeeded", gotReal[0].Hooks)
	}
	// A commit removes a ConfigMap; Argo CD is asked to look (rather than
	// at its next reconciliation) and prunes it.
	revs = append(revs, repo.Commit(t, smallRuntimeChart(t, false), path, "runtime chart: extra removed"))
	argo.Refresh(t, runtime)
	gotReal[1] = summarizeSync(t, withArgo, argo.WaitOperation(t, runtime, revs[1], 5*time.Minute))
	want.Resources = want.Resources[1:]
	want.Live = want.Live[1:]
	wantSync(t, "Argo CD, second commit (prune)", gotReal[1], want)

	// The stand-in, the same commits on the second cluster.
	tc.CreateArgoCDCRDs(t, withSim)
	sim := tc.NewArgoSync(withSim.Admin, withSim.AdminKubeconfig(), tc.HelmBinary(t), runtimeNS, runtime, runtimeRelease)
	sim.Prune = true
	for i, rev := range revs {
		if _, err := sim.Sync(context.Background(), filepath.Join(repo.Checkout(t, rev), filepath.FromSlash(path))); err != nil {
			t.Fatalf("stand-in, commit %d: %v", i+1, err)
		}
		app, err := dynamic.NewForConfigOrDie(withSim.Admin).Resource(tc.ApplicationGVR).Namespace(runtimeNS).Get(context.Background(), runtime, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		compareStandIn(t, fmt.Sprintf("commit %d", i+1), gotReal[i], summarizeSync(t, withSim, app))
	}
}

// smallRuntimeChart writes a chart into a new directory: ConfigMaps
// <release>-settings and (with extra) <release>-extra, a Deployment
// <release>-web and a Job <release>-presync that Helm runs before install
// and upgrade (Argo CD: a PreSync hook).
func smallRuntimeChart(t *testing.T, extra bool) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: small-runtime\nversion: 0.1.0\n",
		"templates/settings.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  mode: real
`,
		"templates/web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: registry.example.com/web:1.0.0
`,
		"templates/presync.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-presync
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: presync
          image: registry.example.com/presync:1.0.0
`,
	}
	if extra {
		files["templates/extra.yaml"] = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-extra
data:
  removed: "in the second commit"
`
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// createRealApplication creates the runtime's Application as the stand-in
// writes it (ArgoSync.WriteStatus), for Argo CD to reconcile: project
// default, the in-cluster destination, the chart at path of repoURL at
// HEAD, automated sync with prune and self-heal.
func createRealApplication(t *testing.T, c *tc.Cluster, name, repoURL, path string) {
	t.Helper()
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": name, "namespace": runtimeNS, "labels": map[string]any{"codefresh.io/entity": "runtime"}},
		"spec": map[string]any{
			"project":     "default",
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": runtimeNS},
			"source": map[string]any{"repoURL": repoURL, "path": path, "targetRevision": "HEAD",
				"helm": map[string]any{"releaseName": runtimeRelease}},
			"syncPolicy": map[string]any{"automated": map[string]any{"prune": true, "selfHeal": true}},
		},
	}}
	if _, err := dynamic.NewForConfigOrDie(c.Admin).Resource(tc.ApplicationGVR).Namespace(runtimeNS).Create(context.Background(), app, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Application %s: %v", name, err)
	}
}

// syncSummary is what the test compares of one sync: the operation's
// phase, status.sync.status, the inventory (status.resources, "Kind/name",
// "Kind/name <status>", the status where there is one, with " (hook)" and
// " (requires pruning)" where they say so, sorted), the hooks of the sync result ("<hookType> Kind/name <hookPhase>"),
// the objects of the release in the namespace afterwards ("Kind/name") and
// how each is tracked ("Kind/name: annotation <tracking-id>, label
// <app.kubernetes.io/instance>").
type syncSummary struct {
	Phase, Sync                     string
	Resources, Hooks, Live, Tracked []string
}

func summarizeSync(t *testing.T, c *tc.Cluster, app *unstructured.Unstructured) syncSummary {
	t.Helper()
	var s syncSummary
	s.Phase, _, _ = unstructured.NestedString(app.Object, "status", "operationState", "phase")
	s.Sync, _, _ = unstructured.NestedString(app.Object, "status", "sync", "status")
	resources, _, _ := unstructured.NestedSlice(app.Object, "status", "resources")
	for _, r := range resources {
		m, _ := r.(map[string]any)
		id := fmt.Sprintf("%v/%v", m["kind"], m["name"])
		if m["status"] != nil {
			id += fmt.Sprintf(" %v", m["status"])
		}
		if m["hook"] == true {
			id += " (hook)"
		}
		if m["requiresPruning"] == true {
			id += " (requires pruning)"
		}
		s.Resources = append(s.Resources, id)
	}
	results, _, _ := unstructured.NestedSlice(app.Object, "status", "operationState", "syncResult", "resources")
	for _, r := range results {
		if m, _ := r.(map[string]any); m["hookType"] != nil {
			s.Hooks = append(s.Hooks, fmt.Sprintf("%v %v/%v %v", m["hookType"], m["kind"], m["name"], m["hookPhase"]))
		}
	}
	ctx := context.Background()
	add := func(kind string, o metav1.Object) {
		if !strings.HasPrefix(o.GetName(), runtimeRelease+"-") {
			return
		}
		id := kind + "/" + o.GetName()
		s.Live = append(s.Live, id)
		s.Tracked = append(s.Tracked, fmt.Sprintf("%s: annotation %q, label %q", id, o.GetAnnotations()["argocd.argoproj.io/tracking-id"], o.GetLabels()["app.kubernetes.io/instance"]))
	}
	cms, err := c.Kube.CoreV1().ConfigMaps(runtimeNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range cms.Items {
		add("ConfigMap", &cms.Items[i])
	}
	deps, err := c.Kube.AppsV1().Deployments(runtimeNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range deps.Items {
		add("Deployment", &deps.Items[i])
	}
	jobs, err := c.Kube.BatchV1().Jobs(runtimeNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range jobs.Items {
		add("Job", &jobs.Items[i])
	}
	for _, l := range [][]string{s.Resources, s.Hooks, s.Live, s.Tracked} {
		sort.Strings(l)
	}
	return s
}

// wantSync fails the test where got's phase, sync status, inventory or
// remaining objects are not want's.
func wantSync(t *testing.T, what string, got, want syncSummary) {
	t.Helper()
	if got.Phase != want.Phase || got.Sync != want.Sync {
		t.Errorf("%s: phase %q, sync %q; want %q, %q", what, got.Phase, got.Sync, want.Phase, want.Sync)
	}
	if !reflect.DeepEqual(got.Resources, want.Resources) {
		t.Errorf("%s: status.resources %q, want %q", what, got.Resources, want.Resources)
	}
	if !reflect.DeepEqual(got.Live, want.Live) {
		t.Errorf("%s: objects %q, want %q", what, got.Live, want.Live)
	}
	t.Logf("%s: %+v", what, got)
}

// compareStandIn logs each part of a sync where the stand-in differs from
// Argo CD (not a failure: what the stand-in should learn).
func compareStandIn(t *testing.T, what string, argo, standIn syncSummary) {
	t.Helper()
	parts := []struct {
		name          string
		argo, standIn any
	}{
		{"operationState.phase", argo.Phase, standIn.Phase},
		{"sync.status", argo.Sync, standIn.Sync},
		{"status.resources", argo.Resources, standIn.Resources},
		{"hooks of syncResult", argo.Hooks, standIn.Hooks},
		{"remaining objects", argo.Live, standIn.Live},
		{"tracking", argo.Tracked, standIn.Tracked},
	}
	same := true
	for _, p := range parts {
		if !reflect.DeepEqual(p.argo, p.standIn) {
			same = false
			t.Logf("the stand-in differs from Argo CD %s, %s, %s:\n  Argo CD:  %q\n  stand-in: %q", tc.ArgoCDVersion, what, p.name, p.argo, p.standIn)
		}
	}
	if same {
		t.Logf("the stand-in agrees with Argo CD %s, %s", tc.ArgoCDVersion, what)
	}
}
