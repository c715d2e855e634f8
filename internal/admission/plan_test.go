package admission

import (
	"encoding/json"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// testAPI is a discovery document serving the kinds the tests' charts use
// (not Widget).
func testAPI() *cluster.APIResources {
	return &cluster.APIResources{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true},
			{Name: "serviceaccounts", Kind: "ServiceAccount", Namespaced: true},
			{Name: "pods", Kind: "Pod", Namespaced: true},
			{Name: "namespaces", Kind: "Namespace"},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{Name: "deployments", Kind: "Deployment", Namespaced: true}}},
		{GroupVersion: "batch/v1", APIResources: []metav1.APIResource{{Name: "jobs", Kind: "Job", Namespaced: true}}},
		{GroupVersion: "rbac.authorization.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "clusterroles", Kind: "ClusterRole"}}},
		{GroupVersion: "apiextensions.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "customresourcedefinitions", Kind: "CustomResourceDefinition"}}},
	}}
}

// obj is a rendered object of apiVersion and kind named name (namespace
// ns as the manifest has it), its JSON with fields merged in.
func obj(t *testing.T, apiVersion, kind, name, ns string, fields map[string]any) chart.Object {
	t.Helper()
	md := map[string]any{"name": name}
	if ns != "" {
		md["namespace"] = ns
	}
	doc := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md}
	for k, v := range fields {
		doc[k] = v
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return chart.Object{APIVersion: apiVersion, Kind: kind, Name: name, Namespace: ns, JSON: data}
}

// hook is o as Helm parsed it into a hook of events and weight.
func hook(o chart.Object, weight int, events ...release.HookEvent) chart.Object {
	o.Hook, o.Events, o.Weight = true, events, weight
	return o
}

// testRendering is a chart with release objects of several kinds and
// hooks of install, upgrade and both.
func testRendering(t *testing.T) *chart.Rendering {
	return &chart.Rendering{ChartName: "gitops-runtime", ChartVersion: "0.30.0",
		Objects: []chart.Object{
			obj(t, "apps/v1", "Deployment", "operator", "", nil),
			obj(t, "v1", "ConfigMap", "config", "", nil),
			obj(t, "rbac.authorization.k8s.io/v1", "ClusterRole", "reader", "", nil),
			obj(t, "v1", "ServiceAccount", "operator", "", nil),
			obj(t, "example.com/v1", "Widget", "w", "", nil),
		},
		Hooks: []chart.Object{
			hook(obj(t, "batch/v1", "Job", "validate", "", nil), 0, release.HookPreInstall, release.HookPreUpgrade),
			hook(obj(t, "v1", "ServiceAccount", "validate-sa", "", nil), -10, release.HookPreInstall, release.HookPreUpgrade),
			hook(obj(t, "v1", "ConfigMap", "a-first", "", nil), 0, release.HookPreInstall),
			hook(obj(t, "batch/v1", "Job", "report", "", nil), 0, release.HookPostInstall),
			hook(obj(t, "batch/v1", "Job", "migrate", "", nil), 5, release.HookPreUpgrade),
			hook(obj(t, "batch/v1", "Job", "cleanup", "", nil), 0, release.HookPreDelete),
		},
	}
}

