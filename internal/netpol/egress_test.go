package netpol

import (
	"encoding/base64"
	"net/url"
	"slices"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

// rendering is a rendering of manifest's objects (no hooks).
func rendering(t *testing.T, manifest string) (*chart.Rendering, []chart.Pod) {
	t.Helper()
	objs, err := chart.ManifestObjects(manifest)
	if err != nil {
		t.Fatal(err)
	}
	r := &chart.Rendering{ChartName: "rt", Objects: objs}
	pods, err := r.Pods()
	if err != nil {
		t.Fatal(err)
	}
	return r, pods
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// egressManifest: app is bound to a Role (it calls the API server) and
// names the platform and Service op in its environment, behind a proxy;
// router names the platform only as a CORS origin, in a mounted
// ConfigMap, and mounts the platform CA; tunnel's mounted frpc.ini names
// the tunnel server; repo is a repo-server whose repository a Secret
// holds, with a proxy of its own.
var egressManifest = egressBase + repoWithRepository

const egressBase = `apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  template:
    metadata: {labels: {app: app}}
    spec:
      serviceAccountName: app
      containers:
      - name: app
        image: app:1
        ports: [{name: http, containerPort: 3017}]
        env:
        - {name: CF_URL, value: "https://g.codefresh.io"}
        - {name: OP_URL, value: "http://op:8080"}
        - {name: https_proxy, value: "http://proxy.corp:3128"}
        - {name: NO_PROXY, value: ".svc"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: app}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: app}
subjects: [{kind: ServiceAccount, name: app}]
---
apiVersion: v1
kind: Service
metadata: {name: op}
spec:
  selector: {app: op}
  ports: [{port: 8080, targetPort: 9090}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: op}
spec:
  template:
    metadata: {labels: {app: op}}
    spec:
      containers: [{name: op, image: op:1, ports: [{containerPort: 9090}]}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: router-config}
data:
  nginx.conf: |
    add_header Access-Control-Allow-Origin https://g.codefresh.io;
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: router}
spec:
  template:
    metadata: {labels: {app: router}}
    spec:
      containers: [{name: router, image: router:1}]
      volumes:
      - {name: conf, configMap: {name: router-config}}
      - {name: ca, secret: {secretName: platform-ca}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: frpc}
data: {frpc.ini: "server_addr = register-tunnels.cf-cd.com"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: tunnel}
spec:
  template:
    metadata: {labels: {app: tunnel}}
    spec:
      containers: [{name: tunnel, image: tunnel:1}]
      volumes: [{name: conf, projected: {sources: [{configMap: {name: frpc}}]}}]
`

var repoWithRepository = `---
apiVersion: v1
kind: Secret
metadata:
  name: repo-runtime
  labels: {argocd.argoproj.io/secret-type: repository}
data: {url: ` + b64("git@github.com:org/runtime.git") + `, proxy: ` + b64("http://git-proxy.corp:3128") + `}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: repo}
spec:
  template:
    metadata: {labels: {app: repo, app.kubernetes.io/component: repo-server}}
    spec:
      containers: [{name: repo, image: repo:1}]
`

// dests returns the destinations of the pod named name as "What URL".
func dests(t *testing.T, pods []PodEgress, name string) []string {
	t.Helper()
	for _, p := range pods {
		if p.Pod.Name == name {
			var out []string
			for _, d := range p.Dests {
				out = append(out, d.What+" "+d.URL.String())
			}
			return out
		}
	}
	t.Fatalf("no pod %s", name)
	return nil
}

func TestEgress(t *testing.T) {
	r, pods := rendering(t, egressManifest)
	rel := Release{Namespace: "rt", PlatformURL: "https://g.codefresh.io", TunnelServer: "register-tunnels.cf-cd.com",
		Tunnel: true, PlatformCASecret: "platform-ca", APIServerIP: "10.96.0.1"}
	eg := Egress(r, pods, rel)
	for name, want := range map[string][]string{
		"app":    {"Service op http://op:8080", "the platform https://g.codefresh.io", "the API server https://10.96.0.1:443"},
		"op":     nil,
		"router": nil,
		"tunnel": {"the tunnel server https://register-tunnels.cf-cd.com:443"},
		"repo":   {"the Git provider ssh://github.com:22"},
	} {
		if got := dests(t, eg, name); !slices.Equal(got, want) {
			t.Errorf("%s: destinations %q, want %q", name, got, want)
		}
	}
	app, router, repo := eg[0], eg[2], eg[4]
	if !app.Proxied || app.HTTPSProxy != "http://proxy.corp:3128" || app.NoProxy != ".svc" || !app.CallsAPI {
		t.Errorf("app: %+v", app)
	}
	if !router.MountsCA || router.CallsAPI {
		t.Errorf("router mounts the platform CA and calls no API: %+v", router)
	}
	if repo.Dests[0].Proxy != "http://git-proxy.corp:3128" || !repo.Dests[0].External {
		t.Errorf("repo's repository: %+v", repo.Dests[0])
	}
	// Not in tunnel mode, the tunnel server is no destination; with no
	// repository, the repo-server still calls a Git provider.
	rel.Tunnel = false
	r, pods = rendering(t, egressBase+"---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: repo}\nspec:\n  template:\n"+
		"    metadata: {labels: {app.kubernetes.io/component: repo-server}}\n    spec: {containers: [{name: repo, image: repo:1}]}\n")
	eg = Egress(r, pods, rel)
	if got := dests(t, eg, "tunnel"); got != nil {
		t.Errorf("tunnel outside tunnel mode: %q", got)
	}
	if got := dests(t, eg, "repo"); len(got) != 1 || got[0] != "the Git provider (no repository URL in the values: argo-cd.configs.repositories, credentialTemplates) https:" {
		t.Errorf("repo without repositories: %q", got)
	}
}

func TestRepositoryURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/org/repo.git":    "https://github.com:443",
		"http://git.corp:8080/r":             "http://git.corp:8080",
		"git@github.com:org/repo.git":        "ssh://github.com:22",
		"ssh://git@gitlab.corp:2222/group/r": "ssh://gitlab.corp:2222",
		"oci://registry.corp/charts":         "https://registry.corp:443",
		"":                                   "<nil>",
		"not a url":                          "<nil>",
	} {
		got := "<nil>"
		if u := repositoryURL(in); u != nil {
			got = u.String()
		}
		if got != want {
			t.Errorf("repositoryURL(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestDestinationPort(t *testing.T) {
	for raw, want := range map[string]int32{"https://h": 443, "http://h": 80, "ssh://h": 22, "https://h:8443": 8443, "grpc://h": 443} {
		u, _ := url.Parse(raw)
		if got := PortOf(u); got != want {
			t.Errorf("PortOf(%s) = %d, want %d", raw, got, want)
		}
	}
}
