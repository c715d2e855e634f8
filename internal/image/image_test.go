package image

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func testSpec(t *testing.T, arch string) Spec {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"plugin": "#!plugin " + arch, "helm": "#!helm " + arch, "ca.pem": "-----BEGIN CERTIFICATE-----\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return Spec{Platform: v1.Platform{OS: "linux", Architecture: arch}, Plugin: filepath.Join(dir, "plugin"), Helm: filepath.Join(dir, "helm"),
		CACerts: filepath.Join(dir, "ca.pem"), Version: "v1.2.3", Revision: "abc1234", Source: "https://github.com/gitops-preflight/kubectl-gitops-preflight",
		Created: time.Unix(1767225600, 0)}
}

func archive(t *testing.T) (string, v1.Hash) {
	t.Helper()
	var imgs []v1.Image
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := Build(testSpec(t, arch))
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	idx, err := Index(imgs)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "image.tar")
	d, err := WriteArchive(p, "v1.2.3", idx, time.Unix(1767225600, 0))
	if err != nil {
		t.Fatal(err)
	}
	return p, d
}

// TestArchiveIsReproducible: the same inputs give the same index digest
// and the same archive bytes; the archive is an OCI layout whose index
// names the version and holds one image per platform, each with the
// non-root user, the plugin as entrypoint, the labels, and one layer with
// the binaries (mode 0755), the CA bundle, passwd and a sticky /tmp.
func TestArchiveIsReproducible(t *testing.T) {
	p1, d1 := archive(t)
	p2, d2 := archive(t)
	b1, _ := os.ReadFile(p1)
	b2, _ := os.ReadFile(p2)
	if d1 != d2 || string(b1) != string(b2) {
		t.Fatalf("two builds differ: %s and %s", d1, d2)
	}
	top, err := OpenArchive(p1, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tm, _ := top.IndexManifest()
	if len(tm.Manifests) != 1 || tm.Manifests[0].Digest != d1 || tm.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v1.2.3" {
		t.Fatalf("index.json: %+v, want the index %s named v1.2.3", tm.Manifests, d1)
	}
	idx, err := top.ImageIndex(d1)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := idx.IndexManifest()
	if len(im.Manifests) != 2 || im.Manifests[1].Platform.Architecture != "arm64" {
		t.Fatalf("platforms: %+v", im.Manifests)
	}
	img, err := idx.Image(im.Manifests[1].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	if cf.Config.User != User || cf.Config.Entrypoint[0] != PluginPath || cf.Architecture != "arm64" ||
		cf.Config.Labels["org.opencontainers.image.version"] != "v1.2.3" || cf.Config.Labels["org.opencontainers.image.revision"] != "abc1234" {
		t.Errorf("config: %+v", cf.Config)
	}
	layers, _ := img.Layers()
	if len(layers) != 1 {
		t.Fatalf("%d layers", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got := map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		got[h.Name] = strings.TrimSpace(string(data)) + " " + os.FileMode(h.Mode).String()
		if h.Mode == 0o1777 {
			got[h.Name] = "sticky"
		}
	}
	for name, want := range map[string]string{
		"usr/local/bin/kubectl-gitops_preflight": "#!plugin arm64 -rwxr-xr-x",
		"usr/local/bin/helm":                     "#!helm arm64 -rwxr-xr-x",
		"etc/ssl/certs/ca-certificates.crt":      "-----BEGIN CERTIFICATE----- -rw-r--r--",
		"tmp/":                                   "sticky",
	} {
		if got[name] != want {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	if !strings.Contains(got["etc/passwd"], "preflight:x:65532:65532") {
		t.Errorf("passwd: %q", got["etc/passwd"])
	}
}
