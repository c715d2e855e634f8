package checks

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

// hookChart writes a small chart named gitops-runtime, version version,
// whose pre-install hooks are rendered as the real chart renders them (the
// validate-values Job with the environment of its _env.yaml, skipped by
// installer.skipValidation; validate-usage; helm-values-config with the
// values) and whose Chart.yaml and dependencies declare the given
// kubeVersions (deps: name -> kubeVersion, each an enabled subchart).
// It returns the chart's directory.
func hookChart(t *testing.T, version, rangeEnv, kubeVersion string, deps map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "gitops-runtime")
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	meta := "apiVersion: v2\nname: gitops-runtime\nversion: " + version + "\n"
	if kubeVersion != "" {
		meta += "kubeVersion: " + `"` + kubeVersion + `"` + "\n"
	}
	if len(deps) > 0 {
		meta += "dependencies:\n"
		for name, kv := range deps {
			meta += "- name: " + name + "\n  version: 1.0.0\n"
			write("charts/"+name+"/Chart.yaml", "apiVersion: v2\nname: "+name+"\nversion: 1.0.0\nkubeVersion: \""+kv+"\"\n")
		}
	}
	write("Chart.yaml", meta)
	write("values.yaml", `installer:
  skipValidation: false
  skipUsageValidation: false
  argoCdVersionCheck:
    argoServerLabels:
      app.kubernetes.io/component: server
      app.kubernetes.io/part-of: argocd
argo-cd:
  enabled: true
`)
	write("templates/validate-values.yaml", `{{- if not .Values.installer.skipValidation }}
apiVersion: batch/v1
kind: Job
metadata:
  name: validate-values
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: validate-values
        image: quay.io/codefresh/gitops-runtime-installer:{{ .Chart.Version }}
        env:
        - name: ARGOCD_CHECK_VERSION
          value: {{ not (get .Values "argo-cd").enabled | quote }}
        - name: ARGOCD_LABELS
          value: "{{ range $k, $v := .Values.installer.argoCdVersionCheck.argoServerLabels }}{{ $k }}={{ $v }},{{ end }}"
        - name: REQUIRED_VERSION_CONSTRAINT
          value: "`+rangeEnv+`"
{{- end }}
`)
	write("templates/validate-usage.yaml", `{{- if not .Values.installer.skipUsageValidation }}
apiVersion: batch/v1
kind: Job
metadata:
  name: validate-usage
  annotations:
    helm.sh/hook: pre-install
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: validate-usage, image: quay.io/codefresh/gitops-runtime-installer}]
{{- end }}
`)
	write("templates/helm-values-cm.yaml", `{{- if not (and .Values.installer.skipValidation .Values.installer.skipUsageValidation) }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: helm-values-config
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
data:
  values.yaml: |
{{ .Values | toYaml | indent 4 }}
{{- end }}
`)
	return dir
}

// withChart makes the kit's run render the chart at ref (a directory) with
// the kit's inputs, against the kit's server version.
func (k *kit) withChart(ref string) *kit { k.chartRef = ref; return k }

// startKitChart starts the rendering of a kit run.
func startKitChart(ref string, in Inputs, kubeVersion string) *chart.Pending {
	return chart.Start(context.Background(), chart.NewLoader(chart.Source{Ref: ref}), in.ReleaseName, in.Namespace, in.RenderValues,
		func() (chart.Capabilities, error) { return chart.Capabilities{KubeVersion: kubeVersion}, nil })
}

// outcome runs c alone through the runner and returns its outcome (the
// result's impact in Meta.Impact).
func (k *kit) outcome(c Check) Outcome {
	k.t.Helper()
	return Run(k.t.Context(), k.env(), []Check{c}, RunOptions{})[0]
}

func existingArgoInputs(extra map[string]any) Inputs {
	vals := map[string]any{"argo-cd": map[string]any{"enabled": false}}
	for k, v := range extra {
		vals[k] = v
	}
	return Inputs{ExistingArgoCD: true, Namespace: "argocd", Values: vals, RenderValues: vals}
}

