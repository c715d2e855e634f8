package chart

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/cli"
)

// fixtureChart is the real gitops-runtime chart 0.30.0 with its
// dependencies, read in place (never copied into the repository).
func fixtureChart(t testing.TB) string {
	t.Helper()
	return fixtureLine(t, "chart")
}

func isolatedSettings(t *testing.T) *cli.EnvSettings {
	dir := t.TempDir()
	t.Setenv("HELM_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("HELM_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("HELM_DATA_HOME", filepath.Join(dir, "data"))
	return cli.New()
}

func TestLoadLocalAndRender(t *testing.T) {
	c, err := Load(context.Background(), Source{Ref: fixtureChart(t), Settings: isolatedSettings(t)})
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{"global": map[string]any{"runtime": map[string]any{"name": "rt1"}, "codefresh": map[string]any{"accountId": "acc", "userToken": map[string]any{"token": "x"}}}}
	r, err := Render(context.Background(), c, "rel1", "ns1", vals, Capabilities{KubeVersion: "v1.30.2"})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range r.Objects {
		kinds[o.Kind]++
	}
	if kinds["ClusterRole"] == 0 || kinds["CustomResourceDefinition"] == 0 || kinds["Deployment"] == 0 {
		t.Errorf("rendered kinds %v", kinds)
	}
	if vals["argo-cd"] != nil {
		t.Error("Render wrote into the caller's values")
	}
	// Helm's install drops disabled subcharts from the chart it renders:
	// Render works on a copy, so the next render still has Argo CD.
	noArgo := map[string]any{"global": vals["global"], "argo-cd": map[string]any{"enabled": false}}
	if _, err := Render(context.Background(), c, "rel1", "ns1", noArgo, Capabilities{KubeVersion: "v1.30.2"}); err != nil {
		t.Fatal(err)
	}
	again, err := Render(context.Background(), c, "rel1", "ns1", vals, Capabilities{KubeVersion: "v1.30.2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Objects) != len(r.Objects) {
		t.Errorf("after a render without Argo CD: %d objects, first render %d", len(again.Objects), len(r.Objects))
	}

	noName := map[string]any{"global": map[string]any{"codefresh": map[string]any{"accountId": "acc", "userToken": map[string]any{"token": "x"}}}}
	_, err = Render(context.Background(), c, "rel1", "ns1", noName, Capabilities{KubeVersion: "v1.30.2"})
	re, ok := IsRenderError(err)
	if !ok {
		t.Fatalf("want a render error without global.runtime.name, got %v", err)
	}
	if msg := re.Message(); !strings.Contains(msg, "global.runtime.name is required") || strings.Contains(msg, "templates/") {
		t.Errorf("message %q (raw %q)", msg, re.Raw)
	}
}

func TestLoadUnreachableRegistryFailsFast(t *testing.T) {
	start := time.Now()
	refused := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, "127.0.0.1:9")
	}
	_, err := Load(context.Background(), Source{Ref: "oci://quay.io/codefresh/gitops-runtime", Timeout: 5 * time.Second, DialContext: refused, Settings: isolatedSettings(t)})
	if err == nil {
		t.Fatal("pull through a refused connection succeeded")
	}
	if !strings.Contains(err.Error(), "oci://quay.io/codefresh/gitops-runtime") {
		t.Errorf("error does not name the chart: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
	if _, err := Load(context.Background(), Source{Ref: "./no/such/chart", Settings: isolatedSettings(t)}); err == nil {
		t.Error("missing local chart loaded")
	}
}

func TestRenderErrorMessage(t *testing.T) {
	raw := `template: gitops-runtime/templates/a.yaml:30:41: executing "gitops-runtime/templates/a.yaml" at <include (print $.Template.BasePath "/cm.yaml") .>: error calling include: template: gitops-runtime/templates/_helpers.tpl:340:71: executing "codefresh-gitops-runtime.ingress-url" at <index .Values.global.runtime.ingress.hosts 0>: error calling index: reflect: slice index out of range`
	if got, want := (&RenderError{Raw: raw}).Message(), "error calling index: reflect: slice index out of range (in .Values.global.runtime.ingress.hosts)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	raw = `execution error at (gitops-runtime/templates/httproute.yaml:22:8): ERROR: global.runtime.httpRoute.parentRefs is required when httpRoute is enabled`
	if got := (&RenderError{Raw: raw}).Message(); got != "ERROR: global.runtime.httpRoute.parentRefs is required when httpRoute is enabled" {
		t.Errorf("got %q", got)
	}
}

// BenchmarkRender renders the real chart 0.30.0 as a pre-install run does
// (make bench runs it; make test only compiles it).
func BenchmarkRender(b *testing.B) {
	dir := fixtureChart(b)
	c, err := Load(context.Background(), Source{Ref: dir})
	if err != nil {
		b.Fatal(err)
	}
	vals := map[string]any{"global": map[string]any{"runtime": map[string]any{"name": "rt1"}, "codefresh": map[string]any{"accountId": "acc", "userToken": map[string]any{"token": "x"}}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(context.Background(), c, "rel1", "ns1", vals, Capabilities{KubeVersion: "v1.30.2"}); err != nil {
			b.Fatal(err)
		}
	}
}
