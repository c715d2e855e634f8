package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// argoSim does what Argo CD's application controller and repo-server do
// when they sync the runtime's Application: Argo CD itself (v3.2.6, the
// newest whose module builds from the Go module proxy: later ones keep
// gitops-engine in a nested module the proxy's zip leaves out) builds
// here, but running its controller and repo-server beside the test
// control plane needs Redis and a Git server the tests do not have, so
// the tests do exactly what they do, step by step:
//   - render: `helm template RELEASE CHART -n DEST --include-crds` of the
//     chart the commit carries (the umbrella chart of
//     resources/<runtime>/chart), as the repo-server runs it
//     (util/helm/cmd.go template), with Helm's own binary;
//   - hooks: every object annotated helm.sh/hook is a hook; pre-install
//     and pre-upgrade ones run as PreSync hooks of every sync, before
//     anything is applied, in hook-weight order; a Job hook that fails
//     fails the sync (operationState Failed, the hook's result
//     hookPhase Failed), and nothing is applied;
//   - apply: every other object, CRDs first, with `kubectl apply`
//     (client-side, last-applied; Argo CD's default), each annotated
//     argocd.argoproj.io/tracking-id "<app>:<group>/<kind>:<namespace>/<name>"
//     (annotation tracking, the default since Argo CD 3.0);
//   - prune: objects of the previous inventory the render no longer holds
//     are deleted only with prune, never one annotated
//     argocd.argoproj.io/sync-options: Prune=false; otherwise they stay in
//     the inventory, OutOfSync with requiresPruning;
//   - status: written as Argo CD writes it: status.resources (the
//     inventory: group, version, kind, namespace, name, status, health of
//     Deployments and StatefulSets from their live status), status.sync,
//     status.health (the worst of the resources'), status.operationState
//     with syncResult.
type argoSim struct {
	t          *testing.T
	c          *tc.Cluster
	dyn        dynamic.Interface
	name, ns   string // the Application
	dest       string // destination namespace
	release    string // spec.source.helm.releaseName
	prune      bool
	inventory  []invItem
	revision   int
	lastOpFail *opResult
}

// invItem is one object of the Application's inventory.
type invItem struct {
	Group, Version, Kind, Namespace, Name string
	RequiresPruning                       bool
}

// opResult is a failed sync's operation state.
type opResult struct {
	phase, message string
	hook           map[string]any
}

func (i invItem) key() string { return i.Group + "/" + i.Kind + "/" + i.Namespace + "/" + i.Name }

func newArgoSim(t *testing.T, c *tc.Cluster, name string, prune bool) *argoSim {
	return &argoSim{t: t, c: c, dyn: dynamic.NewForConfigOrDie(c.Admin), name: name, ns: runtimeNS, dest: runtimeNS, release: runtimeRelease, prune: prune}
}

var applicationsGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}

// umbrella writes the chart the Shared Configuration Repository holds for
// the runtime (resources/<runtime>/chart): codefresh-gitops-runtime at the
// version of the fixture line, depending on gitops-runtime from
// oci://quay.io/codefresh, the dependency unpacked in charts/ as `helm
// dependency build` leaves it (a copy of the fixture, made at test time),
// and values nested under gitops-runtime: beside global:.
func umbrella(t *testing.T, line, version, values string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "chart")
	if err := os.CopyFS(filepath.Join(dir, "charts", "gitops-runtime"), os.DirFS(chartLine(t, line))); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "Chart.yaml"), fmt.Sprintf(`apiVersion: v2
appVersion: 1.0.0
description: Codefresh gitops runtime umbrella chart
name: codefresh-gitops-runtime
version: %s
dependencies:
  - name: gitops-runtime
    repository: oci://quay.io/codefresh
    version: %s
`, version, version))
	writeFile(t, filepath.Join(dir, "values.yaml"), values)
	return dir
}

