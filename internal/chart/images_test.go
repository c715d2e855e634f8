package chart

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/cli"
	"sigs.k8s.io/yaml"
)

// startLine renders a chart line of the fixtures ("chart" for 0.30.0,
// "chart-0.27", "chart-0.26") through Start, as a run does.
func startLine(t *testing.T, line string, vals map[string]any) *Pending {
	t.Helper()
	if vals == nil {
		vals = map[string]any{}
	}
	g, _ := vals["global"].(map[string]any)
	if g == nil {
		g = map[string]any{}
		vals["global"] = g
	}
	g["runtime"] = map[string]any{"name": "rt1"}
	g["codefresh"] = map[string]any{"accountId": "acc", "userToken": map[string]any{"token": "x"}}
	return Start(context.Background(), NewLoader(Source{Ref: fixtureLine(t, line), Settings: parallelSettings(t)}), "cf", "codefresh", vals,
		func() (Capabilities, error) { return Capabilities{KubeVersion: "v1.30.2"}, nil })
}

// parallelSettings is isolatedSettings for a parallel test (which may not
// set the environment): Helm's files under a temporary directory.
func parallelSettings(t *testing.T) *cli.EnvSettings {
	dir := t.TempDir()
	s := cli.New()
	s.RepositoryConfig = filepath.Join(dir, "config", "repositories.yaml")
	s.RepositoryCache = filepath.Join(dir, "cache", "repository")
	s.RegistryConfig = filepath.Join(dir, "config", "registry", "config.json")
	return s
}

// chartLines are the lines of the gitops-runtime chart in the fixtures.
var chartLines = []string{"chart-0.26", "chart-0.27", "chart"}

// valuesFileHas reports whether the values files of the chart at dir (its
// values.yaml, and its dependencies' under charts/, by alias) hold value at
// path: read with sigs.k8s.io/yaml from the files, apart from Helm's loader.
func valuesFileHas(t *testing.T, dir string, path []string, value string) bool {
	t.Helper()
	return valuesFileMatch(t, dir, path, func(v any) bool { return v == value })
}

