package checks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestImagePlan(t *testing.T) {
	c := imageChart(t)
	t.Run("no mirror intent", func(t *testing.T) {
		r := newKit(t).with(imageInputs(t)).withChart(c).run(ImagePlan())
		outcome{StatusPass, []string{"5 images", "quay.io ×4", "no mirror intent"}}.expect(t, r)
	})
	t.Run("a mirror: the keys that move each image, Helm-verified", func(t *testing.T) {
		k := newKit(t).with(imageInputs(t)).withChart(c)
		k.imageOptions(ImageOptions{Mirror: "mirror.example/cf"})
		r := k.run(ImagePlan())
		outcome{StatusFail, []string{
			"quay.io/codefresh/app:1.2.3 (Deployment/app app image: set app.image.registry=mirror.example/cf)",
			"quay.io/codefresh/installer:0.30.0 (Job/validate-values (hook) validate-values image: set installer.image.repository=mirror.example/cf/codefresh/installer)",
			"docker.io/fixed/exec:v1 (Deployment/ctrl ctrl args: chart gitops-runtime has no value for this)",
			"quay.io/argoproj/ctrl:v3.7.2 (Deployment/ctrl ctrl image: chart gitops-runtime has no value for this)",
			"--set app.image.registry=mirror.example/cf",
			"source_image,target_image\ndocker.io/fixed/exec:v1,mirror.example/cf/fixed/exec:v1",
		}}.expect(t, r)
	})
	t.Run("global.imageRegistry as the intent", func(t *testing.T) {
		r := newKit(t).with(imageInputs(t, "global.imageRegistry=mirror.example")).withChart(c).run(ImagePlan())
		outcome{StatusFail, []string{"2 of 5 images are not at mirror.example (global.imageRegistry)", "installer.image.repository=mirror.example/codefresh/installer"}}.expect(t, r)
		if strings.Contains(r.Message, "codefresh/app:") {
			t.Errorf("app follows global.imageRegistry: %s", r.Message)
		}
	})
	t.Run("a Docker Hub name without a registry, mapped as Codefresh's helper maps it", func(t *testing.T) {
		k := newKit(t).with(imageInputs(t, "installer.image.repository=codefresh/installer")).withChart(c)
		k.imageOptions(ImageOptions{Mirror: "mirror.example/cf"})
		o := Run(t.Context(), k.env(), []Check{ImagePlan()}, RunOptions{})[0]
		r := o.Result
		// The helper takes the first component for the registry: the key
		// the plan sets and the mirror list agree, as Helm renders them.
		outcome{StatusFail, []string{
			"codefresh/installer:0.30.0 (Job/validate-values (hook) validate-values image: set installer.image.repository=mirror.example/cf/installer)",
			"\ncodefresh/installer:0.30.0,mirror.example/cf/installer:0.30.0\n",
		}}.expect(t, r)
		if o.Impact != ImpactInstallFails {
			t.Errorf("a hook's image elsewhere: impact %q, want install-fails", o.Impact)
		}
	})
	t.Run("no chart", func(t *testing.T) {
		outcome{StatusSkip, []string{"no chart"}}.expect(t, newKit(t).run(ImagePlan()))
	})
}

// TestImagePlanUpgrade: before `helm upgrade`, the images the target pulls
// or names that the deployed revision did not, and a mirror list of just
// those.
func TestImagePlanUpgrade(t *testing.T) {
	c := imageChart(t)
	rev1 := `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  template:
    spec:
      containers: [{name: app, image: "quay.io/codefresh/app:1.2.2"}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: op}
spec:
  template:
    spec:
      containers: [{name: manager, image: "quay.io/codefresh/op:c0ef368"}, {name: ctrl, image: "quay.io/argoproj/ctrl:v3.7.2"}]
`
	kit := func(t *testing.T) *kit {
		return newKit(t).objects(deployed{Version: "0.29.0", Manifest: rev1}.record(t)).inMode(ModeUpgrade).with(imageInputs(t)).withChart(c)
	}
	t.Run("no mirror intent: the new images listed", func(t *testing.T) {
		r := kit(t).run(ImagePlan())
		outcome{StatusPass, []string{"3 new since revision 1: docker.io/fixed/exec:v1, quay.io/codefresh/app:1.2.3, quay.io/codefresh/installer:0.30.0",
			"images new in the target:\ndocker.io/fixed/exec:v1\n"}}.expect(t, r)
	})
	t.Run("a mirror: the list holds the new images only", func(t *testing.T) {
		k := kit(t)
		k.imageOptions(ImageOptions{Mirror: "mirror.example/cf"})
		r := k.run(ImagePlan())
		outcome{StatusFail, []string{"3 new since revision 1"}}.expect(t, r)
		_, list, ok := strings.Cut(r.Hint, "source_image,target_image\n")
		if !ok {
			t.Fatalf("no mirror list in hint %q", r.Hint)
		}
		csv := "source_image,target_image\n" + list
		want := "source_image,target_image\ndocker.io/fixed/exec:v1,mirror.example/cf/fixed/exec:v1\nquay.io/codefresh/app:1.2.3,mirror.example/cf/codefresh/app:1.2.3\nquay.io/codefresh/installer:0.30.0,mirror.example/cf/codefresh/installer:0.30.0"
		if csv != want {
			t.Errorf("mirror list:\n%s\nwant:\n%s", csv, want)
		}
	})
}

