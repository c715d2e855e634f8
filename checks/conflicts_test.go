package checks

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// withExpect carries the test's "expect" annotation into a summary (which
// keeps only Helm's annotations).
func withExpect(w cluster.Workload, annotations map[string]string) cluster.Workload {
	if e, ok := annotations["expect"]; ok {
		w.Annotations = maps.Clone(w.Annotations)
		if w.Annotations == nil {
			w.Annotations = map[string]string{}
		}
		w.Annotations["expect"] = e
	}
	return w
}

// conflictWorkloads reads testdata/conflicts/workloads.yaml as summaries, with
// each one's "expect" annotation.
func conflictWorkloads(t testing.TB) (deps, sts []cluster.Workload, objs []runtime.Object) {
	t.Helper()
	f, err := os.Open("testdata/conflicts/workloads.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var probe struct{ Kind string }
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			t.Fatal(err)
		}
		switch probe.Kind {
		case "Deployment":
			var d appsv1.Deployment
			if err := json.Unmarshal(raw, &d); err != nil {
				t.Fatal(err)
			}
			deps = append(deps, withExpect(cluster.DeploymentFrom(&d), d.Annotations))
			objs = append(objs, &d)
		case "StatefulSet":
			var s appsv1.StatefulSet
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatal(err)
			}
			sts = append(sts, withExpect(cluster.StatefulSetFrom(&s), s.Annotations))
			objs = append(objs, &s)
		}
	}
	if len(deps) == 0 || len(sts) == 0 {
		t.Fatal("no workloads in testdata/conflicts/workloads.yaml")
	}
	return deps, sts, objs
}

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

