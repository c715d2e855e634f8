package checks

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

func TestClassifyArgoComponents(t *testing.T) {
	deps, sts, _ := conflictWorkloads(t)
	got := map[string]ArgoComponent{}
	for _, a := range ClassifyArgoComponents(deps, sts) {
		got[a.Namespace+"/"+a.Name] = a.Component
		if a.By == "" {
			t.Errorf("%s/%s: no reason", a.Namespace, a.Name)
		}
	}
	for _, w := range append(append([]cluster.Workload{}, deps...), sts...) {
		want := ArgoComponent(w.Annotations["expect"])
		if want == "sealed-secrets" {
			want = ""
		}
		if g := got[w.Namespace+"/"+w.Name]; g != want {
			t.Errorf("%s %s/%s classified %q, want %q", w.Kind, w.Namespace, w.Name, g, want)
		}
	}
}

// BenchmarkClassifyArgoComponents classifies 10,000 Deployments, almost all
// unrelated (the shape of a large cluster).
func BenchmarkClassifyArgoComponents(b *testing.B) {
	deps, sts, _ := conflictWorkloads(b)
	ws := make([]cluster.Workload, 0, 10000)
	filler := cluster.Workload{Kind: "Deployment", Namespace: "apps", Name: "web",
		Labels:     map[string]string{"app.kubernetes.io/name": "web", "app.kubernetes.io/part-of": "shop"},
		PodLabels:  map[string]string{"app": "web"},
		Containers: []cluster.Container{{Image: "registry.example.com/shop/web:1.2.3"}, {Image: "envoyproxy/envoy:v1.30"}}}
	for len(ws) < 10000-len(deps) {
		ws = append(ws, filler)
	}
	ws = append(ws, deps...)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n := len(ClassifyArgoComponents(ws, sts)); n != 7 {
			b.Fatalf("found %d, want 7", n)
		}
	}
}

// TestArgoComponentsExistingArgoCD runs argo-components through the kit
// over the conflict fixtures: every Argo workload fails a clean-cluster
// install; with --existing-argocd, Argo CD in the runtime namespace is the
// one the runtime uses and is not reported; workloads of no Argo component
// pass.
func TestArgoComponentsExistingArgoCD(t *testing.T) {
	_, _, objs := conflictWorkloads(t)
	r := runThrough(t, ArgoComponents(), conflictEnv(t, Inputs{}, nil, objs...))
	if r.Status != StatusFail || len(r.Objects) != 7 {
		t.Fatalf("default: %+v", r)
	}
	in := Inputs{ReleaseName: DefaultReleaseName, Namespace: "argocd", ExistingArgoCD: true}
	r = runThrough(t, ArgoComponents(), conflictEnv(t, in, nil, objs...))
	if r.Status != StatusFail || len(r.Objects) != 6 {
		t.Fatalf("existing-argocd: %+v", r)
	}
	for _, o := range r.Objects {
		if o.Name == "argocd-server" {
			t.Errorf("Argo CD in the runtime namespace reported with --existing-argocd")
		}
	}
	if !strings.Contains(r.Message, "Argo Project in argocd (Deployment/image-updater)") || !strings.Contains(r.Message, "Argo CD in gitops") {
		t.Errorf("message %q", r.Message)
	}

	// The fixtures' workloads of no Argo component (sealed-secrets
	// controllers, look-alikes) pass.
	var others []runtime.Object
	for _, o := range objs {
		if e := o.(metav1.Object).GetAnnotations()["expect"]; e == "" || e == "sealed-secrets" {
			others = append(others, o)
		}
	}
	if len(others) == 0 {
		t.Fatal("no workload of no Argo component in the fixtures")
	}
	outcome{StatusPass, []string{"no Argo Project components in"}}.expect(t, runThrough(t, ArgoComponents(), conflictEnv(t, Inputs{}, nil, others...)))
}