// TestArgoCDVersionFromTheChart: the range is the rendered hook's, so the
// verdict on one Argo CD flips with the chart line; the override says whose
// range it replaces; without a rendered hook, today's default, saying why.
func TestArgoCDVersionFromTheChart(t *testing.T) {
	c030 := hookChart(t, "0.30.0", ">=3.2 <=3.4", "", nil)
	c027 := hookChart(t, "0.27.6", ">=3 <=3.2", "", nil)
	v31 := argoServerYAML("argocd", "quay.io/argoproj/argocd:v3.1.8")
	v34 := argoServerYAML("argocd", "quay.io/argoproj/argocd:v3.4.2")
	in := existingArgoInputs(nil)
	override := in
	override.ArgoCDVersionRange = ">=3.1 <3.2"
	skipped := existingArgoInputs(map[string]any{"installer": map[string]any{"skipValidation": true}})
	broken := existingArgoInputs(map[string]any{"installer": "not a map"})
	tests := []struct {
		name   string
		chart  string
		in     Inputs
		argo   string
		want   outcome
		impact Impact
	}{
		{"0.30 refuses 3.1", c030, in, v31, outcome{StatusFail, []string{`Argo CD v3.1.8 does not satisfy ">=3.2 <=3.4"`, "REQUIRED_VERSION_CONSTRAINT of the validate-values hook of chart gitops-runtime 0.30.0"}}, ""},
		{"0.30 accepts 3.4", c030, in, v34, outcome{StatusPass, []string{`Argo CD v3.4.2 satisfies ">=3.2 <=3.4"`, "chart gitops-runtime 0.30.0"}}, ""},
		{"0.27 accepts 3.1", c027, in, v31, outcome{StatusPass, []string{`satisfies ">=3 <=3.2"`, "chart gitops-runtime 0.27.6"}}, ""},
		{"0.27 refuses 3.4", c027, in, v34, outcome{StatusFail, []string{`Argo CD v3.4.2 does not satisfy ">=3 <=3.2"`, "chart gitops-runtime 0.27.6"}}, ""},
		{"override replaces the chart's range", c030, override, v31, outcome{StatusPass, []string{`satisfies ">=3.1 <3.2"`, `--argocd-version-range, in place of ">=3.2 <=3.4" (REQUIRED_VERSION_CONSTRAINT of the validate-values hook of chart gitops-runtime 0.30.0)`}}, ""},
		{"no chart: today's default, saying so", "", in, v31, outcome{StatusFail, []string{`does not satisfy ">=3.2 <=3.4"`, "no chart loaded", "default of chart 0.30.0"}}, ""},
		{"skipValidation: the default, nothing enforces it", c027, skipped, v31, outcome{StatusFail, []string{`">=3.2 <=3.4"`, "renders no validate-values hook (installer.skipValidation=true)"}}, ImpactRuntimeBreaks},
		{"chart does not render", c030, broken, v34, outcome{StatusPass, []string{"the chart did not render", "default of chart 0.30.0"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKit(t, tt.argo).with(tt.in)
			if tt.chart != "" {
				k.withChart(tt.chart)
			}
			o := k.outcome(ArgoCDVersionCheck())
			tt.want.expect(t, o.Result)
			if want := cmp.Or(tt.impact, ImpactInstallFails); o.Meta.Impact != want {
				t.Errorf("impact %q, want %q", o.Meta.Impact, want)
			}
		})
	}
}

// TestArgoCDServerLabelsFromTheChart: the Service is looked up with the
// labels the rendered hook uses (installer.argoCdVersionCheck.argoServerLabels).
func TestArgoCDServerLabelsFromTheChart(t *testing.T) {
	c := hookChart(t, "0.30.0", ">=3.2 <=3.4", "", nil)
	custom := existingArgoInputs(map[string]any{"installer": map[string]any{"argoCdVersionCheck": map[string]any{"argoServerLabels": map[string]any{"team": "gitops"}}}})
	// The chart's labels merge with the user's (Helm's values coalescing):
	// the Service must carry all three.
	server := argoServerYAML("argocd", "quay.io/argoproj/argocd:v3.4.2")
	k := newKit(t, server).with(custom).withChart(c)
	outcome{StatusFail, []string{"no Service labelled app.kubernetes.io/component=server,app.kubernetes.io/part-of=argocd,team=gitops", "ARGOCD_LABELS of the validate-values hook of chart gitops-runtime 0.30.0"}}.expect(t, k.run(ArgoCDServerCheck()))
	labelled := strings.Replace(server, "app.kubernetes.io/part-of: argocd}\nspec: {selector", "app.kubernetes.io/part-of: argocd, team: gitops}\nspec: {selector", 1)
	k = newKit(t, labelled).with(custom).withChart(c)
	outcome{StatusPass, []string{"Service argocd/argocd-server", "team=gitops"}}.expect(t, k.run(ArgoCDServerCheck()))
	outcome{StatusPass, []string{"v3.4.2"}}.expect(t, k.run(ArgoCDVersionCheck()))
}

// TestKubernetesVersionFromTheChart: the floors are the kubeVersions of the
// chart being installed and of the subcharts it deploys: the chart's own not
// met fails (Helm refuses), a subchart's warns naming it (Helm installs).
func TestKubernetesVersionFromTheChart(t *testing.T) {
	subs := hookChart(t, "0.30.0", ">=3.2 <=3.4", "", map[string]string{"argo-cd": ">=1.25.0-0", "sealed-secrets": ">=1.16.0-0"})
	own := hookChart(t, "9.9.9", ">=3.2 <=3.4", ">=1.27.0-0", nil)
	tests := []struct {
		name    string
		chart   string
		in      Inputs
		version string
		want    outcome
		impact  Impact
	}{
		{"subcharts met", subs, Inputs{}, "v1.30.2", outcome{StatusPass, []string{"server version v1.30.2", `gitops-runtime/argo-cd 1.0.0 (kubeVersion ">=1.25.0-0")`, "chart gitops-runtime 0.30.0"}}, ""},
		{"EKS suffix meets -0 floors", subs, Inputs{}, "v1.25.16-eks-3af4770", outcome{StatusPass, []string{"v1.25.16-eks-3af4770"}}, ""},
		{"argo-cd subchart not met", subs, Inputs{}, "v1.24.17", outcome{StatusWarn, []string{
			`does not meet the kubeVersion of subchart gitops-runtime/argo-cd 1.0.0 (kubeVersion ">=1.25.0-0")`, "chart gitops-runtime 0.30.0", "Helm does not check a subchart's kubeVersion"}}, ImpactRuntimeBreaks},
		{"docs minimum first", subs, Inputs{}, "v1.22.17", outcome{StatusFail, []string{"older than 1.23.0"}}, ""},
		{"chart's own kubeVersion: Helm refuses", own, Inputs{}, "v1.26.3", outcome{StatusFail, []string{`gitops-runtime 9.9.9 (kubeVersion ">=1.27.0-0")`, "Helm refuses the install", "chart requires kubeVersion"}}, ImpactInstallFails},
		{"no chart: the default Argo CD subchart", "", Inputs{}, "v1.24.0", outcome{StatusWarn, []string{"gitops-runtime/argo-cd", "no chart loaded", "default of chart 0.30.0"}}, ImpactRuntimeBreaks},
		{"no chart, existing Argo CD", "", Inputs{ExistingArgoCD: true}, "v1.24.0", outcome{StatusPass, []string{"not deployed with --existing-argocd"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKit(t).with(tt.in).serverVersion(tt.version)
			if tt.chart != "" {
				k.withChart(tt.chart)
			}
			o := k.outcome(KubernetesVersion())
			tt.want.expect(t, o.Result)
			if want := cmp.Or(tt.impact, ImpactRuntimeBreaks); o.Meta.Impact != want {
				t.Errorf("impact %q, want %q", o.Meta.Impact, want)
			}
		})
	}
	// A subchart disabled by the values is not deployed: its rule is not
	// one of this install.
	vals := map[string]any{"argo-cd": map[string]any{"enabled": false}}
	cond := hookChart(t, "0.30.0", ">=3.2 <=3.4", "", map[string]string{"argo-cd": ">=1.25.0-0"})
	chartYAML := filepath.Join(cond, "Chart.yaml")
	b, err := os.ReadFile(chartYAML)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(chartYAML, []byte(strings.Replace(string(b), "  version: 1.0.0\n", "  version: 1.0.0\n  condition: argo-cd.enabled\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	k := newKit(t).with(Inputs{ExistingArgoCD: true, Values: vals, RenderValues: vals}).serverVersion("v1.24.0").withChart(cond)
	outcome{StatusPass, []string{"server version v1.24.0", "chart gitops-runtime 0.30.0"}}.expect(t, k.run(KubernetesVersion()))
	k = newKit(t).serverVersion("v1.24.0").withChart(cond)
	outcome{StatusWarn, []string{"gitops-runtime/argo-cd"}}.expect(t, k.run(KubernetesVersion()))
}
