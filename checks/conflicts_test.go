package checks

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
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
		in.ReleaseName, in.Namespace = DefaultReleaseName, DefaultNamespace
	}
	return k.with(in).fixing(FixOptions{CRDs: "all"}).env()
}
