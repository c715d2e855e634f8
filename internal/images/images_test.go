package images

import (
	"slices"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

// rendered reads manifest's objects (no hooks) as a rendering of chart rt.
func rendered(t *testing.T, manifest string) *Rendered {
	t.Helper()
	objs, err := chart.ManifestObjects(manifest)
	if err != nil {
		t.Fatal(err)
	}
	ri, err := Read(&chart.Rendering{ChartName: "rt", Objects: objs})
	if err != nil {
		t.Fatal(err)
	}
	return ri
}

const twoPods = `apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  template:
    spec:
      serviceAccountName: app
      imagePullSecrets: [{name: quay-pull}]
      initContainers: [{name: init, image: "quay.io/codefresh/init:1"}]
      containers:
      - {name: app, image: "mirror.example/cf/codefresh/app:1", args: ["--executor-image", "docker.io/argoproj/exec:v1"]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: op}
spec:
  template:
    spec:
      containers: [{name: op, image: "quay.io/codefresh/op:2"}]
`

func TestMirrorIntent(t *testing.T) {
	for _, c := range []struct{ flag, global, mirror, from string }{
		{"m.example/cf", "g.example", "m.example/cf", "--registry-mirror"},
		{"", "g.example/", "g.example", "global.imageRegistry"},
		{"", "", "", ""},
	} {
		if m, f := MirrorIntent(c.flag, c.global); m != c.mirror || f != c.from {
			t.Errorf("MirrorIntent(%q, %q) = %q, %q", c.flag, c.global, m, f)
		}
	}
}

func TestRefsAndMirrorList(t *testing.T) {
	ri := rendered(t, twoPods)
	all := DistinctRefs(ri.Refs)
	want := []string{"docker.io/argoproj/exec:v1", "mirror.example/cf/codefresh/app:1", "quay.io/codefresh/init:1", "quay.io/codefresh/op:2"}
	if !slices.Equal(all, want) {
		t.Fatalf("refs %q, want %q", all, want)
	}
	if ri.AllAt("mirror.example/cf") || !rendered(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: m.example/x:1}]}\n").AllAt("m.example") {
		t.Error("AllAt")
	}
	if got := MirrorCSV(all[:1], "m.example/cf"); got != "source_image,target_image\ndocker.io/argoproj/exec:v1,m.example/cf/argoproj/exec:v1" {
		t.Errorf("mirror list %q", got)
	}
	if got := NewIn(all, []chart.ImageRef{{Ref: "quay.io/codefresh/op:2"}, {Ref: "docker.io/argoproj/exec:v1"}}); !slices.Equal(got, want[1:3]) {
		t.Errorf("new %q", got)
	}
}

// TestUnmirrored: each reference not at the mirror, with its pod, chart
// and how the plan moves it (a value, none, or none traced).
func TestUnmirrored(t *testing.T) {
	ri := rendered(t, twoPods)
	idx := func(ref string) int {
		for i, r := range ri.Refs {
			if r.Ref == ref {
				return i
			}
		}
		t.Fatalf("no ref %s", ref)
		return -1
	}
	key := chart.ImageKey{Value: "m.example"}
	plan := &chart.MirrorPlan{Moves: map[int][]chart.ImageKey{idx("quay.io/codefresh/init:1"): {key}},
		Unmoved: []int{idx("docker.io/argoproj/exec:v1"), idx("quay.io/codefresh/op:2")}}
	failed := []chart.TraceFailure{{Path: []string{"op", "image"}, Value: "codefresh/op"}}
	um := ri.Unmirrored("mirror.example/cf", plan, failed)
	if len(um) != 3 {
		t.Fatalf("%d unmirrored: %+v", len(um), um)
	}
	var got []string
	for _, u := range um {
		got = append(got, u.Ref.Ref+" "+u.Pod.Name+" "+u.Chart)
	}
	if !slices.Equal(got, []string{"quay.io/codefresh/init:1 app rt", "docker.io/argoproj/exec:v1 app rt", "quay.io/codefresh/op:2 op rt"}) {
		t.Errorf("unmirrored %q", got)
	}
	if u := um[0]; u.Unmoved || len(u.Moves) != 1 || u.Moves[0].Value != "m.example" {
		t.Errorf("moved: %+v", u)
	}
	if u := um[1]; !u.Unmoved || u.Failures != nil {
		t.Errorf("no value: %+v", u)
	}
	if u := um[2]; !u.Unmoved || len(u.Failures) != 1 {
		t.Errorf("not traced: %+v", u)
	}
}

func TestUnservedRegistries(t *testing.T) {
	ri := rendered(t, twoPods)
	needsAuth := func(h string) bool { return h != "mirror.example" }
	a := &PodAuths{ByHost: map[string]string{"quay.io": "quay-pull"}}
	// app pulls quay.io (its init container) with a secret, and the mirror
	// anonymously; its args' image is pulled by other pods.
	if got := ri.UnservedRegistries(0, a, needsAuth); got != nil {
		t.Errorf("app: %q", got)
	}
	if got := ri.UnservedRegistries(1, &PodAuths{}, needsAuth); !slices.Equal(got, []string{"quay.io"}) {
		t.Errorf("op: %q", got)
	}
}

func TestUnserved(t *testing.T) {
	if got := Unserved([]string{"linux/amd64", "linux/arm/v7"}, []string{"linux/amd64", "linux/arm", "linux/arm64"}); strings.Join(got, " ") != "linux/arm64" {
		t.Errorf("unserved %q", got)
	}
}
