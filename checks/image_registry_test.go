package checks

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// pushStub pushes a one-layer image for platform to ref.
func pushStub(t *testing.T, ref, platform string) {
	t.Helper()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := v1.ParsePlatform(platform)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf.OS, cf.Architecture = p.OS, p.Architecture
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
}

// TestImageRegistry resolves the chart's images at an in-process OCI
// registry on 127.0.0.1 (go-containerregistry's pkg/registry).
func TestImageRegistry(t *testing.T) {
	c := imageChart(t)
	srv := httptest.NewServer(registry.New())
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	node := `apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/arch: amd64, kubernetes.io/os: linux}}
status: {conditions: [{type: Ready, status: "True"}]}`
	in := imageInputs(t, "global.imageRegistry="+host, "installer.image.repository="+host+"/codefresh/installer")
	t.Run("opt-in", func(t *testing.T) {
		outcome{StatusSkip, []string{"give --registry-check"}}.expect(t, newKit(t, node).with(in).withChart(c).run(ImageRegistry()))
	})
	pushStub(t, host+"/codefresh/app:1.2.3", "linux/amd64")
	pushStub(t, host+"/argoproj/ctrl:v3.7.2", "linux/arm64")
	pushStub(t, host+"/codefresh/op:c0ef368", "linux/amd64")
	t.Run("a missing installer image and an arm64-only image for amd64 nodes", func(t *testing.T) {
		k := newKit(t, node).with(in).withChart(c)
		k.imageOptions(ImageOptions{RegistryCheck: true})
		r := k.run(ImageRegistry())
		outcome{StatusFail, []string{
			host + "/codefresh/installer:0.30.0: not found",
			host + "/argoproj/ctrl:v3.7.2: platforms linux/arm64, none for the linux/amd64 nodes the pod can land on",
		}}.expect(t, r)
	})
	t.Run("every image resolves", func(t *testing.T) {
		pushStub(t, host+"/codefresh/installer:0.30.0", "linux/amd64")
		pushStub(t, host+"/argoproj/ctrl:v3.7.2", "linux/amd64")
		pushStub(t, host+"/fixed/exec:v1", "linux/amd64")
		k := newKit(t, node).with(imageInputs(t, "global.imageRegistry="+host, "installer.image.repository="+host+"/codefresh/installer")).withChart(imageChartAt(t, host))
		k.imageOptions(ImageOptions{RegistryCheck: true})
		outcome{StatusPass, []string{"images resolve"}}.expect(t, k.run(ImageRegistry()))
	})
}
