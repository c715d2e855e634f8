package testcluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// ArgoSync is a stand-in for what Argo CD's application controller and
// repo-server do when they sync the runtime's Application, for make demo
// alone, which then needs no Argo CD build; every end-to-end test syncs
// with Argo CD itself (StartArgoCD: where the two differed, Argo CD won
// and this was corrected; a failed apply's message is Argo CD's own
// words). Step by step:
//   - render: `helm template RELEASE CHART -n DEST --include-crds` of the
//     chart the commit carries (the umbrella chart of
//     resources/<runtime>/chart), as the repo-server runs it
//     (https://github.com/argoproj/argo-cd/blob/v3.2.6/util/helm/cmd.go
//     template), with Helm's own binary;
//   - hooks: an object annotated helm.sh/hook is a hook; pre-install and
//     pre-upgrade ones run as PreSync hooks of every sync, before anything
//     is applied, in hook-weight order; a Job hook that fails fails the
//     sync (operationState Failed, the hook's result hookPhase Failed) and
//     nothing is applied; post-* and other hooks do not run here;
//   - apply: every other object, CRDs first, with `kubectl apply`
//     (client-side, last-applied configuration: Argo CD's default), each
//     annotated argocd.argoproj.io/tracking-id
//     "<app>:<group>/<kind>:<namespace>/<name>" but CRDs (annotation tracking, the
//     default since Argo CD 3.0);
//   - prune: objects of the previous inventory the render no longer holds
//     and that carry the Application's tracking annotation (no CRD: those
//     Argo CD does not manage) are deleted only with Prune, never one annotated
//     argocd.argoproj.io/sync-options: Prune=false; otherwise they stay in
//     the inventory, OutOfSync with requiresPruning (gitops-engine
//     pkg/sync pruneObject);
//   - status: written as Argo CD writes it: status.resources (the
//     inventory, with the health of Deployments and StatefulSets from
//     their live status: gitops-engine pkg/health), status.sync,
//     status.health (the worst of the resources'), status.operationState
//     with its syncResult, and a SyncError condition after a failed sync.
//
// Self-heal is not simulated: nothing reverts a change made in the
// cluster between syncs.
type ArgoSync struct {
	Kube       kubernetes.Interface
	Dynamic    dynamic.Interface
	Kubeconfig string // admin kubeconfig, for kubectl
	Helm       string // helm binary
	// Name and Namespace name the Application; Dest is its destination
	// namespace; Release is spec.source.helm.releaseName.
	Name, Namespace, Dest, Release string
	// Prune is syncPolicy.automated.prune.
	Prune bool
	// ServerSideApply is the sync option ServerSideApply=true: objects are
	// applied server-side under the field manager argocd-controller,
	// conflicts forced (gitops-engine pkg/utils/kube/resource_ops.go);
	// otherwise client-side, as kubectl apply.
	ServerSideApply bool
	// Inventory is status.resources as the last sync left it.
	Inventory []ArgoItem
	revision  int
	failed    *argoOpFailure
}

// ArgoItem is one object of the Application's inventory.
type ArgoItem struct {
	Group, Version, Kind, Namespace, Name string
	RequiresPruning                       bool
}

type argoOpFailure struct {
	message string
	hook    map[string]any
}

func (i ArgoItem) key() string { return i.Group + "/" + i.Kind + "/" + i.Namespace + "/" + i.Name }

// NewArgoSync returns the simulated Argo CD of the Application
// namespace/name syncing release into the same namespace.
func NewArgoSync(admin *rest.Config, kubeconfig, helm, namespace, name, release string) *ArgoSync {
	return &ArgoSync{Kube: kubernetes.NewForConfigOrDie(admin), Dynamic: dynamic.NewForConfigOrDie(admin), Kubeconfig: kubeconfig, Helm: helm,
		Name: name, Namespace: namespace, Dest: namespace, Release: release}
}

// ApplicationGVR is argoproj.io/v1alpha1 applications.
var ApplicationGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}

// WriteUmbrella writes into dir the chart the Shared Configuration
// Repository holds for a runtime (resources/<runtime>/chart,
// https://codefresh.io/docs/docs/installation/gitops/manage-runtimes/):
// codefresh-gitops-runtime at version, depending on gitops-runtime at the
// same version from oci://quay.io/codefresh, with runtimeChart (the
// gitops-runtime chart directory) copied into charts/ as `helm dependency
// build` leaves it, and values (nested under gitops-runtime: beside
// global:).
func WriteUmbrella(dir, runtimeChart, version, values string) error {
	if err := os.CopyFS(filepath.Join(dir, "charts", "gitops-runtime"), os.DirFS(runtimeChart)); err != nil {
		return err
	}
	meta := fmt.Sprintf(`apiVersion: v2
appVersion: 1.0.0
description: Codefresh gitops runtime umbrella chart
name: codefresh-gitops-runtime
version: %s
dependencies:
  - name: gitops-runtime
    repository: oci://quay.io/codefresh
    version: %s
`, version, version)
	if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte(meta), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "values.yaml"), []byte(values), 0o600)
}