// valuesFileMatch reports whether a values file of the chart at dir (see
// valuesFileHas) holds a value at path that match accepts.
func valuesFileMatch(t *testing.T, dir string, path []string, match func(v any) bool) bool {
	t.Helper()
	read := func(file string) map[string]any {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		return m
	}
	var meta struct {
		Dependencies []struct{ Name, Alias string }
	}
	b, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if len(path) > 1 {
		for _, d := range meta.Dependencies {
			if path[0] == d.Name || path[0] == d.Alias {
				if valuesFileMatch(t, filepath.Join(dir, "charts", d.Name), path[1:], match) {
					return true
				}
			}
		}
	}
	var cur any = read(filepath.Join(dir, "values.yaml"))
	for _, k := range path {
		if i, ok := listIndex(k); ok {
			l, ok := cur.([]any)
			if !ok || i >= len(l) {
				return false
			}
			cur = l[i]
			continue
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[k]; !ok {
			return false
		}
	}
	return match(cur)
}

// TestKeysOnEveryChartLine traces, on every chart line of the fixtures
// (one render of each shared by the two tracings, the lines in parallel:
// the race detector makes each render of the real chart seconds long):
//   - the values that produce each image the release pulls or names: every
//     reference gets a key, every key found is in the chart's values files
//     with that value, no reference is left untraced by a key whose marked
//     render failed, and a mirror plan moves every image (PlanMirror renders
//     the chart with it and finds none elsewhere). On 0.30.0 also the keys
//     of the installer hook, the workflow controller's --executor-image,
//     an aliased subchart and Argo CD's Redis;
//   - the values that give each component an environment: the component's
//     own first, each a map or a list of the chart's values files; on
//     0.30.0 also a key of all Argo CD's pods after the server's own, none
//     for argo-gateway, and the --set-string flags of a map and of a list.
func TestKeysOnEveryChartLine(t *testing.T) {
	for _, line := range chartLines {
		t.Run(line, func(t *testing.T) {
			t.Parallel()
			p := startLine(t, line, nil)
			imageKeysOfLine(t, line, p)
			envKeysOfLine(t, line, p)
		})
	}
}

// imageKeysOfLine is TestKeysOnEveryChartLine's tracing of images.
func imageKeysOfLine(t *testing.T, line string, p *Pending) {
	ctx := context.Background()
	r, err := p.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pods, refs, err := r.Images()
	if err != nil {
		t.Fatal(err)
	}
	keys, failed, err := p.ImageKeys(ctx, pods, refs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range failed {
		t.Errorf("not traced: %s=%q: %s", f.SetPath(), f.Value, f.Err)
	}
	dir := fixtureLine(t, line)
	for i, ref := range refs {
		if len(keys[i]) == 0 {
			t.Errorf("%s (%s %s): no key", ref.Ref, ref.Container, ref.Field)
		}
		for _, k := range keys[i] {
			if !strings.Contains(ref.Ref, k.Value) {
				t.Errorf("%s: key %s=%q not in the reference", ref.Ref, k.SetPath(), k.Value)
			}
			if !valuesFileHas(t, dir, k.Path, k.Value) && !globalOverride(k.Path) {
				t.Errorf("%s: key %s=%q is not in the chart's values files", ref.Ref, k.SetPath(), k.Value)
			}
		}
	}
	if line == "chart" {
		find := func(sub, field string) int {
			for i, ref := range refs {
				if strings.Contains(ref.Ref, sub) && (field == "" || ref.Field == field) {
					return i
				}
			}
			t.Fatalf("no image %s (%s) among %v", sub, field, refs)
			return -1
		}
		has := func(i int, path string) {
			t.Helper()
			for _, k := range keys[i] {
				if k.SetPath() == path {
					return
				}
			}
			t.Errorf("%s: keys %v, want %s", refs[i].Ref, keys[i], path)
		}
		installer := find("gitops-runtime-installer", "image")
		if pods[refs[installer].Pod].Hook == "" {
			t.Errorf("installer image %v not in a hook", refs[installer])
		}
		executor := find("argoexec", "args")
		if refs[executor].Pulled() {
			t.Error("an --executor-image argument is not pulled by the controller's node")
		}
		has(installer, "installer.image.repository")
		has(executor, "argo-workflows.executor.image.registry")
		has(find("frpc", "image"), "tunnel-client.image.repository") // an aliased subchart
		has(find("cap-app-proxy:", "image"), "app-proxy.image.repository")
		has(find("redis:", "image"), "argo-cd.redis.image.repository")
	}
	mp, err := p.PlanMirror(ctx, "mirror.corp.example/cf", pods, refs, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(mp.Set) < 10 {
		t.Errorf("mirror keys %v", mp.Set)
	}
	for _, i := range mp.Unmoved {
		t.Errorf("unmoved: %s (keys %v)", refs[i].Ref, keys[i])
	}
}

// envKeysOfLine is TestKeysOnEveryChartLine's tracing of environments.
func envKeysOfLine(t *testing.T, line string, p *Pending) {
	keys, failed, err := p.EnvKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) > 0 {
		t.Errorf("env keys not traced: %v", failed)
	}
	want := map[string]string{
		"Deployment//gitops-operator":                          "gitops-operator.env",
		"Deployment//internal-router":                          "internal-router.env",
		"Deployment/codefresh/argo-cd-repo-server":             "argo-cd.repoServer.env",
		"StatefulSet/codefresh/argo-cd-application-controller": "argo-cd.controller.env",
		"Deployment/codefresh/argo-workflow-controller":        "argo-workflows.controller.extraEnv",
	}
	if line == "chart" {
		want["Deployment//codefresh-tunnel-client"] = "tunnel-client.env"
	}
	for pod, w := range want {
		if ks := keys[pod]; len(ks) == 0 || ks[0].SetPath() != w {
			t.Errorf("%s: keys %v, want %s first", pod, ks, w)
		}
	}
	dir := fixtureLine(t, line)
	for pod, ks := range keys {
		for _, k := range ks {
			if !valuesFileMatch(t, dir, k.Path, func(v any) bool {
				_, m := v.(map[string]any)
				_, l := v.([]any)
				return m || l || v == nil
			}) {
				t.Errorf("%s: key %s is not a map or list of the chart's values files", pod, k.SetPath())
			}
		}
	}
	if line != "chart" {
		return
	}
	if ks := keys["Deployment/codefresh/argo-cd-server"]; len(ks) != 2 || ks[1].SetPath() != "argo-cd.global.env" || len(ks[1].Pods) < 5 {
		t.Errorf("argo-cd-server: keys %v, want argo-cd.server.env then argo-cd.global.env (every Argo CD pod)", ks)
	}
	if ks := keys["Deployment//argo-gateway"]; len(ks) != 0 {
		t.Errorf("argo-gateway has no env value in chart 0.30, got %v", ks)
	}
	repo := keys["Deployment/codefresh/argo-cd-repo-server"][0]
	got := strings.Join(repo.SetFlags([][2]string{{"HTTPS_PROXY", "http://p:3128"}, {"NO_PROXY", "a,b"}}), " ")
	if want := `--set-string 'argo-cd.repoServer.env[0].name=HTTPS_PROXY' --set-string 'argo-cd.repoServer.env[0].value=http://p:3128' --set-string 'argo-cd.repoServer.env[1].name=NO_PROXY' --set-string 'argo-cd.repoServer.env[1].value=a\,b'`; got != want {
		t.Errorf("SetFlags = %s\nwant %s", got, want)
	}
	op := keys["Deployment//gitops-operator"][0]
	if got := strings.Join(op.SetFlags([][2]string{{"HTTPS_PROXY", "http://p:3128"}}), " "); got != `--set-string 'gitops-operator.env.HTTPS_PROXY=http://p:3128'` {
		t.Errorf("SetFlags = %s", got)
	}
}

// globalOverride is true for a key under a subchart's global that the
// umbrella chart sets in its own global (Helm copies the parent's globals
// into every subchart's): its value is the umbrella's.
func globalOverride(path []string) bool {
	return len(path) > 2 && path[1] == "global"
}

func TestIsImageReference(t *testing.T) {
	for s, want := range map[string]bool{
		"quay.io/argoproj/argoexec:v3.7.2":                     true,
		"localhost:5000/a/b@sha256:" + strings.Repeat("a", 64): true,
		"nginx:1.2":                 false, // no registry named: not told apart from host:port
		"https://g.codefresh.io":    false,
		"argo-cd-server:80":         false,
		"quay.io/argoproj/argoexec": false, // no tag: a repository, not a pull
		"--executor-image":          false,
	} {
		if got := IsImageReference(s); got != want {
			t.Errorf("IsImageReference(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestMirrorTarget(t *testing.T) {
	for ref, want := range map[string]string{
		"quay.io/codefresh/frpc:cace4c0":                       "m.example/cf/codefresh/frpc:cace4c0",
		"docker.io/alpine/kubectl:1.36":                        "m.example/cf/alpine/kubectl:1.36",
		"ecr-public.aws.com/docker/library/redis:8.2.2-alpine": "m.example/cf/docker/library/redis:8.2.2-alpine",
		"localhost:5000/x/y@sha256:" + strings.Repeat("a", 64): "m.example/cf/x/y@sha256:" + strings.Repeat("a", 64),
		// Docker Hub names written without a registry, as Codefresh's
		// helper maps them: its first component is taken for the registry.
		"nginx:1":          "m.example/cf/nginx:1",
		"alpine/kubectl:1": "m.example/cf/kubectl:1",
	} {
		if got := MirrorTarget(ref, "m.example/cf"); got != want {
			t.Errorf("MirrorTarget(%q) = %q, want %q", ref, got, want)
		}
	}
}

// TestOccursAsPart holds the rule that picks the values ImageKeys marks.
func TestOccursAsPart(t *testing.T) {
	for _, c := range []struct {
		ref, v string
		want   bool
	}{
		{"quay.io/codefresh/cap-app-proxy:1.3520.2", "quay.io", true},
		{"quay.io/codefresh/cap-app-proxy:1.3520.2", "codefresh/cap-app-proxy", true},
		{"quay.io/codefresh/cap-app-proxy:1.3520.2", "quay.io/codefresh", true},
		{"quay.io/codefresh/cap-app-proxy:1.3520.2", "1.3520.2", true},
		{"quay.io/codefresh/cap-app-proxy:1.3520.2", "0.2", false}, // a cpu request inside the tag
		{"quay.io/codefresh/cap-app-proxy:1.3520.2", "app-proxy", false},
		{"quay.io/codefresh/cap-app-proxy:1.3520.2", "cap-app", true}, // a name built as value + "-proxy"
		{"ghcr.io/dexidp/dex:v2.41.1", "2.41.1", true},                // "v" + the chart's version
		{"redis:7.2.4-alpine", "7.2.4", true},
		{"docker.io/library/redis@sha256:abcd", "sha256:abcd", true},
		{"registry.example/app:1", "registry.example/", true},
		{"x.io/a0.2/b:1", "0.2", false},
		{"x.io/a/b:1.0.2", "1.0", false},
	} {
		if got := occursAsPart(c.ref, c.v); got != c.want {
			t.Errorf("occursAsPart(%q, %q) = %v, want %v", c.ref, c.v, got, c.want)
		}
	}
}

// writeChart writes a chart of one Deployment template with values to a
// temporary directory and returns it; more are further files (name, text).
func writeChart(t *testing.T, values, deployment string, more ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "traced")
	files := map[string]string{
		"Chart.yaml":                "apiVersion: v2\nname: traced\nversion: 0.1.0\n",
		"values.yaml":               values,
		"templates/deployment.yaml": deployment,
	}
	for i := 0; i+1 < len(more); i += 2 {
		files[more[i]] = more[i+1]
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startDir renders the chart at dir as release rel in namespace ns with
// no values, and returns its Pending and the images of the render.
func startDir(t *testing.T, dir string) (*Pending, []Pod, []ImageRef) {
	t.Helper()
	p := Start(context.Background(), NewLoader(Source{Ref: dir, Settings: parallelSettings(t)}), "rel", "ns", map[string]any{},
		func() (Capabilities, error) { return Capabilities{KubeVersion: "v1.30.2"}, nil })
	r, err := p.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pods, refs, err := r.Images()
	if err != nil {
		t.Fatal(err)
	}
	return p, pods, refs
}

// TestImageKeysWhenMarkersBreakTheRender traces a chart whose templates
// cannot take some marked values: a tag also written as a cpu request (the
// marked render's pods do not decode) and a registry the chart checks
// with a pattern (the marked render fails). The keys are split until each
// that still fails alone is reported with Helm's error; the others are
// traced; the reference only the failing key produces is untraced, not
// "no key".
func TestImageKeysWhenMarkersBreakTheRender(t *testing.T) {
	dir := writeChart(t, `
app:
  registry: registry.example
  repository: team/app
  tag: "1.25"
sidecar:
  image: registry.example/team/sidecar:2.0.1
tools:
  registry: tools.example
`, `apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
      - name: app
        image: "{{ .Values.app.registry }}/{{ .Values.app.repository }}:{{ .Values.app.tag }}"
        resources: {requests: {cpu: "{{ .Values.app.tag }}"}}
      - name: sidecar
        image: {{ tpl "{{ .Values.sidecar.image }}" . | quote }}
      - name: tools
        {{- if not (regexMatch "^[a-z.]+$" .Values.tools.registry) }}{{ fail "tools.registry must be a host name" }}{{ end }}
        image: "{{ .Values.tools.registry }}/tools:1"
`)
	ctx := context.Background()
	p, pods, refs := startDir(t, dir)
	keys, failed, err := p.ImageKeys(ctx, pods, refs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for i, ref := range refs {
		for _, k := range keys[i] {
			got[ref.Ref] = append(got[ref.Ref], k.SetPath())
		}
	}
	want := map[string][]string{
		"registry.example/team/app:1.25":      {"app.registry", "app.repository"},
		"registry.example/team/sidecar:2.0.1": {"sidecar.image"},
	}
	for ref, w := range want {
		if strings.Join(got[ref], " ") != strings.Join(w, " ") {
			t.Errorf("%s: keys %v, want %v", ref, got[ref], w)
		}
	}
	if len(got["tools.example/tools:1"]) != 0 {
		t.Errorf("tools: keys %v, want none", got["tools.example/tools:1"])
	}
	var names []string
	for _, f := range failed {
		names = append(names, f.SetPath())
	}
	if strings.Join(names, " ") != "app.tag tools.registry" {
		t.Fatalf("failures %v, want app.tag and tools.registry", failed)
	}
	if !strings.Contains(failed[0].Err, "quantities must match") || !strings.Contains(failed[1].Err, "must be a host name") {
		t.Errorf("failures without Helm's or the decoder's error: %+v", failed)
	}
	if u := FailuresIn("tools.example/tools:1", failed); len(u) != 1 || u[0].SetPath() != "tools.registry" {
		t.Errorf("untraced tools: %v", u)
	}
}

// TestImageKeysInUnusualPlaces traces images whose values sit where a key
// is not a plain map path: in a list of the chart's (the key is the
// element's, and setting it keeps the list's other elements), in a
// subchart that reads the parent's global, and behind tpl.
func TestImageKeysInUnusualPlaces(t *testing.T) {
	dir := writeChart(t, `
global:
  imageRegistry: globe.example
sidecars:
- name: s1
  image: side.example/team/s1:3
  port: 80
- name: s2
  image: side.example/team/s2:3
templated:
  image: "{{ .Values.global.imageRegistry }}/templated:1"
`, `apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
      {{- range .Values.sidecars }}
      - name: {{ .name }}
        image: {{ .image }}
      {{- end }}
      - name: templated
        image: {{ tpl .Values.templated.image . | quote }}
`, "charts/sub/Chart.yaml", "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
		"charts/sub/values.yaml", "global:\n  imageRegistry: ''\n",
		"charts/sub/templates/deployment.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: sub}
spec:
  selector: {matchLabels: {app: sub}}
  template:
    metadata: {labels: {app: sub}}
    spec:
      containers: [{name: sub, image: "{{ .Values.global.imageRegistry }}/sub:2"}]
`)
	ctx := context.Background()
	p, pods, refs := startDir(t, dir)
	keys, failed, err := p.ImageKeys(ctx, pods, refs)
	if err != nil || len(failed) > 0 {
		t.Fatal(err, failed)
	}
	got := map[string]string{}
	for i, ref := range refs {
		var ks []string
		for _, k := range keys[i] {
			ks = append(ks, k.SetPath())
		}
		got[ref.Ref] = strings.Join(ks, " ")
	}
	for ref, want := range map[string]string{
		"side.example/team/s1:3":    "sidecars[0].image",
		"side.example/team/s2:3":    "sidecars[1].image",
		"globe.example/templated:1": "global.imageRegistry",
		"globe.example/sub:2":       "global.imageRegistry",
	} {
		if !strings.HasPrefix(got[ref], want) {
			t.Errorf("%s: keys %q, want %s first", ref, got[ref], want)
		}
	}
	var s1 ImageKey
	for i, ref := range refs {
		if ref.Ref == "side.example/team/s1:3" && len(keys[i]) > 0 {
			s1 = keys[i][0]
		}
	}
	if !s1.InList() || s1.ListPath() != "sidecars" {
		t.Errorf("%v: in list %v (%q)", s1, s1.InList(), s1.ListPath())
	}
	mp, err := p.PlanMirror(ctx, "mirror.example", pods, refs, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(mp.Unmoved) > 0 {
		t.Errorf("unmoved %v", mp.Unmoved)
	}
	moved, err := p.Rerender(ctx, mp.Set)
	if err != nil {
		t.Fatal(err)
	}
	_, after, err := moved.Images()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(refs) {
		t.Errorf("setting a list element lost the list's others: %v", after)
	}
	for _, ref := range after {
		if !AtMirror(ref.Ref, "mirror.example") {
			t.Errorf("%s not at the mirror", ref.Ref)
		}
	}
}
