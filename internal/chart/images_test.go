package chart

import (
	"context"
	"strings"
	"testing"
)

// startFixture renders the real chart 0.30.0 through Start, as a run does.
func startFixture(t *testing.T, vals map[string]any) *Pending {
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
	return Start(context.Background(), NewLoader(Source{Ref: fixtureChart(t), Settings: isolatedSettings(t)}), "cf", "codefresh", vals,
		func() (Capabilities, error) { return Capabilities{KubeVersion: "v1.30.2"}, nil })
}

// TestImagesAndTheirKeysInTheRealChart reads the images of chart 0.30.0,
// hooks and the workflow controller's --executor-image included, finds the
// values that produce each by Helm's render, and plans a mirror that Helm
// then renders every movable image at.
func TestImagesAndTheirKeysInTheRealChart(t *testing.T) {
	ctx := context.Background()
	p := startFixture(t, nil)
	r, err := p.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pods, refs, err := r.Images()
	if err != nil {
		t.Fatal(err)
	}
	find := func(sub, field string) int {
		for i, ref := range refs {
			if strings.Contains(ref.Ref, sub) && (field == "" || ref.Field == field) {
				return i
			}
		}
		t.Fatalf("no image %s (%s) among %v", sub, field, refs)
		return -1
	}
	installer := find("gitops-runtime-installer", "image")
	if pods[refs[installer].Pod].Hook == "" {
		t.Errorf("installer image %v not in a hook", refs[installer])
	}
	executor := find("argoexec", "args")
	if refs[executor].Pulled() {
		t.Error("an --executor-image argument is not pulled by the controller's node")
	}
	keys, err := p.ImageKeys(ctx, pods, refs)
	if err != nil {
		t.Fatal(err)
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
	has(installer, "installer.image.repository")
	has(executor, "argo-workflows.executor.image.registry")
	has(find("frpc", "image"), "tunnel-client.image.repository") // an aliased subchart
	has(find("cap-app-proxy:", "image"), "app-proxy.image.repository")
	has(find("redis:", "image"), "argo-cd.redis.image.repository")

	mirror := "mirror.corp.example/cf"
	mp, err := p.PlanMirror(ctx, mirror, pods, refs, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(mp.Set) < 10 {
		t.Errorf("mirror keys %v", mp.Set)
	}
	moved, err := p.Rerender(ctx, mp.Set)
	if err != nil {
		t.Fatal(err)
	}
	_, after, err := moved.Images()
	if err != nil {
		t.Fatal(err)
	}
	left := 0
	for _, ref := range after {
		if !AtMirror(ref.Ref, mirror) {
			left++
		}
	}
	if left != len(mp.Unmoved) {
		t.Errorf("%d references left elsewhere, plan says %d unmoved: %v", left, len(mp.Unmoved), mp.Unmoved)
	}
	if len(mp.Unmoved) != 0 {
		t.Errorf("chart 0.30.0 has a value for every image; unmoved %v", mp.Unmoved)
	}
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

// TestEnvKeysInTheRealChart finds, by Helm's render of chart 0.30.0, the
// value that gives each component an environment variable: the
// component's own before one of all its chart's, none for a component the
// chart gives no such value.
func TestEnvKeysInTheRealChart(t *testing.T) {
	keys, err := startFixture(t, nil).EnvKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for pod, want := range map[string]string{
		"Deployment//gitops-operator":                          "gitops-operator.env",
		"Deployment//codefresh-tunnel-client":                  "tunnel-client.env",
		"Deployment//internal-router":                          "internal-router.env",
		"Deployment/codefresh/argo-cd-repo-server":             "argo-cd.repoServer.env",
		"StatefulSet/codefresh/argo-cd-application-controller": "argo-cd.controller.env",
		"Deployment/codefresh/argo-workflow-controller":        "argo-workflows.controller.extraEnv",
	} {
		ks := keys[pod]
		if len(ks) == 0 || ks[0].SetPath() != want {
			t.Errorf("%s: keys %v, want %s first", pod, ks, want)
		}
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
