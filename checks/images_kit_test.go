package checks

import (
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/fixtures"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// imageChart writes a small chart shaped as the gitops-runtime chart's
// image and egress values are: a component whose registry
// global.imageRegistry overrides (app, bound to a Role: it calls the API
// server), a hook whose repository carries its registry (installer), an
// --executor-image argument the chart writes itself (ctrl, on app's
// ServiceAccount with no token mounted), a component that calls the
// platform with a map of env values and no global proxy (op), a
// repo-server with a list of env values and the Argo CD repository Secrets
// of a repositories value (repo), the global proxy on app and the hook
// (whose ServiceAccount, set by the deprecated serviceAccount field as the
// real hooks do, a RoleBinding names), Services, and internal-router's
// resolver. It returns the chart's directory.
func imageChart(t *testing.T) string {
	t.Helper()
	return imageChartAt(t, "docker.io")
}

// kitDeployment is a chart template of Deployment name, its pods labelled
// app: name (and labels, "k: v" pairs), with spec (the pod spec, indented
// six spaces).
func kitDeployment(name, labels, spec string) string {
	if labels != "" {
		labels = ", " + labels
	}
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ` + name + `}
spec:
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + labels + `}}
    spec:
` + spec
}

// kitService is a chart template of Service name selecting app: name, with
// ports (a flow list).
func kitService(name, ports string) string {
	return "---\napiVersion: v1\nkind: Service\nmetadata: {name: " + name + "}\nspec:\n  selector: {app: " + name + "}\n  ports: " + ports + "\n"
}

// imageChartAt is imageChart with ctrl's --executor-image at registry.
func imageChartAt(t *testing.T, registry string) string {
	t.Helper()
	templates := kitComponents(registry)
	for name, text := range kitHookAndRouter() {
		templates[name] = text
	}
	return targetChart(t, "0.30.0", kitImageValues, templates)
}

// kitProxyEnv gives a container the global proxy values as its
// environment, when they are set.
const kitProxyEnv = `        {{- if .Values.global.httpsProxy }}
        - {name: HTTPS_PROXY, value: {{ .Values.global.httpsProxy | quote }}}
        - {name: HTTP_PROXY, value: {{ .Values.global.httpProxy | quote }}}
        - {name: NO_PROXY, value: {{ .Values.global.noProxy | quote }}}
        {{- end }}
`

// kitImageValues are the values of imageChart.
const kitImageValues = `global:
  imageRegistry: ""
  httpProxy: ""
  httpsProxy: ""
  noProxy: ""
app:
  image: {registry: quay.io, repository: codefresh/app, tag: "1.2.3"}
  imagePullSecrets: []
installer:
  image: {repository: quay.io/codefresh/installer, tag: "0.30.0"}
op:
  env: {}
repo:
  env: []
repositories: {}
router:
  dnsService: kube-dns
  dnsNamespace: kube-system
  clusterDomain: cluster.local
`

// kitComponents are imageChart's components (app, op, ctrl, repo), ctrl's
// --executor-image at registry.
func kitComponents(registry string) map[string]string {
	return map[string]string{
		"app.yaml": kitDeployment("app", "", `      serviceAccountName: app
      {{- with .Values.app.imagePullSecrets }}
      imagePullSecrets: {{ toYaml . | nindent 8 }}
      {{- end }}
      containers:
      - name: app
        image: {{ .Values.global.imageRegistry | default .Values.app.image.registry }}/{{ .Values.app.image.repository }}:{{ .Values.app.image.tag }}
        ports: [{name: http, containerPort: 3017}]
        env:
        - {name: CF_URL, value: "https://g.codefresh.io"}
        - {name: OP_URL, value: "http://op:8080"}
`+kitProxyEnv) + `---
apiVersion: v1
kind: ServiceAccount
metadata: {name: app}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: app}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: app}
subjects: [{kind: ServiceAccount, name: app}]
` + kitService("app", "[{port: 3017, targetPort: http}]"),
		"op.yaml": kitDeployment("op", "", `      containers:
      - name: manager
        image: {{ .Values.global.imageRegistry | default "quay.io" }}/codefresh/op:c0ef368
        ports: [{containerPort: 8080}]
        env:
        - {name: CF_URL, value: "https://g.codefresh.io"}
        {{- range $k, $v := .Values.op.env }}
        - {name: {{ $k }}, value: {{ $v | quote }}}
        {{- end }}
`) + kitService("op", "[{port: 8080}]"),
		"ctrl.yaml": kitDeployment("ctrl", "", `      serviceAccountName: app
      automountServiceAccountToken: false
      containers:
      - name: ctrl
        image: {{ .Values.global.imageRegistry | default "quay.io" }}/argoproj/ctrl:v3.7.2
        args: ["--executor-image", "`+registry+`/fixed/exec:v1"]
`),
		"repo.yaml": kitDeployment("repo", "app.kubernetes.io/component: repo-server", `      containers:
      - name: repo
        image: {{ .Values.global.imageRegistry | default "quay.io" }}/argoproj/ctrl:v3.7.2
        {{- with .Values.repo.env }}
        env: {{ toYaml . | nindent 8 }}
        {{- end }}
`) + `{{- range $name, $r := .Values.repositories }}
---
apiVersion: v1
kind: Secret
metadata:
  name: repo-{{ $name }}
  labels: {argocd.argoproj.io/secret-type: repository}
data:
  {{- range $k, $v := $r }}
  {{ $k }}: {{ $v | b64enc }}
  {{- end }}
{{- end }}
`,
	}
}

// kitHookAndRouter are imageChart's validate-values hook and
// internal-router's configuration.
func kitHookAndRouter() map[string]string {
	return map[string]string{
		"hook.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: validate-values
  annotations: {helm.sh/hook: pre-install}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: validate-values}
subjects: [{kind: ServiceAccount, name: validate-values-sa}]
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: validate-values-sa
  annotations: {helm.sh/hook: pre-install}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: validate-values
  annotations: {helm.sh/hook: pre-install}
spec:
  template:
    spec:
      restartPolicy: Never
      serviceAccount: validate-values-sa
      containers:
      - name: validate-values
        image: {{ .Values.installer.image.repository }}:{{ .Values.installer.image.tag }}
        env:
        - {name: PLATFORM_URL, value: "https://g.codefresh.io"}
` + kitProxyEnv,
		"router.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: internal-router-config}
data:
  default.conf.template: |
    server {
      listen 8080;
      resolver {{ .Values.router.dnsService }}.{{ .Values.router.dnsNamespace }}.svc.{{ .Values.router.clusterDomain }} valid=10s;
    }
`,
	}
}

// imageInputs are the planned install of --set sets, as the command
// derives it (plan.New).
func imageInputs(t *testing.T, sets ...string) Inputs {
	t.Helper()
	in, err := plan.New(plan.Flags{SetValues: sets})
	if err != nil {
		t.Fatal(err)
	}
	if in.RenderValues == nil {
		in.RenderValues = map[string]any{}
	}
	return in
}

// onEveryChartLine runs f, in parallel subtests, on each real line of the
// gitops-runtime chart in the fixtures (0.26, 0.27, 0.30): dir is the
// chart's directory.
func onEveryChartLine(t *testing.T, f func(t *testing.T, dir string)) {
	for _, line := range []string{"chart-0.26", "chart-0.27", "chart"} {
		t.Run(line, func(t *testing.T) {
			t.Parallel() // each line's renders take seconds
			dir, err := fixtures.Path("gitops-runtime/" + line + "/gitops-runtime")
			if err != nil {
				t.Fatal(err)
			}
			f(t, dir)
		})
	}
}
