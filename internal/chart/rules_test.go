package chart

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	rspb "helm.sh/helm/v3/pkg/release"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/fixtures"
)

// fixtureLine is one release line of the real chart in the fixtures:
// "chart" (0.30.0), "chart-0.27" or "chart-0.26".
// It fails (never skips) naming `make fixtures` when no fixture folder has it.
func fixtureLine(t testing.TB, dir string) string {
	t.Helper()
	p, err := fixtures.Path("gitops-runtime/" + dir + "/gitops-runtime")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRulesReadFromTheRenderedHooks renders the real charts and reads the
// validate-values hook's Argo CD range and labels, which change with the
// chart line, and the kubeVersions of the subcharts the install deploys.
func TestRulesReadFromTheRenderedHooks(t *testing.T) {
	base := func(extra map[string]any) map[string]any {
		v := map[string]any{"global": map[string]any{"runtime": map[string]any{"name": "rt1"},
			"codefresh": map[string]any{"accountId": "acc", "userToken": map[string]any{"token": "x"}}}}
		for k, x := range extra {
			v[k] = x
		}
		return v
	}
	noArgo := map[string]any{"argo-cd": map[string]any{"enabled": false}}
	for _, tt := range []struct {
		dir, version, constraint string
	}{
		{"chart", "0.30.0", ">=3.2 <=3.4"},
		{"chart-0.27", "0.27.6", ">=3 <=3.2"},
		{"chart-0.26", "0.26.8", ">=3 <=3.2"},
	} {
		t.Run(tt.dir, func(t *testing.T) {
			c, err := Load(context.Background(), Source{Ref: fixtureLine(t, tt.dir), Settings: isolatedSettings(t)})
			if err != nil {
				t.Fatal(err)
			}
			r, err := Render(context.Background(), c, "rel1", "ns1", base(noArgo), Capabilities{KubeVersion: "v1.30.2"})
			if err != nil {
				t.Fatal(err)
			}
			if r.ChartVersion != tt.version {
				t.Errorf("chart version %s, want %s", r.ChartVersion, tt.version)
			}
			vv := r.ValidationHooks.ValidateValues
			if vv == nil {
				t.Fatal("no validate-values hook read")
			}
			want := ValidateValues{ArgoCDVersionConstraint: tt.constraint, ArgoCDServerSelector: "app.kubernetes.io/component=server,app.kubernetes.io/part-of=argocd", ChecksArgoCDVersion: true}
			if *vv != want {
				t.Errorf("validate-values %+v, want %+v", *vv, want)
			}
			if !r.ValidationHooks.ValidateUsage || !r.ValidationHooks.ValuesConfigMap {
				t.Errorf("hooks %+v: validate-usage and helm-values-config rendered by default", r.ValidationHooks)
			}
			// Argo CD disabled: its kubeVersion is not a rule of this install.
			for _, k := range r.KubeVersions {
				if k.Chart == "gitops-runtime/argo-cd" {
					t.Errorf("kubeVersion of a disabled subchart kept: %+v", k)
				}
			}

			// Argo CD installed by the chart: the hook does not check its
			// version, and its subchart's kubeVersion applies.
			r, err = Render(context.Background(), c, "rel1", "ns1", base(map[string]any{"installer": map[string]any{"skipUsageValidation": true}}), Capabilities{KubeVersion: "v1.30.2"})
			if err != nil {
				t.Fatal(err)
			}
			if vv := r.ValidationHooks.ValidateValues; vv == nil || vv.ChecksArgoCDVersion {
				t.Errorf("validate-values with the chart's Argo CD: %+v", vv)
			}
			if r.ValidationHooks.ValidateUsage || !r.ValidationHooks.ValuesConfigMap {
				t.Errorf("skipUsageValidation: hooks %+v", r.ValidationHooks)
			}
			var argo *KubeVersionRule
			for i, k := range r.KubeVersions {
				if k.Chart == "gitops-runtime/argo-cd" {
					argo = &r.KubeVersions[i]
				}
			}
			if argo == nil || argo.Constraint != ">=1.25.0-0" || argo.Root {
				t.Fatalf("argo-cd kubeVersion %+v in %+v", argo, r.KubeVersions)
			}
			for v, ok := range map[string]bool{"v1.30.2": true, "v1.25.0": true, "v1.29.3-eks-4f4795d": true, "v1.24.17": false, "v1.23.0+k3s1": false} {
				if argo.Allows(v) != ok {
					t.Errorf("%s allows %s: %v, want %v", argo.Constraint, v, !ok, ok)
				}
			}

			r, err = Render(context.Background(), c, "rel1", "ns1", base(map[string]any{"installer": map[string]any{"skipValidation": true, "skipUsageValidation": true}}), Capabilities{KubeVersion: "v1.30.2"})
			if err != nil {
				t.Fatal(err)
			}
			if r.ValidationHooks != (Hooks{}) {
				t.Errorf("both validations skipped: hooks %+v", r.ValidationHooks)
			}
		})
	}
}

func TestKubeVersionRulesOfTheLoadedChart(t *testing.T) {
	c, err := Load(context.Background(), Source{Ref: fixtureLine(t, "chart"), Settings: isolatedSettings(t)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range KubeVersionRules(c) {
		got[r.Chart] = r.Constraint
	}
	if got["gitops-runtime/argo-cd"] != ">=1.25.0-0" || got["gitops-runtime/sealed-secrets"] != ">=1.16.0-0" {
		t.Errorf("declared kubeVersions %v", got)
	}
	if _, ok := got["gitops-runtime"]; ok {
		t.Errorf("chart 0.30.0 declares no kubeVersion of its own: %v", got)
	}
}

// TestReleaseShapeOfTheMultiRuntimeValues renders chart 0.30.0 with the
// chart's own multi-runtime values files, as a first and as a further
// runtime, and reads the shape a stored release of each would have.
func TestReleaseShapeOfTheMultiRuntimeValues(t *testing.T) {
	dir := fixtureLine(t, "chart")
	c, err := Load(context.Background(), Source{Ref: dir, Settings: isolatedSettings(t)})
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) map[string]any {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		v, err := chartutil.ReadValues(b)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	base := map[string]any{"global": map[string]any{"runtime": map[string]any{"name": "rt1", "ingressUrl": "https://rt1.example.test"}, "codefresh": map[string]any{"accountId": "acc", "userToken": map[string]any{"token": "x"}}}}
	further := chartutil.CoalesceTables(read("values-multi-runtimes.yaml"), base)
	first := chartutil.CoalesceTables(read("values-multi-runtimes-first.yaml"), chartutil.CoalesceTables(read("values-multi-runtimes.yaml"), base))
	for _, tt := range []struct {
		name   string
		vals   map[string]any
		single bool
		crds   bool
	}{
		{"default", base, false, true},
		{"first", first, true, true},
		{"further", further, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Render(context.Background(), c, "rel1", "ns1", tt.vals, Capabilities{KubeVersion: "v1.30.2"})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(r.CRDs()) > 0; got != tt.crds {
				t.Errorf("rendering installs CRDs: %v, want %v (%v)", got, tt.crds, r.CRDs())
			}
			s, err := ReleaseShape(&rspb.Release{Name: "rel1", Chart: c, Config: tt.vals, Manifest: r.Manifest})
			if err != nil {
				t.Fatal(err)
			}
			if s.ChartVersion != "0.30.0" || s.SingleNamespace != tt.single || (len(s.CRDs) > 0) != tt.crds {
				t.Errorf("shape %+v, want singleNamespace %v, CRDs %v", s, tt.single, tt.crds)
			}
		})
	}
}

// BenchmarkReleaseShape reads the shape of a stored release of chart
// 0.30.0 with its default values (CoalesceValues over the chart tree, and
// the kinds of its manifest's documents): what existing-runtime spends on
// each installed runtime.
func BenchmarkReleaseShape(b *testing.B) {
	c, err := Load(context.Background(), Source{Ref: fixtureChart(b)})
	if err != nil {
		b.Fatal(err)
	}
	vals := map[string]any{"global": map[string]any{"runtime": map[string]any{"name": "rt1"}, "codefresh": map[string]any{"accountId": "acc", "userToken": map[string]any{"token": "x"}}}}
	r, err := Render(context.Background(), c, "rel1", "ns1", vals, Capabilities{KubeVersion: "v1.30.2"})
	if err != nil {
		b.Fatal(err)
	}
	rel := &rspb.Release{Name: "rel1", Chart: c, Config: vals, Manifest: r.Manifest}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := ReleaseShape(rel); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(r.Manifest))/1e6, "manifest-MB")
}