// TestImagePlanOnEveryChartLine runs image-plan on the real chart lines of
// the fixtures with global.imageRegistry as the mirror intent: every
// image global.imageRegistry does not move is named with the values that
// do (Helm renders the image at the mirror with them), none with "no
// value" or "could not trace".
func TestImagePlanOnEveryChartLine(t *testing.T) {
	onEveryChartLine(t, func(t *testing.T, dir string) {
		in := imageInputs(t, "global.imageRegistry=mirror.corp.example", "global.runtime.name=rt1",
			"global.codefresh.accountId=acc", "global.codefresh.userToken.token=x")
		r := newKit(t).with(in).withChart(dir).run(ImagePlan())
		if r.Status != StatusFail {
			t.Fatalf("status %s: %s", r.Status, r.Message)
		}
		_, detail, _ := strings.Cut(r.Message, "): ")
		items := strings.Split(detail, "; ")
		if len(items) < 10 {
			t.Fatalf("%d images named: %s", len(items), r.Message)
		}
		for _, it := range items {
			if !strings.Contains(it, ": set ") || strings.Contains(it, "no value") || strings.Contains(it, "could not trace") {
				t.Errorf("no value named: %s", it)
			}
		}
		if !strings.Contains(r.Hint, "--set ") || strings.Contains(r.Hint, "has no value") {
			t.Errorf("hint: %s", r.Hint)
		}
	})
}

// writeKitChart writes a chart named gitops-runtime of files (name, text)
// and returns its directory.
func writeKitChart(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "gitops-runtime")
	files["Chart.yaml"] = "apiVersion: v2\nname: gitops-runtime\nversion: 0.1.0\n"
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestImagePlanKeyInAList: an image whose value is an element of a list
// is moved in a values file, the list named, never by a --set flag that
// would replace the list.
func TestImagePlanKeyInAList(t *testing.T) {
	dir := writeKitChart(t, map[string]string{
		"values.yaml": "sidecars:\n- {name: s1, image: side.example/s1:3}\n- {name: s2, image: side.example/s2:3}\n",
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
      {{- range .Values.sidecars }}
      - {name: {{ .name }}, image: {{ .image }}}
      {{- end }}
`,
	})
	k := newKit(t).with(imageInputs(t)).withChart(dir)
	k.imageOptions(ImageOptions{Mirror: "mirror.example"})
	r := k.run(ImagePlan())
	outcome{StatusFail, []string{
		"side.example/s1:3 (Deployment/app s1 image: set sidecars[0].image=mirror.example/s1:3)",
		"in a values file, these keys inside lists",
		"  sidecars[1].image: mirror.example/s2:3  (list sidecars)",
	}}.expect(t, r)
	if strings.Contains(r.Hint, "--set sidecars") {
		t.Errorf("a --set flag for a key inside a list: %s", r.Hint)
	}
}

// TestImagePlanCouldNotTrace: a chart that refuses the marked value of
// the only key producing an image (it checks the registry with a pattern)
// gets "could not trace" with Helm's error for that image, not "no value".
func TestImagePlanCouldNotTrace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gitops-runtime")
	for name, text := range map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: gitops-runtime\nversion: 0.1.0\n",
		"values.yaml": "tools:\n  registry: tools.example\n",
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: tools}
spec:
  selector: {matchLabels: {app: tools}}
  template:
    metadata: {labels: {app: tools}}
    spec:
      containers:
      - name: tools
        {{- if not (regexMatch "^[a-z.]+$" .Values.tools.registry) }}{{ fail "tools.registry must be a host name" }}{{ end }}
        image: "{{ .Values.tools.registry }}/tools:1"
`,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	k := newKit(t).with(imageInputs(t)).withChart(dir)
	k.imageOptions(ImageOptions{Mirror: "mirror.example"})
	r := k.run(ImagePlan())
	outcome{StatusFail, []string{
		"tools.example/tools:1 (Deployment/tools tools image: no value of chart gitops-runtime found for this, and could not trace tools.registry (Helm: ",
		"tools.registry must be a host name",
	}}.expect(t, r)
	if !strings.Contains(r.Hint, "could not be traced") || strings.Contains(r.Hint, "has no value") {
		t.Errorf("hint: %s", r.Hint)
	}
}