// sync syncs chart as Argo CD does; it returns whether the sync succeeded.
func (a *argoSim) sync(chart string) bool {
	t := a.t
	t.Helper()
	a.revision++
	var stderr bytes.Buffer
	cmd := exec.Command(tc.HelmBinary(t), "template", a.release, chart, "-n", a.dest, "--include-crds")
	cmd.Stderr = &stderr // Helm's coalescing warnings
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template %s: %v\n%s", chart, err, stderr.String())
	}
	var objs, hooks []*unstructured.Unstructured
	for _, doc := range strings.Split(string(out), "\n---") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("rendered document: %v\n%s", err, doc)
		}
		if u.Object == nil || u.GetKind() == "" {
			continue
		}
		if h, ok := u.GetAnnotations()["helm.sh/hook"]; ok && h != "crd-install" {
			if strings.Contains(h, "pre-install") || strings.Contains(h, "pre-upgrade") {
				hooks = append(hooks, u)
			}
			continue
		}
		objs = append(objs, u)
	}
	if res := a.runPreSync(hooks); res != nil {
		a.lastOpFail = res
		a.writeStatus()
		return false
	}
	a.lastOpFail = nil
	sort.SliceStable(objs, func(i, j int) bool {
		return objs[i].GetKind() == "CustomResourceDefinition" && objs[j].GetKind() != "CustomResourceDefinition"
	})
	var next []invItem
	var docs []string
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		ns := ""
		if a.namespaced(gvk.GroupVersion().String(), gvk.Kind) {
			ns = u.GetNamespace()
			if ns == "" {
				ns = a.dest
			}
			u.SetNamespace(ns)
		}
		ann := u.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann["argocd.argoproj.io/tracking-id"] = fmt.Sprintf("%s:%s/%s:%s/%s", a.name, gvk.Group, gvk.Kind, ns, u.GetName())
		u.SetAnnotations(ann)
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
		next = append(next, invItem{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: ns, Name: u.GetName()})
	}
	file := filepath.Join(t.TempDir(), "sync.yaml")
	writeFile(t, file, strings.Join(docs, "\n---\n"))
	a.c.Kubectl(t, "apply", "-f", file)
	// Prune: what the previous inventory holds and the render does not.
	rendered := map[string]bool{}
	for _, i := range next {
		rendered[i.key()] = true
	}
	for _, old := range a.inventory {
		if rendered[old.key()] {
			continue
		}
		live, err := a.get(old)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if a.prune && !strings.Contains(live.GetAnnotations()["argocd.argoproj.io/sync-options"], "Prune=false") {
			args := []string{"delete", strings.ToLower(old.Kind) + "." + old.Group, old.Name, "--wait=false"}
			if old.Group == "" {
				args[1] = strings.ToLower(old.Kind)
			}
			if old.Namespace != "" {
				args = append(args, "-n", old.Namespace)
			}
			a.c.Kubectl(t, args...)
			continue
		}
		old.RequiresPruning = true
		next = append(next, old)
	}
	a.inventory = next
	a.writeStatus()
	return true
}

