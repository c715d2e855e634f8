package images

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// pushImage starts an in-process OCI registry on 127.0.0.1
// (go-containerregistry's pkg/registry) until t ends, pushes a random
// image to repoTag there with its config changed by config, and returns the
// registry's host:port.
func pushImage(t *testing.T, repoTag string, config func(*v1.ConfigFile)) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	config(cf)
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	return host
}

// countingTape is a probe.Tape that counts the probes it is asked for.
type countingTape struct{ n int }

func (c *countingTape) Probe(_ string, do func() (probe.Result, error)) (probe.Result, error) {
	c.n++
	return do()
}

// TestResolver resolves images at an in-process OCI registry on 127.0.0.1
// (go-containerregistry's pkg/registry): a pushed image's digest and
// platform, a missing one's refusal, each (image, credentials) once.
func TestResolver(t *testing.T) {
	host := pushImage(t, "cf/app:1", func(cf *v1.ConfigFile) { cf.OS, cf.Architecture = "linux", "arm64" })
	p, err := probe.New(5*time.Second, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	tape := &countingTape{}
	p.Tape = tape
	rs := NewResolver()
	ctx := context.Background()
	got := rs.Get(ctx, p, host+"/cf/app:1", "anonymous", authn.NewMultiKeychain())
	if !got.OK() || !strings.HasPrefix(got.Digest, "sha256:") || strings.Join(got.Platforms, " ") != "linux/arm64" {
		t.Errorf("pushed image: %+v", got)
	}
	missing := rs.Get(ctx, p, host+"/cf/gone:1", "anonymous", authn.NewMultiKeychain())
	if missing.OK() || missing.NeedsAuth() || missing.Status != 404 {
		t.Errorf("missing image: %+v", missing)
	}
	rs.Get(ctx, p, host+"/cf/app:1", "anonymous", authn.NewMultiKeychain())
	if tape.n != 2 {
		t.Errorf("%d registry probes, want 2 (one per image and credentials)", tape.n)
	}
	if refusing := rs.RefusingAnonymous(ctx, p, []string{host + "/cf/app:1"}); len(refusing) != 0 {
		t.Errorf("an open registry refuses: %v", refusing)
	}
	if r := (Resolved{}); !r.OK() || r.NeedsAuth() {
		t.Error("an answer with no refusal is a manifest served")
	}
	if r := (Resolved{RegistryAnswer: probe.RegistryAnswer{Status: 401}}); r.OK() || !r.NeedsAuth() {
		t.Error("401 needs credentials")
	}
}

// TestResolverImageWithoutPlatform: an image whose config names no OS and
// no architecture (go-containerregistry's ConfigFile.Platform is nil) is
// resolved with its digest and no platform, instead of a panic, and
// Unserved judges no node platform unserved by it.
func TestResolverImageWithoutPlatform(t *testing.T) {
	host := pushImage(t, "cf/noplatform:1", func(cf *v1.ConfigFile) {
		cf.OS, cf.Architecture, cf.Variant, cf.OSVersion, cf.OSFeatures = "", "", "", "", nil
	})
	p, err := probe.New(5*time.Second, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	got := NewResolver().Get(context.Background(), p, host+"/cf/noplatform:1", "anonymous", authn.NewMultiKeychain())
	if !got.OK() || !strings.HasPrefix(got.Digest, "sha256:") || len(got.Platforms) != 0 {
		t.Fatalf("image without a platform: %+v", got)
	}
	if missing := Unserved(got.Platforms, []string{"linux/amd64"}); missing != nil {
		t.Errorf("Unserved of no known platform = %v, want none", missing)
	}
}
