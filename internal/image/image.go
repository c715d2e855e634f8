// Package image builds the plugin's container image without a container
// daemon or a base image (FROM scratch), reproducibly: the same binaries,
// CA bundle, version and time give the same digest. One layer holds the
// static plugin binary and the Helm client the checks call
// (/usr/local/bin), the CA certificates (/etc/ssl/certs/ca-certificates.crt)
// and the passwd and group entries of the non-root user it runs as
// (65532, "preflight", home /tmp); the config names that user, the plugin
// as entrypoint and the OCI annotation labels
// (https://github.com/opencontainers/image-spec/blob/main/annotations.md).
// Write puts one image per platform under an image index into an OCI image
// layout (https://github.com/opencontainers/image-spec/blob/main/image-layout.md)
// and packs it as a tar archive, which `skopeo copy oci-archive:FILE
// docker://REGISTRY/NAME` or `crane push` publish unchanged. Built with
// go-containerregistry.
package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Paths and the user of the image.
const (
	PluginPath = "/usr/local/bin/kubectl-gitops_preflight"
	HelmPath   = "/usr/local/bin/helm"
	CAPath     = "/etc/ssl/certs/ca-certificates.crt"
	// UID and GID of the user the image runs as ("preflight"): 65532,
	// the non-root user distroless images use, so that runAsNonRoot holds
	// without a runAsUser.
	UID = 65532
	// User is the config's user, "UID:GID" (numeric: Kubernetes checks
	// runAsNonRoot against it without reading /etc/passwd).
	User = "65532:65532"
)

// Spec is what one platform's image is made of.
type Spec struct {
	// Platform is the image's OS and architecture (linux/amd64).
	Platform v1.Platform
	// Plugin and Helm are the paths of the static binaries built for
	// Platform; CACerts the PEM bundle of trusted CAs.
	Plugin, Helm, CACerts string
	// Version (v1.2.3), Revision (the commit) and Created (the commit's
	// time: reproducible) label the image; Source is the repository URL.
	Version, Revision, Source string
	Created                   time.Time
}

// Labels are the image's OCI annotation labels.
func (s Spec) Labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":         "kubectl-gitops-preflight",
		"org.opencontainers.image.description":   "Checks a cluster before (and after) installing or upgrading the Codefresh GitOps Runtime; the gate Job of deploy/gate runs it",
		"org.opencontainers.image.source":        s.Source,
		"org.opencontainers.image.url":           s.Source,
		"org.opencontainers.image.documentation": s.Source + "/blob/main/docs/ci.md",
		"org.opencontainers.image.version":       s.Version,
		"org.opencontainers.image.revision":      s.Revision,
		"org.opencontainers.image.created":       s.Created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.licenses":      "Apache-2.0",
	}
}

// passwd and group hold root and the image's user.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\npreflight:x:65532:65532:preflight:/tmp:/sbin/nologin\n"
	group  = "root:x:0:\npreflight:x:65532:\n"
)

// Build returns the image of one platform.
func Build(s Spec) (v1.Image, error) {
	files := []file{
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
	}
	for _, f := range []struct {
		name, src string
		mode      int64
	}{{PluginPath, s.Plugin, 0o755}, {HelmPath, s.Helm, 0o755}, {CAPath, s.CACerts, 0o644}} {
		data, err := os.ReadFile(f.src)
		if err != nil {
			return nil, fmt.Errorf("image: %w", err)
		}
		files = append(files, file{name: f.name[1:], mode: f.mode, data: data})
	}
	layerTar, err := tarLayer(files, s.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}
	created := v1.Time{Time: s.Created.UTC()}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
		History: v1.History{Created: created, CreatedBy: "hack/dist (make dist): the plugin, Helm, CA certificates, passwd"}})
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = created
	cf.OS, cf.Architecture, cf.Variant = s.Platform.OS, s.Platform.Architecture, s.Platform.Variant
	cf.Config.User = User
	cf.Config.Entrypoint = []string{PluginPath}
	cf.Config.WorkingDir = "/tmp"
	cf.Config.Env = []string{"PATH=/usr/local/bin", "HOME=/tmp", "HELM_BIN=" + HelmPath, "SSL_CERT_FILE=" + CAPath}
	cf.Config.Labels = s.Labels()
	return mutate.ConfigFile(img, cf)
}

type file struct {
	name string
	mode int64
	data []byte
}

// tarLayer is the layer's tar: every parent directory, then the files, in
// name order, owned by root, at mtime (so the same input gives the same
// bytes); /tmp is world-writable with the sticky bit.
func tarLayer(files []file, mtime time.Time) ([]byte, error) {
	dirs := map[string]bool{"tmp/": true}
	for _, f := range files {
		for d := filepath.Dir(f.name); d != "."; d = filepath.Dir(d) {
			dirs[filepath.ToSlash(d)+"/"] = true
		}
	}
	type entry struct {
		hdr  *tar.Header
		data []byte
	}
	var entries []entry
	for d := range dirs {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		entries = append(entries, entry{hdr: &tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode, ModTime: mtime}})
	}
	for _, f := range files {
		entries = append(entries, entry{hdr: &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: mtime}, data: f.data})
	}
	slices.SortFunc(entries, func(a, b entry) int {
		switch {
		case a.hdr.Name < b.hdr.Name:
			return -1
		case a.hdr.Name > b.hdr.Name:
			return 1
		}
		return 0
	})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		e.hdr.Format = tar.FormatPAX
		e.hdr.Uname, e.hdr.Gname = "root", "root"
		if err := tw.WriteHeader(e.hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Index returns the image index of imgs (one per platform, in order).
func Index(imgs []v1.Image) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			MediaType: types.OCIManifestSchema1,
			Platform:  &v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant},
		}})
	}
	return idx, nil
}

// WriteArchive writes idx as an OCI image layout packed in a tar archive
// at path, its index.json naming it with ref (the version:
// org.opencontainers.image.ref.name), and returns the index's digest:
// what the release notes pin.
func WriteArchive(path, ref string, idx v1.ImageIndex, mtime time.Time) (v1.Hash, error) {
	dir, err := os.MkdirTemp("", "oci-layout-")
	if err != nil {
		return v1.Hash{}, err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
		return v1.Hash{}, err
	}
	digest, err := idx.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	return digest, tarDir(path, dir, mtime)
}

// tarDir packs dir into a tar archive at path: entries in name order, at
// mtime, owned by root.
func tarDir(path, dir string, mtime time.Time) error {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		names = append(names, p)
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(names)
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(out)
	for _, p := range names {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: mtime, Mode: 0o644, Uname: "root", Gname: "root", Format: tar.FormatPAX}
		if fi.IsDir() {
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(data))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