// runPreSync runs the PreSync hooks: the hook objects in weight order; a
// Job is waited for. It returns the failed operation, or nil.
func (a *argoSim) runPreSync(hooks []*unstructured.Unstructured) *opResult {
	t := a.t
	sort.SliceStable(hooks, func(i, j int) bool {
		return hookWeight(hooks[i]) < hookWeight(hooks[j])
	})
	for _, h := range hooks {
		h.SetNamespace(a.dest)
		b, err := yaml.Marshal(h.Object)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "hook.yaml")
		writeFile(t, file, string(b))
		if h.GetKind() == "Job" {
			// before-hook-creation: the previous run's Job goes first.
			a.c.Kubectl(t, "delete", "job", h.GetName(), "-n", a.dest, "--ignore-not-found", "--wait=true")
		}
		a.c.Kubectl(t, "apply", "-f", file)
		if h.GetKind() != "Job" {
			continue
		}
		var job *batchv1.Job
		waitFor(t, 90*time.Second, "hook Job "+h.GetName()+" to finish", func() bool {
			j, err := a.c.Kube.BatchV1().Jobs(a.dest).Get(context.Background(), h.GetName(), metav1.GetOptions{})
			if err != nil {
				return false
			}
			for _, c := range j.Status.Conditions {
				if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == "True" {
					job = j
					return true
				}
			}
			return false
		})
		for _, c := range job.Status.Conditions {
			if c.Type == batchv1.JobFailed && c.Status == "True" {
				return &opResult{phase: "Failed", message: "one or more synchronization tasks completed unsuccessfully",
					hook: map[string]any{"group": "batch", "version": "v1", "kind": "Job", "namespace": a.dest, "name": h.GetName(),
						"hookType": "PreSync", "hookPhase": "Failed", "syncPhase": "PreSync", "status": "Synced", "message": c.Message}}
			}
		}
	}
	return nil
}

func hookWeight(u *unstructured.Unstructured) int {
	var w int
	_, _ = fmt.Sscan(u.GetAnnotations()["helm.sh/hook-weight"], &w)
	return w
}

// namespaced reports whether the cluster serves kind of apiVersion
// namespaced.
func (a *argoSim) namespaced(apiVersion, kind string) bool {
	l, err := a.c.Kube.Discovery().ServerResourcesForGroupVersion(apiVersion)
	if err != nil {
		return true // a CRD just created: its custom resources are namespaced here
	}
	for _, r := range l.APIResources {
		if r.Kind == kind && !strings.Contains(r.Name, "/") {
			return r.Namespaced
		}
	}
	return true
}

func (a *argoSim) gvr(i invItem) schema.GroupVersionResource {
	gv := schema.GroupVersion{Group: i.Group, Version: i.Version}
	l, err := a.c.Kube.Discovery().ServerResourcesForGroupVersion(gv.String())
	if err != nil {
		a.t.Fatal(err)
	}
	for _, r := range l.APIResources {
		if r.Kind == i.Kind && !strings.Contains(r.Name, "/") {
			return gv.WithResource(r.Name)
		}
	}
	a.t.Fatalf("%s not served", i.Kind)
	return schema.GroupVersionResource{}
}

func (a *argoSim) get(i invItem) (*unstructured.Unstructured, error) {
	return a.dyn.Resource(a.gvr(i)).Namespace(i.Namespace).Get(context.Background(), i.Name, metav1.GetOptions{})
}

// health is Argo CD's health of a Deployment or StatefulSet from its live
// status (gitops-engine pkg/health): Healthy once every replica is
// available; Degraded past the progress deadline; Progressing before;
// Missing when it does not exist. Other kinds have no health.
func (a *argoSim) health(i invItem) (string, string) {
	if i.Kind != "Deployment" && i.Kind != "StatefulSet" {
		return "", ""
	}
	u, err := a.get(i)
	if apierrors.IsNotFound(err) {
		return "Missing", ""
	}
	if err != nil {
		a.t.Fatal(err)
	}
	want, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	avail, _, _ := unstructured.NestedInt64(u.Object, "status", "availableReplicas")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Progressing" && m["reason"] == "ProgressDeadlineExceeded" {
			return "Degraded", fmt.Sprintf("Deployment %q exceeded its progress deadline", i.Name)
		}
	}
	if avail >= want {
		return "Healthy", ""
	}
	return "Progressing", fmt.Sprintf("Waiting for rollout to finish: %d of %d updated replicas are available...", avail, want)
}

