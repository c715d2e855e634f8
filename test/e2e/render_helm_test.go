package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestRenderIsHelmTemplate compares the plugin's rendering of the real chart
// 0.30.0 (which leaves out the chart files no template reads, see
// internal/chart) with what real `helm template` prints for the same
// values and Kubernetes version: the same documents, byte for byte, over
// the chart's own CI values files layered on a minimal values file.
func TestRenderIsHelmTemplate(t *testing.T) {
	tc.Parallel(t)
	helm := tc.HelmBinary(t)
	dir := fixtureChartLine(t, "chart")
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"), "HELM_CONFIG_HOME=" + filepath.Join(home, "config"), "HELM_DATA_HOME=" + filepath.Join(home, "data")}
	settings := cli.New()
	settings.RepositoryCache = filepath.Join(home, "cache")
	c, err := chart.Load(context.Background(), chart.Source{Ref: dir, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	base := chartValues(t, renderingValues+`    ingress:
      enabled: true
      hosts: [rt.example.com]
`)
	// sealed-secrets reads its files (dashboards/*.json) when asked to:
	// those files must stay.
	dashboards := chartValues(t, `sealed-secrets:
  metrics:
    dashboards:
      create: true
`)
	files := map[string][]string{"minimal with ingress": {base}, "sealed-secrets dashboards": {base, dashboards}}
	ci, _ := filepath.Glob(filepath.Join(dir, "ci", "*.yaml"))
	for _, f := range ci {
		files[filepath.Base(f)] = []string{base, f}
	}
	if len(files) < 6 {
		t.Fatalf("values cases %v", files)
	}
	rendered := 0
	for name, fs := range files {
		t.Run(name, func(t *testing.T) {
			merged := map[string]any{}
			args := []string{"template", "cf-gitops-runtime", dir, "-n", "codefresh", "--kube-version", "v1.30.2"}
			for _, f := range fs {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				v := map[string]any{}
				if err := yaml.Unmarshal(b, &v); err != nil {
					t.Fatal(err)
				}
				merged = chartutil.MergeTables(v, merged) // a later file wins, as with helm -f
				args = append(args, "-f", f)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, helm, args...)
			cmd.Env = env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			herr := cmd.Run()
			r, perr := chart.Render(context.Background(), c, "cf-gitops-runtime", "codefresh", merged, chart.Capabilities{KubeVersion: "v1.30.2"})
			if (herr == nil) != (perr == nil) {
				t.Fatalf("helm template error %v (%s), plugin render error %v", herr, stderr.String(), perr)
			}
			if herr != nil {
				return
			}
			rendered++
			want, got := documents(stdout.String()), documents(r.Manifest)
			if len(got) != len(want) {
				t.Fatalf("%d documents rendered, helm template printed %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("document differs:\nplugin:\n%s\nhelm template:\n%s", got[i], want[i])
				}
			}
		})
	}
	if rendered < 4 {
		t.Errorf("only %d of %d values cases rendered", rendered, len(files))
	}
}

// documents splits a multi-document manifest into its trimmed, non-empty
// documents, sorted.
func documents(s string) []string {
	var out []string
	for _, d := range strings.Split("\n"+s, "\n---") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// TestHelmRendersTheTrimmedCharts: the chart lines the tests give Helm
// (chartLine: each fixture line without the files no template reads) render
// under real `helm template`, CRDs included, to the bytes the whole fixture
// line renders to: Helm 3 on 0.26.8, 0.27.6 and 0.30.0, Helm 4 on 0.30.0.
// The values turn on sealed-secrets' dashboards, the files a template of the
// chart reads.
func TestHelmRendersTheTrimmedCharts(t *testing.T) {
	tc.Parallel(t)
	values := chartValues(t, renderingValues+`    ingress:
      enabled: true
      hosts: [rt.example.com]
sealed-secrets:
  metrics:
    dashboards:
      create: true
`)
	cases := []struct{ line, major string }{{"chart-0.26", "3"}, {"chart-0.27", "3"}, {"chart", "3"}, {"chart", "4"}}
	for _, cs := range cases {
		t.Run(cs.line+"/helm"+cs.major, func(t *testing.T) {
			helm := tc.HelmBinary(t)
			if cs.major == "4" {
				helm = tc.Helm4Binary(t)
			}
			whole, trimmed := fixtureChartLine(t, cs.line), chartLine(t, cs.line)
			for _, gone := range []string{"README.md", filepath.Join("charts", "argo-cd", "README.md")} {
				if _, err := os.Stat(filepath.Join(trimmed, gone)); !os.IsNotExist(err) {
					t.Errorf("%s of %s: still in the trimmed copy (%v)", gone, cs.line, err)
				}
			}
			want, got := helmTemplateWith(t, helm, whole, "codefresh", values, "--include-crds"), helmTemplateWith(t, helm, trimmed, "codefresh", values, "--include-crds")
			if !strings.Contains(want, "kind: CustomResourceDefinition") || !strings.Contains(want, "kind: Deployment") {
				t.Fatalf("helm template of %s rendered no CRD or no Deployment:\n%.2000s", cs.line, want)
			}
			if got != want {
				w, g := documents(want), documents(got)
				for i := range min(len(w), len(g)) {
					if w[i] != g[i] {
						t.Fatalf("%s: the trimmed copy renders another document:\ntrimmed:\n%s\nwhole:\n%s", cs.line, g[i], w[i])
					}
				}
				t.Fatalf("%s: the trimmed copy renders %d documents, the whole line %d", cs.line, len(g), len(w))
			}
		})
	}
}
