package checks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	rspb "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// runtimeRelease returns the Secret Helm's storage driver writes for a
// deployed gitops-runtime release of chart version, with user values
// singleNamespace and a manifest holding crds CustomResourceDefinitions.
func runtimeRelease(t *testing.T, ns, name, version string, singleNamespace bool, crds int) runtime.Object {
	t.Helper()
	kube := fake.NewClientset()
	d := driver.NewSecrets(kube.CoreV1().Secrets(ns))
	key := "sh.helm.release.v1." + name + ".v1"
	manifest := "---\n# Source: gitops-runtime/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: codefresh-cm\n"
	for i := range crds {
		manifest += fmt.Sprintf("---\n# Source: gitops-runtime/templates/crd.yaml\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things%d.example.io\n", i)
	}
	rls := &rspb.Release{Name: name, Namespace: ns, Version: 1, Manifest: manifest,
		Info:   &rspb.Info{Status: rspb.StatusDeployed},
		Config: map[string]any{"global": map[string]any{"runtime": map[string]any{"singleNamespace": singleNamespace}}},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "gitops-runtime", Version: version},
			Values: map[string]any{"global": map[string]any{"runtime": map[string]any{"singleNamespace": false, "name": ""}}}}}
	if err := d.Create(key, rls); err != nil {
		t.Fatal(err)
	}
	sec, err := kube.CoreV1().Secrets(ns).Get(context.Background(), key, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

// crdChart is hookChart with a CRD template behind crds.install (default
// true), as the real chart's components have.
func crdChart(t *testing.T, version string) string {
	t.Helper()
	dir := hookChart(t, version, ">=3.2 <=3.4", "", nil)
	add := func(name, text string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(text); err != nil {
			t.Fatal(err)
		}
	}
	add("values.yaml", "crds:\n  install: true\nglobal:\n  runtime:\n    singleNamespace: false\n")
	add("templates/crd.yaml", `{{- if .Values.crds.install }}
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: products.codefresh.io
{{- end }}
`)
	return dir
}

func multiInputs(ns string, single, crds bool) Inputs {
	v := map[string]any{"global": map[string]any{"runtime": map[string]any{"singleNamespace": single}}, "crds": map[string]any{"install": crds}}
	return Inputs{Namespace: ns, ReleaseName: "rel-" + ns, Values: v, RenderValues: v, SingleNamespace: single, InstallsCRDs: crds}
}

// TestExistingRuntime: a second runtime may stand beside a first when both
// are namespaced and exactly one installs the cluster-wide parts (chart
// README, "Multi Runtime Installation"); otherwise the rule broken is named.
func TestExistingRuntime(t *testing.T) {
	c030, c026 := crdChart(t, "0.30.0"), crdChart(t, "0.26.8")
	first := runtimeRelease(t, "ns1", "rel1", "0.30.0", true, 3)
	clusterWide := runtimeRelease(t, "ns1", "rel1", "0.29.3", false, 3)
	noCRDs := runtimeRelease(t, "ns1", "rel1", "0.30.0", true, 0)
	old := runtimeRelease(t, "ns1", "rel1", "0.26.8", true, 3)
	tests := []struct {
		name  string
		chart string
		in    Inputs
		objs  []runtime.Object
		want  outcome
	}{
		{"no runtime", c030, multiInputs("ns2", false, true), nil, outcome{StatusPass, []string{"no gitops-runtime Helm release"}}},
		{"namespaced second beside a namespaced first", c030, multiInputs("ns2", true, false), []runtime.Object{first}, outcome{StatusPass, []string{
			"runtime release rel1 in namespace ns1 (chart gitops-runtime-0.30.0): namespaced, installs the cluster-wide parts (3 CRDs)",
			"the planned runtime (release rel-ns2 in namespace ns2, chart gitops-runtime 0.30.0 rendered with these values): namespaced, installs no CRDs"}}},
		{"first cluster-wide", c030, multiInputs("ns2", true, false), []runtime.Object{clusterWide}, outcome{StatusFail, []string{
			"runtime release rel1 in namespace ns1 (chart gitops-runtime-0.29.3) is cluster-wide", "Multi Runtime Installation", "values-multi-runtimes.yaml"}}},
		{"planned cluster-wide", c030, multiInputs("ns2", false, false), []runtime.Object{first}, outcome{StatusFail, []string{"the planned runtime is cluster-wide"}}},
		{"both install the cluster-wide parts", c030, multiInputs("ns2", true, true), []runtime.Object{first}, outcome{StatusFail, []string{"the planned runtime would install the cluster-wide parts (1 CRDs) too"}}},
		{"nobody installs them", c030, multiInputs("ns2", true, false), []runtime.Object{noCRDs}, outcome{StatusFail, []string{"no runtime installs the cluster-wide parts"}}},
		{"existing predates the rule", c030, multiInputs("ns2", true, false), []runtime.Object{old}, outcome{StatusFail, []string{"chart gitops-runtime-0.26.8) predates several runtimes"}}},
		{"planned chart predates the rule", c026, multiInputs("ns2", true, false), []runtime.Object{first}, outcome{StatusFail, []string{"the planned chart 0.26.8 predates"}}},
		{"same namespace", c030, multiInputs("ns1", true, false), []runtime.Object{first}, outcome{StatusFail, []string{"namespace ns1 already holds a runtime", "its own namespace"}}},
		{"this very release", c030, Inputs{Namespace: "ns1", ReleaseName: "rel1", SingleNamespace: true}, []runtime.Object{first}, outcome{StatusFail, []string{"kubectl gitops-preflight --upgrade -n ns1 --release-name rel1"}}},
		{"no chart: the values, as chart 0.30.0", "", multiInputs("ns2", true, false), []runtime.Object{first}, outcome{StatusPass, []string{"no chart loaded", "as chart 0.30.0"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKit(t).objects(tt.objs...).with(tt.in)
			if tt.chart != "" {
				k.withChart(tt.chart)
			}
			tt.want.expect(t, k.run(ExistingRuntime()))
		})
	}

	// A runtime installed by the CLI (codefresh-cm, no release): its mode
	// is unknown, so it is not a first runtime to stand beside.
	k := newKit(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: legacy, name: codefresh-cm, labels: {codefresh.io/runtime-name: old-rt}}\n").
		objects(first).with(multiInputs("ns2", true, false)).withChart(c030)
	outcome{StatusFail, []string{"the runtime in namespace legacy (ConfigMap codefresh-cm (runtime old-rt)) has no gitops-runtime Helm release"}}.expect(t, k.run(ExistingRuntime()))
}
