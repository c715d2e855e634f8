package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/image"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestImage builds the container image as make dist does (internal/image)
// from the built plugin binary and the tests' Helm client, for this
// machine's platform (internal/image's unit test proves two builds give one
// digest), then reads the
// OCI layout archive back (go-containerregistry's layout reader), checks
// the config (non-root user, the plugin as entrypoint, the labels),
// extracts the layer and runs the plugin and Helm binaries it holds.
// (make dist builds both static, CGO_ENABLED=0, for linux/amd64 and
// linux/arm64; here they are the binaries the other tests run.)
func TestImage(t *testing.T) {
	testcluster.Parallel(t)
	spec := image.Spec{
		Platform: v1.Platform{OS: "linux", Architecture: runtime.GOARCH},
		Plugin:   testcluster.Binary(t), Helm: testcluster.HelmBinary(t), CACerts: caBundle(t),
		Version: "v9.9.9", Revision: "0123456789abcdef", Source: "https://github.com/gitops-preflight/kubectl-gitops-preflight",
		Created: time.Unix(1767225600, 0),
	}
	img, err := image.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := image.Index([]v1.Image{img})
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "image.tar")
	digest, err := image.WriteArchive(archive, spec.Version, idx, spec.Created)
	if err != nil {
		t.Fatal(err)
	}

	top, err := image.OpenArchive(archive, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	idx, err = top.ImageIndex(digest)
	if err != nil {
		t.Fatalf("the layout has no index %s: %v", digest, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	img, err = idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != image.PluginPath || cf.Architecture != runtime.GOARCH {
		t.Errorf("config: user %q, entrypoint %v, architecture %s", cf.Config.User, cf.Config.Entrypoint, cf.Architecture)
	}
	for k, want := range map[string]string{"org.opencontainers.image.version": "v9.9.9", "org.opencontainers.image.revision": "0123456789abcdef",
		"org.opencontainers.image.source": spec.Source, "org.opencontainers.image.created": "2026-01-01T00:00:00Z"} {
		if cf.Config.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, cf.Config.Labels[k], want)
		}
	}

	// Extract the layer and run what it holds.
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := image.Extract(rc, root); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	env := []string{"HOME=" + t.TempDir(), "PATH=" + filepath.Join(root, "usr", "local", "bin")}
	for _, c := range []struct {
		bin  string
		args []string
		want string
	}{
		{image.PluginPath, []string{"version"}, "kubectl gitops-preflight"},
		{image.HelmPath, []string{"version", "--short"}, testcluster.HelmVersion},
	} {
		cmd := exec.Command(filepath.Join(root, c.bin), c.args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%s %v from the image: %v\n%s", c.bin, c.args, err, out)
		}
	}
	// The plugin finds the image's Helm through HELM_BIN (its config's Env).
	var helmBin string
	for _, e := range cf.Config.Env {
		if v, ok := strings.CutPrefix(e, "HELM_BIN="); ok {
			helmBin = v
		}
	}
	if helmBin != image.HelmPath {
		t.Errorf("the image's HELM_BIN is %q, want %s", helmBin, image.HelmPath)
	}
}

// caBundle is the machine's CA bundle (make dist's default), or a stand-in.
func caBundle(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err == nil {
		return "/etc/ssl/certs/ca-certificates.crt"
	}
	p := filepath.Join(t.TempDir(), "ca.pem")
	writeFile(t, p, "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
	return p
}