func labels(objs []Object) string {
	var out []string
	for _, o := range objs {
		s := o.Obj.Kind + "/" + o.Obj.Name
		if o.Hook != nil {
			s += "(" + o.Hook.String() + ")"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// TestNewPlanInstall: the hooks that run at install come first by weight
// then name, the release's objects in Helm's install order, then the post
// hooks; a hook of another operation is left out; the release's objects
// carry Helm's metadata and the release namespace, the hooks no release
// metadata; the ServiceAccounts the release creates are known.
func TestNewPlanInstall(t *testing.T) {
	p, err := NewPlan(Input{Rendering: testRendering(t), Release: "rt", Namespace: "codefresh", NamespaceExists: true,
		NamespaceLabels: map[string]string{"team": "a"}, API: testAPI()})
	if err != nil {
		t.Fatal(err)
	}
	want := "ServiceAccount/validate-sa(pre-install,pre-upgrade) ConfigMap/a-first(pre-install) Job/validate(pre-install,pre-upgrade) " +
		"ServiceAccount/operator ConfigMap/config ClusterRole/reader Deployment/operator Widget/w Job/report(post-install)"
	if got := labels(p.Objects); got != want {
		t.Errorf("objects\n%s, want\n%s", got, want)
	}
	if p.Chart != "gitops-runtime 0.30.0" || p.NamespaceLabels["team"] != "a" || len(p.Changed) != 0 {
		t.Errorf("plan %q, labels %v, changed %d", p.Chart, p.NamespaceLabels, len(p.Changed))
	}
	for _, o := range p.Objects {
		ann := o.U.GetAnnotations()
		switch {
		case o.Hook == nil && (ann["meta.helm.sh/release-name"] != "rt" || ann["meta.helm.sh/release-namespace"] != "codefresh" || o.U.GetLabels()["app.kubernetes.io/managed-by"] != "Helm"):
			t.Errorf("%s %s without Helm's release metadata: %v", o.Obj.Kind, o.Obj.Name, o.U.Object["metadata"])
		case o.Hook != nil && ann["meta.helm.sh/release-name"] != "":
			t.Errorf("hook %s carries release metadata", o.Obj.Name)
		}
		switch o.Obj.Kind {
		case "ClusterRole":
			if o.Namespace != "" || o.U.GetNamespace() != "" || o.RequestNamespace() != "" {
				t.Errorf("cluster-scoped %s in namespace %q", o.Obj.Name, o.Namespace)
			}
		case "Widget":
			if o.Served || o.Namespace != "codefresh" {
				t.Errorf("unserved Widget: served %v, namespace %q", o.Served, o.Namespace)
			}
		default:
			if o.Namespace != "codefresh" || o.U.GetNamespace() != "codefresh" || o.RequestNamespace() != "codefresh" {
				t.Errorf("%s %s in namespace %q (%q)", o.Obj.Kind, o.Obj.Name, o.Namespace, o.U.GetNamespace())
			}
		}
	}
	if !p.ServiceAccounts["codefresh/operator"] || !p.ServiceAccounts["codefresh/validate-sa"] || len(p.ServiceAccounts) != 2 {
		t.Errorf("service accounts %v", p.ServiceAccounts)
	}
}

// TestNewPlanUpgrade: an upgrade runs the pre-upgrade and post-upgrade
// hooks only; the objects the current revision has are changed, not
// created, and a ServiceAccount it has already exists.
func TestNewPlanUpgrade(t *testing.T) {
	inCurrent := func(o chart.Object) bool { return o.Kind == "ConfigMap" || o.Kind == "ServiceAccount" }
	p, err := NewPlan(Input{Rendering: testRendering(t), Release: "rt", Namespace: "codefresh", NamespaceExists: true, API: testAPI(),
		Upgrade: true, InCurrent: inCurrent, Kept: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := "ServiceAccount/validate-sa(pre-install,pre-upgrade) Job/validate(pre-install,pre-upgrade) Job/migrate(pre-upgrade) " +
		"ClusterRole/reader Deployment/operator Widget/w"
	if got := labels(p.Objects); got != want {
		t.Errorf("objects\n%s, want\n%s", got, want)
	}
	if got := labels(p.Changed); got != "ConfigMap/config ServiceAccount/operator" {
		t.Errorf("changed %s", got)
	}
	if p.ServiceAccounts["codefresh/operator"] || !p.ServiceAccounts["codefresh/validate-sa"] || p.Kept != 3 {
		t.Errorf("service accounts %v, kept %d", p.ServiceAccounts, p.Kept)
	}
	for _, o := range p.Objects {
		if o.Hook != nil && !o.Hook.Pre {
			t.Errorf("%s runs after the release's objects in an upgrade", o.Obj.Name)
		}
	}
}

// TestNewPlanNamespaceToCome: a namespace that does not exist yet gets
// the labels helm install --create-namespace and the API server give it.
func TestNewPlanNamespaceToCome(t *testing.T) {
	p, err := NewPlan(Input{Rendering: &chart.Rendering{}, Namespace: "codefresh", API: testAPI()})
	if err != nil {
		t.Fatal(err)
	}
	if p.NamespaceExists || p.NamespaceLabels["name"] != "codefresh" || p.NamespaceLabels["kubernetes.io/metadata.name"] != "codefresh" || len(p.NamespaceLabels) != 2 {
		t.Errorf("namespace exists %v, labels %v", p.NamespaceExists, p.NamespaceLabels)
	}
}

// TestNewPlanWorkloads: the hook Jobs that run in the operation are kept
// and put first, with when they run; a hook of another operation, a hook
// that is not a Job and a workload with no pods to start are left out.
func TestNewPlanWorkloads(t *testing.T) {
	r := testRendering(t)
	r.Hooks = append(r.Hooks, hook(obj(t, "apps/v1", "Deployment", "hooked", "", nil), 0, release.HookPreInstall))
	ws := []Workload{
		{Kind: "Deployment", Name: "operator", Namespace: "codefresh", Pods: 2},
		{Kind: "Deployment", Name: "idle", Namespace: "codefresh", Pods: 0},
		{Kind: "Deployment", Name: "hooked", Namespace: "codefresh", Pods: 1},
		{Kind: "Job", Name: "validate", Namespace: "codefresh", Pods: 1},
		{Kind: "Job", Name: "report", Namespace: "codefresh", Pods: 1},
		{Kind: "Job", Name: "migrate", Namespace: "codefresh", Pods: 1},
		{Kind: "Job", Name: "cleanup", Namespace: "codefresh", Pods: 1},
	}
	for _, tc := range []struct {
		upgrade bool
		want    string
	}{
		{false, "Job/validate(pre-install,pre-upgrade,pre) Job/report(post-install) Deployment/operator"},
		{true, "Job/validate(pre-install,pre-upgrade,pre) Job/migrate(pre-upgrade,pre) Deployment/operator"},
	} {
		p, err := NewPlan(Input{Rendering: r, Namespace: "codefresh", NamespaceExists: true, API: testAPI(), Upgrade: tc.upgrade, Workloads: ws})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range p.Workloads {
			s := w.Kind + "/" + w.Name
			if w.IsHook() {
				s += "(" + w.Hook.String()
				if w.Hook.Pre {
					s += ",pre"
				}
				s += ")"
			}
			got = append(got, s)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("upgrade %v: workloads %s, want %s", tc.upgrade, strings.Join(got, " "), tc.want)
		}
	}
}

// TestPodOf: the pod a Job's controller creates carries the Job's name
// labels and the template; a ServiceAccount the release creates is
// replaced by the namespace's default one, and said.
func TestPodOf(t *testing.T) {
	p := &Plan{ServiceAccounts: map[string]bool{"codefresh/validate-sa": true}}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "v"}, Annotations: map[string]string{"a": "b"}},
		Spec: corev1.PodSpec{ServiceAccountName: "validate-sa", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	pod, sa := PodOf(Workload{Kind: "Job", Name: "validate", Namespace: "codefresh", Template: tmpl}, p)
	if sa != "validate-sa" || pod.Spec.ServiceAccountName != "default" || pod.GenerateName != "validate-" || pod.Namespace != "codefresh" {
		t.Errorf("pod %s/%s with ServiceAccount %q (replaced %q)", pod.Namespace, pod.GenerateName, pod.Spec.ServiceAccountName, sa)
	}
	if pod.Labels["app"] != "v" || pod.Labels["job-name"] != "validate" || pod.Labels["batch.kubernetes.io/job-name"] != "validate" || pod.Annotations["a"] != "b" {
		t.Errorf("labels %v, annotations %v", pod.Labels, pod.Annotations)
	}
	if tmpl.Labels["job-name"] != "" || tmpl.Spec.ServiceAccountName != "validate-sa" {
		t.Error("PodOf changed the workload's template")
	}
	tmpl.Spec.ServiceAccountName = "existing"
	pod, sa = PodOf(Workload{Kind: "Deployment", Name: "operator", Namespace: "codefresh", Template: tmpl}, p)
	if sa != "" || pod.Spec.ServiceAccountName != "existing" || pod.Labels["job-name"] != "" {
		t.Errorf("a Deployment's pod: ServiceAccount %q (replaced %q), labels %v", pod.Spec.ServiceAccountName, sa, pod.Labels)
	}
}

// TestAddedContainers: a regular container admission added is named; a
// native sidecar is not.
func TestAddedContainers(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	sent := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}}
	got := sent.DeepCopy()
	got.Spec.InitContainers = append(got.Spec.InitContainers, corev1.Container{Name: "proxy", RestartPolicy: &always})
	if added := AddedContainers(sent, got); len(added) != 0 {
		t.Errorf("a native sidecar named: %v", added)
	}
	got.Spec.Containers = append(got.Spec.Containers, corev1.Container{Name: "sleeper"})
	if added := AddedContainers(sent, got); strings.Join(added, ",") != "sleeper" {
		t.Errorf("added %v, want sleeper", added)
	}
}
