package checks

import (
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// hintSets returns the --set-string values of a hint's flags (one a line,
// "  --set-string 'path=value'"), as plan.Flags takes them.
func hintSets(t *testing.T, hint string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(hint, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "--set-string "); ok {
			out = append(out, strings.Trim(v, "'"))
		}
	}
	if len(out) == 0 {
		t.Fatalf("no --set-string in hint %q", hint)
	}
	return out
}

func TestEgressConfig(t *testing.T) {
	c := imageChart(t)
	api := `apiVersion: v1
kind: Service
metadata: {name: kubernetes, namespace: default}
spec: {clusterIP: 10.96.0.1, clusterIPs: [10.96.0.1], ports: [{port: 443}]}`
	proxy := []string{"global.httpsProxy=http://proxy.corp:3128", "global.httpProxy=http://proxy.corp:3128", "global.noProxy=.svc"}
	t.Run("no proxy", func(t *testing.T) {
		r := newKit(t, api).with(imageInputs(t)).withChart(c).run(EgressConfig())
		outcome{StatusPass, []string{"no proxy configured; 4 of 5 pods call the platform, the tunnel server or the Git provider directly"}}.expect(t, r)
	})
	var hint string
	t.Run("components the global proxy does not reach, and NO_PROXY that misses the API server and a Service", func(t *testing.T) {
		r := newKit(t, api).with(imageInputs(t, proxy...)).withChart(c).run(EgressConfig())
		outcome{StatusFail, []string{
			// A map of env values, found by Helm's render.
			"Deployment/op calls the platform (g.codefresh.io) with no proxy", "the value that gives it one: op.env",
			"--set-string 'op.env.HTTPS_PROXY=http://proxy.corp:3128'",
			// The repo-server's Git provider, unnamed in the values; a list of env values.
			"Deployment/repo calls the Git provider (no repository URL in the values", "the value that gives it one: repo.env",
			"--set-string 'repo.env[0].name=HTTPS_PROXY'", "--set-string 'repo.env[2].value=.svc\\,10.96.0.1\\,op'",
			// app is bound to a Role: it calls the API server; so does the hook.
			"Deployment/app sends Service op (op:8080), the API server (10.96.0.1:443) to the proxy: NO_PROXY \".svc\" does not cover them",
			"Job/validate-values (hook) sends the API server (10.96.0.1:443) to the proxy",
			`--set-string 'global.noProxy=.svc\,10.96.0.1\,op'`,
		}}.expect(t, r)
		hint = r.Hint
	})
	t.Run("with the values the hint gives", func(t *testing.T) {
		if hint == "" {
			t.Fatal("the failing case gave no hint")
		}
		in, err := plan.New(plan.Flags{SetValues: proxy, SetStringValues: hintSets(t, hint)})
		if err != nil {
			t.Fatal(err)
		}
		r := newKit(t, api).with(in).withChart(c).run(EgressConfig())
		outcome{StatusPass, []string{"the 4 pods that call the platform, the tunnel server or the Git provider are proxied"}}.expect(t, r)
	})
	t.Run("an Argo CD repository with its own proxy", func(t *testing.T) {
		sets := append([]string{"repositories.runtime.url=https://github.example/org/runtime.git", "repositories.runtime.proxy=http://git-proxy.corp:3128"}, proxy...)
		r := newKit(t, api).with(imageInputs(t, sets...)).withChart(c).run(EgressConfig())
		outcome{StatusFail, []string{"Deployment/op calls the platform"}}.expect(t, r)
		if strings.Contains(r.Message, "Deployment/repo") {
			t.Errorf("the repo-server reaches its repository through the repository's proxy: %s", r.Message)
		}
	})
	t.Run("a platform CA nothing mounts", func(t *testing.T) {
		r := newKit(t, api).with(imageInputs(t, "global.codefresh.tls.caCerts.secret.create=true")).withChart(c).run(EgressConfig())
		outcome{StatusFail, []string{"calls the platform without the platform CA (Secret codefresh-tls-certs) mounted"}}.expect(t, r)
	})
}

// TestEgressConfigProxyFromASecret: a proxy environment the chart renders
// into a Secret (base64 data) and gives a pod by envFrom is the pod's
// proxy; its NO_PROXY is judged and named by its Secret, never printed.
func TestEgressConfigProxyFromASecret(t *testing.T) {
	dir := writeKitChart(t, map[string]string{
		"values.yaml": "proxy: {https: 'http://proxy.corp:3128', except: '.corp.internal'}\n",
		"templates/app.yaml": kitDeployment("app", "", `      containers:
      - name: app
        image: quay.io/codefresh/app:1
        envFrom: [{secretRef: {name: proxy-env}}]
        env:
        - {name: CF_URL, value: "https://g.codefresh.io"}
        - {name: OP_URL, value: "http://op:8080"}
`) + kitService("op", "[{port: 8080}]") + `---
apiVersion: v1
kind: Secret
metadata: {name: proxy-env}
data:
  HTTPS_PROXY: {{ .Values.proxy.https | b64enc }}
  HTTP_PROXY: {{ .Values.proxy.https | b64enc }}
  NO_PROXY: {{ .Values.proxy.except | b64enc }}
`,
	})
	r := newKit(t).with(imageInputs(t)).withChart(dir).run(EgressConfig())
	outcome{StatusFail, []string{
		"Deployment/app sends Service op (op:8080) to the proxy: NO_PROXY (from Secret proxy-env) does not cover them",
	}}.expect(t, r)
	if strings.Contains(r.Message+r.Hint, ".corp.internal") {
		t.Errorf("a Secret's value printed: %s\n%s", r.Message, r.Hint)
	}
}

// TestEgressConfigOnEveryChartLine: on each real chart line of the
// fixtures, the chart's global proxy values with a NO_PROXY that leaves out
// the API server fail naming the pods that send it to the proxy and the
// values that fix it; the same values plus those the hint gives pass.
func TestEgressConfigOnEveryChartLine(t *testing.T) {
	api := `apiVersion: v1
kind: Service
metadata: {name: kubernetes, namespace: default}
spec: {clusterIP: 10.96.0.1, clusterIPs: [10.96.0.1], ports: [{port: 443}]}`
	sets := []string{"global.httpsProxy=http://proxy.corp:3128", "global.httpProxy=http://proxy.corp:3128", "global.noProxy=.svc",
		"global.runtime.name=rt1", "global.codefresh.accountId=acc", "global.codefresh.userToken.token=x"}
	onEveryChartLine(t, func(t *testing.T, dir string) {
		r := newKit(t, api).with(imageInputs(t, sets...)).withChart(dir).run(EgressConfig())
		outcome{StatusFail, []string{"Job/validate-values (hook) sends the API server (10.96.0.1:443) to the proxy", "global.noProxy="}}.expect(t, r)
		in, err := plan.New(plan.Flags{SetValues: sets, SetStringValues: hintSets(t, r.Hint)})
		if err != nil {
			t.Fatal(err)
		}
		again := newKit(t, api).with(in).withChart(dir).run(EgressConfig())
		if again.Status != StatusPass {
			t.Errorf("with the hint's values: %s: %s", again.Status, again.Message)
		}
	})
}