func TestFindSealedSecretsControllers(t *testing.T) {
	deps, _, _ := conflictWorkloads(t)
	got := map[string]bool{}
	for _, r := range FindSealedSecretsControllers(deps) {
		got[r.Namespace+"/"+r.Name] = true
	}
	for _, w := range deps {
		want := w.Annotations["expect"] == "sealed-secrets"
		if got[w.Namespace+"/"+w.Name] != want {
			t.Errorf("%s/%s: controller = %v, want %v", w.Namespace, w.Name, !want, want)
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

type crdFixture struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	Expect      string            `json:"expect"`
}

func conflictCRDs(t *testing.T) []crdFixture {
	t.Helper()
	data, err := os.ReadFile("testdata/conflicts/crds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []crdFixture
	if err := yaml.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCheckCRDOwnership(t *testing.T) {
	fx := conflictCRDs(t)
	crds := make([]cluster.CRD, len(fx))
	for i, f := range fx {
		crds[i] = cluster.CRD{Name: f.Name, Labels: f.Labels, Annotations: f.Annotations, ResourceVersion: "7"}
	}
	argo, problems := CheckCRDOwnership(crds, DefaultReleaseName, DefaultNamespace)
	if argo != 5 {
		t.Errorf("argo CRDs = %d, want 5", argo)
	}
	got := map[string]string{}
	for _, p := range problems {
		got[p.CRD.Name] = p.Why
		if len(p.Fields) == 0 {
			t.Errorf("%s: a problem with no field to change", p.CRD.Name)
		}
	}
	for _, f := range fx {
		if got[f.Name] != f.Expect {
			t.Errorf("%s: problem %q, want %q", f.Name, got[f.Name], f.Expect)
		}
	}
}

// conflictEnv builds an Env with the kit: objs, and the CRDs of crds (their
// metadata is all the snapshot reads of a CRD).
func conflictEnv(t *testing.T, in Inputs, crds []crdFixture, objs ...runtime.Object) *Env {
	t.Helper()
	k := newKit(t).objects(objs...)
	for _, f := range crds {
		k.objects(&metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
			ObjectMeta: metav1.ObjectMeta{Name: f.Name, Labels: f.Labels, Annotations: f.Annotations, ResourceVersion: "42"},
		})
	}
	if in.ReleaseName == "" {
		in.ReleaseName, in.Namespace, in.CRDs = DefaultReleaseName, DefaultNamespace, "all"
	}
	return k.with(in).env()
}

func TestPlanArgoCRDsOwnership(t *testing.T) {
	ctx := context.Background()
	fx := conflictCRDs(t)
	env := conflictEnv(t, Inputs{}, fx)
	r, err := runArgoCRDsOwnership(ctx, env)
	if err != nil || r.Status != StatusFail || len(r.Objects) != 4 || !strings.Contains(r.Message, "4 of 5 argoproj.io CRDs") {
		t.Fatalf("run = %+v, %v", r, err)
	}
	if !strings.Contains(r.Hint, "--set argo-cd.crds.install=false") || !strings.Contains(r.Hint, "--set argo-rollouts.crds.install=false") || !strings.Contains(r.Hint, "--fix") {
		t.Errorf("hint %q lacks a way out", r.Hint)
	}
	changes, err := planArgoCRDsOwnership(ctx, env)
	if err != nil || len(changes) != 4 {
		t.Fatalf("plan = %d changes, %v", len(changes), err)
	}
	byName := map[string]Change{}
	for _, c := range changes {
		byName[c.Object.Name] = c
		if c.Resource != cluster.CRDResource || c.PatchType != "application/merge-patch+json" {
			t.Errorf("%s: resource %v, patch type %s", c.Object.Name, c.Resource, c.PatchType)
		}
	}
	// experiments only lacks the namespace annotation: the patch sets only it,
	// guarded by the resourceVersion that was read.
	var patch map[string]map[string]any
	if err := json.Unmarshal(byName["experiments.argoproj.io"].Patch, &patch); err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{"annotations":{"meta.helm.sh/release-namespace":"codefresh"},"resourceVersion":"42"}}`
	if got, _ := json.Marshal(patch); string(got) != want {
		t.Errorf("experiments patch = %s, want %s", got, want)
	}
	rf := byName["rollouts.argoproj.io"].Fields
	if len(rf) != 2 || rf[0].Field != "metadata.annotations[meta.helm.sh/release-name]" || rf[0].Old != "argo-rollouts" || rf[0].New != DefaultReleaseName {
		t.Errorf("rollouts fields = %+v", rf)
	}

	// --crds=rollouts plans only the Argo Rollouts CRDs.
	env = conflictEnv(t, Inputs{ReleaseName: DefaultReleaseName, Namespace: DefaultNamespace, CRDs: "rollouts"}, fx)
	changes, err = planArgoCRDsOwnership(ctx, env)
	if err != nil || len(changes) != 2 {
		t.Fatalf("rollouts plan = %+v, %v", changes, err)
	}
	for _, c := range changes {
		if !isRolloutsCRD(c.Object.Name) {
			t.Errorf("--crds=rollouts planned %s", c.Object.Name)
		}
	}
}

func TestArgoComponentsExistingArgoCD(t *testing.T) {
	_, _, objs := conflictWorkloads(t)
	ctx := context.Background()
	r, err := runArgoComponents(ctx, conflictEnv(t, Inputs{}, nil, objs...))
	if err != nil || r.Status != StatusFail || len(r.Objects) != 7 {
		t.Fatalf("default: %+v, %v", r, err)
	}
	in := Inputs{ReleaseName: DefaultReleaseName, Namespace: "argocd", ExistingArgoCD: true}
	r, err = runArgoComponents(ctx, conflictEnv(t, in, nil, objs...))
	if err != nil || r.Status != StatusFail || len(r.Objects) != 6 {
		t.Fatalf("existing-argocd: %+v, %v", r, err)
	}
	for _, o := range r.Objects {
		if o.Name == "argocd-server" {
			t.Errorf("Argo CD in the runtime namespace reported with --existing-argocd")
		}
	}
	if !strings.Contains(r.Message, "Argo Project in argocd (Deployment/image-updater)") || !strings.Contains(r.Message, "Argo CD in gitops") {
		t.Errorf("message %q", r.Message)
	}
}

func TestSealedSecretsLeftoverCRD(t *testing.T) {
	ctx := context.Background()
	r, err := runSealedSecrets(ctx, conflictEnv(t, Inputs{}, []crdFixture{{Name: SealedSecretsCRD}}))
	if err != nil || r.Status != StatusWarn {
		t.Fatalf("CRD alone: %+v, %v", r, err)
	}
	r, err = runSealedSecrets(ctx, conflictEnv(t, Inputs{}, []crdFixture{{Name: "ingressroutes.traefik.io"}}))
	if err != nil || r.Status != StatusPass {
		t.Fatalf("no CRD: %+v, %v", r, err)
	}
	_, _, objs := conflictWorkloads(t)
	r, err = runSealedSecrets(ctx, conflictEnv(t, Inputs{}, []crdFixture{{Name: SealedSecretsCRD}}, objs...))
	if err != nil || r.Status != StatusFail || len(r.Objects) != 3 {
		t.Fatalf("controllers: %+v, %v", r, err)
	}
	if !strings.Contains(r.Message, "kube-system/sealed-secrets-controller") {
		t.Errorf("message %q", r.Message)
	}
}