// writeStatus writes the Application and its status as Argo CD does.
func (a *argoSim) writeStatus() {
	t := a.t
	t.Helper()
	var resources []any
	var results []any
	worst := "Healthy"
	rank := map[string]int{"Healthy": 0, "Progressing": 1, "Missing": 2, "Degraded": 3}
	outOfSync := false
	for _, i := range a.inventory {
		r := map[string]any{"group": i.Group, "version": i.Version, "kind": i.Kind, "namespace": i.Namespace, "name": i.Name, "status": "Synced"}
		if i.RequiresPruning {
			r["status"], r["requiresPruning"] = "OutOfSync", true
			outOfSync = true
		}
		if h, msg := a.health(i); h != "" {
			hm := map[string]any{"status": h}
			if msg != "" {
				hm["message"] = msg
			}
			r["health"] = hm
			if rank[h] > rank[worst] {
				worst = h
			}
		}
		resources = append(resources, r)
		if !i.RequiresPruning {
			results = append(results, map[string]any{"group": i.Group, "version": i.Version, "kind": i.Kind, "namespace": i.Namespace, "name": i.Name,
				"status": "Synced", "message": "configured", "syncPhase": "Sync"})
		}
	}
	rev := fmt.Sprintf("c0ffee%04d", a.revision)
	op := map[string]any{"operation": map[string]any{"sync": map[string]any{"revision": rev, "prune": a.prune}}, "phase": "Succeeded",
		"message": "successfully synced (all tasks run)", "startedAt": time.Now().UTC().Format(time.RFC3339), "finishedAt": time.Now().UTC().Format(time.RFC3339),
		"syncResult": map[string]any{"revision": rev, "resources": results}}
	status := map[string]any{"resources": resources, "sync": map[string]any{"status": "Synced", "revision": rev}, "health": map[string]any{"status": worst}, "operationState": op}
	if outOfSync {
		status["sync"] = map[string]any{"status": "OutOfSync", "revision": rev}
	}
	if f := a.lastOpFail; f != nil {
		op["phase"], op["message"] = f.phase, f.message
		op["syncResult"] = map[string]any{"revision": rev, "resources": []any{f.hook}}
		status["sync"] = map[string]any{"status": "OutOfSync", "revision": rev}
		status["conditions"] = []any{map[string]any{"type": "SyncError", "message": "Failed sync attempt to " + rev + ": " + f.message}}
	}
	auto := map[string]any{"selfHeal": true}
	if a.prune {
		auto["prune"] = true
	}
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": a.name, "namespace": a.ns, "labels": map[string]any{"codefresh.io/entity": "runtime"}},
		"spec": map[string]any{
			"project":     "default",
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": a.dest},
			"source": map[string]any{"repoURL": "https://git.example.com/acme/shared-config.git", "path": "resources/e2e-runtime/chart", "targetRevision": "HEAD",
				"helm": map[string]any{"releaseName": a.release}},
			"syncPolicy": map[string]any{"automated": auto},
		},
		"status": status,
	}}
	cur, err := a.dyn.Resource(applicationsGVR).Namespace(a.ns).Get(context.Background(), a.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = a.dyn.Resource(applicationsGVR).Namespace(a.ns).Create(context.Background(), app, metav1.CreateOptions{})
	case err == nil:
		app.SetResourceVersion(cur.GetResourceVersion())
		_, err = a.dyn.Resource(applicationsGVR).Namespace(a.ns).Update(context.Background(), app, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatalf("writing Application %s/%s: %v", a.ns, a.name, err)
	}
}

// waitHealthy refreshes the Application's status until it is Healthy.
func (a *argoSim) waitHealthy() {
	a.t.Helper()
	waitFor(a.t, 120*time.Second, "Application "+a.name+" Healthy", func() bool {
		for _, i := range a.inventory {
			if h, _ := a.health(i); h != "" && h != "Healthy" && !(i.RequiresPruning && h == "Missing") {
				return false
			}
		}
		return true
	})
	a.writeStatus()
}

// inInventory reports whether the inventory holds kind/name.
func (a *argoSim) inInventory(kind, name string) bool {
	return slices.ContainsFunc(a.inventory, func(i invItem) bool { return i.Kind == kind && i.Name == name })
}
