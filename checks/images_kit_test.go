package checks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// imageChart writes a small chart shaped as the gitops-runtime chart's
// image and egress values are: a component whose registry global.imageRegistry
// overrides (app, bound to a Role: it calls the API server), a hook whose
// repository carries its registry (installer), an --executor-image
// argument the chart writes itself (ctrl, on app's ServiceAccount with no
// token mounted),
// a component that calls the platform with a map of env values and no
// global proxy (op), a repo-server with a list of env values and the
// Argo CD repository Secrets of a repositories value (repo), the global
// proxy on app and the hook (whose ServiceAccount, set by the deprecated
// serviceAccount field as the real hooks do, a RoleBinding names),
// Services, and internal-router's resolver.
// It returns the chart's directory.
func imageChart(t *testing.T) string {
	t.Helper()
	return imageChartAt(t, "docker.io")
}

// imageChartAt is imageChart with ctrl's --executor-image at registry.
func imageChartAt(t *testing.T, registry string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "gitops-runtime")
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: gitops-runtime\nversion: 0.30.0\n",
		"values.yaml": `global:
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
`,
		"templates/app.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      serviceAccountName: app
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
        {{- if .Values.global.httpsProxy }}
        - {name: HTTPS_PROXY, value: {{ .Values.global.httpsProxy | quote }}}
        - {name: HTTP_PROXY, value: {{ .Values.global.httpProxy | quote }}}
        - {name: NO_PROXY, value: {{ .Values.global.noProxy | quote }}}
        {{- end }}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: app}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: app}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: app}
subjects: [{kind: ServiceAccount, name: app}]
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec:
  selector: {app: app}
  ports: [{port: 3017, targetPort: http}]
`,
		"templates/op.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: op}
spec:
  selector: {matchLabels: {app: op}}
  template:
    metadata: {labels: {app: op}}
    spec:
      containers:
      - name: manager
        image: {{ .Values.global.imageRegistry | default "quay.io" }}/codefresh/op:c0ef368
        ports: [{containerPort: 8080}]
        env:
        - {name: CF_URL, value: "https://g.codefresh.io"}
        {{- range $k, $v := .Values.op.env }}
        - {name: {{ $k }}, value: {{ $v | quote }}}
        {{- end }}
---
apiVersion: v1
kind: Service
metadata: {name: op}
spec:
  selector: {app: op}
  ports: [{port: 8080}]
`,
		"templates/ctrl.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: ctrl}
spec:
  selector: {matchLabels: {app: ctrl}}
  template:
    metadata: {labels: {app: ctrl}}
    spec:
      serviceAccountName: app
      automountServiceAccountToken: false
      containers:
      - name: ctrl
        image: {{ .Values.global.imageRegistry | default "quay.io" }}/argoproj/ctrl:v3.7.2
        args: ["--executor-image", "` + registry + `/fixed/exec:v1"]
`,
		"templates/repo.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: repo}
spec:
  selector: {matchLabels: {app: repo}}
  template:
    metadata: {labels: {app: repo, app.kubernetes.io/component: repo-server}}
    spec:
      containers:
      - name: repo
        image: {{ .Values.global.imageRegistry | default "quay.io" }}/argoproj/ctrl:v3.7.2
        {{- with .Values.repo.env }}
        env: {{ toYaml . | nindent 8 }}
        {{- end }}
{{- range $name, $r := .Values.repositories }}
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
		"templates/hook.yaml": `apiVersion: rbac.authorization.k8s.io/v1
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
        {{- if .Values.global.httpsProxy }}
        - {name: HTTPS_PROXY, value: {{ .Values.global.httpsProxy | quote }}}
        - {name: NO_PROXY, value: {{ .Values.global.noProxy | quote }}}
        {{- end }}
`,
		"templates/router.yaml": `apiVersion: v1
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
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
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