func (a *ArgoSync) kubectl(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", a.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func (a *ArgoSync) applyObject(ctx context.Context, u *unstructured.Unstructured) error {
	b, err := yaml.Marshal(u.Object)
	if err != nil {
		return err
	}
	return a.applyYAML(ctx, string(b))
}

func (a *ArgoSync) applyYAML(ctx context.Context, docs string) error {
	f, err := os.CreateTemp("", "argo-sync-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(docs); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	args := []string{"apply", "-f", f.Name()}
	if a.ServerSideApply {
		args = append(args, "--server-side", "--force-conflicts", "--field-manager=argocd-controller")
	}
	return a.kubectl(ctx, args...)
}

// Sync syncs chart as Argo CD does; ok is whether the sync succeeded (a
// failed PreSync hook fails it). err is a failure to simulate.
func (a *ArgoSync) Sync(ctx context.Context, chart string) (ok bool, err error) {
	a.revision++
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, a.Helm, "template", a.Release, chart, "-n", a.Dest, "--include-crds")
	cmd.Stderr = &stderr // Helm's coalescing warnings
	out, err := cmd.Output()
	if err != nil {
		return false, fmt.Errorf("helm template %s: %w\n%s", chart, err, stderr.String())
	}
	var objs, hooks []*unstructured.Unstructured
	for _, doc := range strings.Split(string(out), "\n---") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return false, fmt.Errorf("rendered document: %w\n%s", err, doc)
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
	failed, err := a.runPreSync(ctx, hooks)
	if err != nil {
		return false, err
	}
	if failed != nil {
		a.failed = failed
		return false, a.WriteStatus(ctx)
	}
	a.failed = nil
	sort.SliceStable(objs, func(i, j int) bool {
		return objs[i].GetKind() == "CustomResourceDefinition" && objs[j].GetKind() != "CustomResourceDefinition"
	})
	var next []ArgoItem
	var docs []string
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		ns := ""
		if a.namespaced(gvk.GroupVersion().String(), gvk.Kind) {
			ns = u.GetNamespace()
			if ns == "" {
				ns = a.Dest
			}
			u.SetNamespace(ns)
		}
		// Argo CD marks no CRD (its repo-server leaves them untracked:
		// https://github.com/argoproj/argo-cd/blob/v3.6.1/reposerver/repository/repository.go).
		if gvk.Group != "apiextensions.k8s.io" || gvk.Kind != "CustomResourceDefinition" {
			ann := u.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			ann["argocd.argoproj.io/tracking-id"] = fmt.Sprintf("%s:%s/%s:%s/%s", a.Name, gvk.Group, gvk.Kind, ns, u.GetName())
			u.SetAnnotations(ann)
		}
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			return false, err
		}
		docs = append(docs, string(b))
		next = append(next, ArgoItem{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: ns, Name: u.GetName()})
	}
	if err := a.applyYAML(ctx, strings.Join(docs, "\n---\n")); err != nil {
		// Argo CD reports what the API server refused as a failed sync.
		msg := err.Error()
		if i := strings.Index(msg, "is invalid: "); i >= 0 {
			// The API server's refusal, not kubectl's warnings.
			msg = msg[strings.LastIndex(msg[:i], "\n")+1:]
		}
		if len(msg) > 2000 {
			msg = msg[:2000]
		}
		a.failed = &argoOpFailure{message: "one or more synchronization tasks completed unsuccessfully, reason: " + strings.TrimSpace(msg)}
		return false, a.WriteStatus(ctx)
	}
	// Prune: what the previous inventory holds and the render does not.
	rendered := map[string]bool{}
	for _, i := range next {
		rendered[i.key()] = true
	}
	for _, old := range a.Inventory {
		if rendered[old.key()] {
			continue
		}
		live, err := a.get(ctx, old)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, err
		}
		if app, _, _ := strings.Cut(live.GetAnnotations()["argocd.argoproj.io/tracking-id"], ":"); app != a.Name {
			// Not marked as this Application's (a CRD): Argo CD does not
			// manage it, so it neither prunes nor lists it.
			continue
		}
		if a.Prune && !strings.Contains(live.GetAnnotations()["argocd.argoproj.io/sync-options"], "Prune=false") {
			gvr, err := a.gvr(old)
			if err != nil {
				return false, err
			}
			if err := a.Dynamic.Resource(gvr).Namespace(old.Namespace).Delete(ctx, old.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
			continue
		}
		old.RequiresPruning = true
		next = append(next, old)
	}
	a.Inventory = next
	return true, a.WriteStatus(ctx)
}

// runPreSync runs the PreSync hooks in weight order; a Job is waited for.
// It returns the failure of a Job that failed, or nil.
func (a *ArgoSync) runPreSync(ctx context.Context, hooks []*unstructured.Unstructured) (*argoOpFailure, error) {
	sort.SliceStable(hooks, func(i, j int) bool { return hookWeight(hooks[i]) < hookWeight(hooks[j]) })
	for _, h := range hooks {
		h.SetNamespace(a.Dest)
		if h.GetKind() == "Job" {
			// before-hook-creation: the previous run's Job goes first.
			if err := a.kubectl(ctx, "delete", "job", h.GetName(), "-n", a.Dest, "--ignore-not-found", "--wait=true"); err != nil {
				return nil, err
			}
		}
		if err := a.applyObject(ctx, h); err != nil {
			return nil, err
		}
		if h.GetKind() != "Job" {
			continue
		}
		deadline := time.Now().Add(90 * time.Second)
		for {
			j, err := a.Kube.BatchV1().Jobs(a.Dest).Get(ctx, h.GetName(), metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
			if err == nil {
				for _, c := range j.Status.Conditions {
					if c.Type == batchv1.JobFailed && c.Status == "True" {
						return &argoOpFailure{message: "one or more synchronization tasks completed unsuccessfully",
							hook: map[string]any{"group": "batch", "version": "v1", "kind": "Job", "namespace": a.Dest, "name": h.GetName(),
								"hookType": "PreSync", "hookPhase": "Failed", "syncPhase": "PreSync", "status": "Synced", "message": c.Message}}, nil
					}
					if c.Type == batchv1.JobComplete && c.Status == "True" {
						goto done
					}
				}
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("hook Job %s did not finish within 90s", h.GetName())
			}
			time.Sleep(200 * time.Millisecond)
		}
	done:
	}
	return nil, nil
}

func hookWeight(u *unstructured.Unstructured) int {
	var w int
	_, _ = fmt.Sscan(u.GetAnnotations()["helm.sh/hook-weight"], &w)
	return w
}

// namespaced reports whether the cluster serves kind of apiVersion
// namespaced (a kind not yet served, a CRD's being created, is).
func (a *ArgoSync) namespaced(apiVersion, kind string) bool {
	l, err := a.Kube.Discovery().ServerResourcesForGroupVersion(apiVersion)
	if err != nil {
		return true
	}
	for _, r := range l.APIResources {
		if r.Kind == kind && !strings.Contains(r.Name, "/") {
			return r.Namespaced
		}
	}
	return true
}

func (a *ArgoSync) gvr(i ArgoItem) (schema.GroupVersionResource, error) {
	gv := schema.GroupVersion{Group: i.Group, Version: i.Version}
	l, err := a.Kube.Discovery().ServerResourcesForGroupVersion(gv.String())
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	for _, r := range l.APIResources {
		if r.Kind == i.Kind && !strings.Contains(r.Name, "/") {
			return gv.WithResource(r.Name), nil
		}
	}
	return schema.GroupVersionResource{}, fmt.Errorf("%s %s is not served", gv, i.Kind)
}

func (a *ArgoSync) get(ctx context.Context, i ArgoItem) (*unstructured.Unstructured, error) {
	gvr, err := a.gvr(i)
	if err != nil {
		return nil, err
	}
	return a.Dynamic.Resource(gvr).Namespace(i.Namespace).Get(ctx, i.Name, metav1.GetOptions{})
}

// Health is Argo CD's health of a Deployment or StatefulSet from its live
// status (gitops-engine pkg/health): Degraded past its progress deadline,
// Healthy once every replica is available, Progressing before, Missing
// when it does not exist; "" for other kinds.
func (a *ArgoSync) Health(ctx context.Context, i ArgoItem) (status, message string, err error) {
	if i.Kind != "Deployment" && i.Kind != "StatefulSet" {
		return "", "", nil
	}
	u, err := a.get(ctx, i)
	if apierrors.IsNotFound(err) {
		return "Missing", "", nil
	}
	if err != nil {
		return "", "", err
	}
	want, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	avail, _, _ := unstructured.NestedInt64(u.Object, "status", "availableReplicas")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Progressing" && m["reason"] == "ProgressDeadlineExceeded" {
			return "Degraded", fmt.Sprintf("Deployment %q exceeded its progress deadline", i.Name), nil
		}
	}
	if avail >= want {
		return "Healthy", "", nil
	}
	return "Progressing", fmt.Sprintf("Waiting for rollout to finish: %d of %d updated replicas are available...", avail, want), nil
}

// WriteStatus writes the Application, its status as Argo CD writes it
// from the inventory and the live objects.
func (a *ArgoSync) WriteStatus(ctx context.Context) error {
	var resources, results []any
	worst := "Healthy"
	rank := map[string]int{"Healthy": 0, "Progressing": 1, "Missing": 2, "Degraded": 3}
	outOfSync := false
	for _, i := range a.Inventory {
		r := map[string]any{"group": i.Group, "version": i.Version, "kind": i.Kind, "namespace": i.Namespace, "name": i.Name, "status": "Synced"}
		if i.RequiresPruning {
			r["status"], r["requiresPruning"] = "OutOfSync", true
			outOfSync = true
		}
		h, msg, err := a.Health(ctx, i)
		if err != nil {
			return err
		}
		if h != "" {
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
	now := time.Now().UTC().Format(time.RFC3339)
	op := map[string]any{"operation": map[string]any{"sync": map[string]any{"revision": rev, "prune": a.Prune}}, "phase": "Succeeded",
		"message": "successfully synced (all tasks run)", "startedAt": now, "finishedAt": now,
		"syncResult": map[string]any{"revision": rev, "resources": results}}
	sync := map[string]any{"status": "Synced", "revision": rev}
	if outOfSync {
		sync["status"] = "OutOfSync"
	}
	status := map[string]any{"resources": resources, "sync": sync, "health": map[string]any{"status": worst}, "operationState": op}
	if f := a.failed; f != nil {
		op["phase"], op["message"] = "Failed", f.message
		op["syncResult"] = map[string]any{"revision": rev, "resources": []any{}}
		if f.hook != nil {
			op["syncResult"] = map[string]any{"revision": rev, "resources": []any{f.hook}}
		}
		sync["status"] = "OutOfSync"
		status["conditions"] = []any{map[string]any{"type": "SyncError", "message": "Failed sync attempt to " + rev + ": " + f.message}}
	}
	auto := map[string]any{"selfHeal": true}
	if a.Prune {
		auto["prune"] = true
	}
	syncPolicy := map[string]any{"automated": auto}
	if a.ServerSideApply {
		syncPolicy["syncOptions"] = []any{"ServerSideApply=true"}
	}
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": a.Name, "namespace": a.Namespace, "labels": map[string]any{"codefresh.io/entity": "runtime"}},
		"spec": map[string]any{
			"project":     "default",
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": a.Dest},
			"source": map[string]any{"repoURL": "https://git.example.com/acme/shared-config.git", "path": "resources/" + a.Name + "/chart", "targetRevision": "HEAD",
				"helm": map[string]any{"releaseName": a.Release}},
			"syncPolicy": syncPolicy,
		},
		"status": status,
	}}
	apps := a.Dynamic.Resource(ApplicationGVR).Namespace(a.Namespace)
	cur, err := apps.Get(ctx, a.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		// Right after the install that brings the Application CRD, the API
		// server may not serve the resource yet (NotFound on create too):
		// wait for it to be established.
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := apps.Create(ctx, app, metav1.CreateOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return true, err
		})
	case err == nil:
		app.SetResourceVersion(cur.GetResourceVersion())
		_, err = apps.Update(ctx, app, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("writing Application %s/%s: %w", a.Namespace, a.Name, err)
	}
	return nil
}

// WaitHealthy waits until every workload of the inventory is Healthy (one
// left requiring pruning may be Missing), then writes the status.
func (a *ArgoSync) WaitHealthy(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		healthy := true
		for _, i := range a.Inventory {
			h, _, err := a.Health(ctx, i)
			if err != nil {
				return err
			}
			if h != "" && h != "Healthy" && !(i.RequiresPruning && h == "Missing") {
				healthy = false
				break
			}
		}
		if healthy {
			return a.WriteStatus(ctx)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Application %s/%s not Healthy within %s", a.Namespace, a.Name, timeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
