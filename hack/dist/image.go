package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/image"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/release"
)

// HelmVersion is the Helm client the image carries: the Helm 3 release the
// plugin's module depends on (helm.sh/helm/v3 in go.mod) and the end-to-end
// tests run (testcluster.HelmVersion; main_test.go keeps them equal).
const HelmVersion = "v3.22.0"

// releaseNotes is the file of dist/ that pins the image by digest.
const releaseNotes = "release-notes.md"

// projectSource is the repository the image's labels point at.
const projectSource = "https://github.com/gitops-preflight/kubectl-gitops-preflight"

type imageOptions struct {
	list, caCerts, revision, helmVersion *string
}

func imageFlags() imageOptions {
	return imageOptions{
		list:        flag.String("image-platforms", "linux/amd64,linux/arm64", "platforms of the container image (linux/ARCH, comma-separated; empty: no image)"),
		caCerts:     flag.String("ca-certs", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle of CA certificates the image trusts (Debian's ca-certificates)"),
		revision:    flag.String("revision", "unknown", "the commit the image is built from (its revision label)"),
		helmVersion: flag.String("helm-version", HelmVersion, "the Helm client the image carries (built from the Go module proxy)"),
	}
}

func (o imageOptions) platforms() []string {
	var out []string
	for _, p := range strings.Split(*o.list, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// builtImage is the image archive make dist wrote.
type builtImage struct {
	file, sha256 string
	digest       v1.Hash
	platforms    []string
	helm         string
	caSHA256     string
}

// build builds one image per platform from the static plugin binaries of
// build/ (building those missing) and a static Helm client built from the
// Go module proxy, and writes dist/kubectl-gitops-preflight_<version>_oci.tar.
func (o imageOptions) build(out, build, version, ldflags string, created time.Time) (*builtImage, error) {
	b := &builtImage{file: fmt.Sprintf("kubectl-gitops-preflight_%s_oci.tar", version), helm: *o.helmVersion, platforms: o.platforms()}
	var imgs []v1.Image
	for _, p := range b.platforms {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok || goos != "linux" {
			return nil, fmt.Errorf("image platform %q: want linux/ARCH", p)
		}
		plugin := filepath.Join(build, goos+"-"+goarch, binName)
		if _, err := os.Stat(plugin); err != nil {
			fmt.Fprintf(os.Stderr, "building %s/%s for the image\n", goos, goarch)
			cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", plugin, "./cmd/kubectl-gitops_preflight")
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				return nil, fmt.Errorf("go build %s/%s: %w", goos, goarch, err)
			}
		}
		helm, err := buildHelm(*o.helmVersion, goos, goarch, filepath.Join(build, "helm-"+goos+"-"+goarch))
		if err != nil {
			return nil, err
		}
		img, err := image.Build(image.Spec{
			Platform: v1.Platform{OS: goos, Architecture: goarch}, Plugin: plugin, Helm: helm, CACerts: *o.caCerts,
			Version: version, Revision: *o.revision, Source: projectSource, Created: created,
		})
		if err != nil {
			return nil, err
		}
		imgs = append(imgs, img)
	}
	idx, err := image.Index(imgs)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(out, b.file)
	if b.digest, err = image.WriteArchive(path, version, idx, created); err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	if b.sha256, err = release.SHA256File(path); err != nil {
		return nil, err
	}
	if b.caSHA256, err = release.SHA256File(*o.caCerts); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "wrote %s: image index %s (%s)\n", path, b.digest, strings.Join(b.platforms, ", "))
	return b, nil
}

// buildHelm builds Helm's cmd/helm at version for goos/goarch, static
// (CGO_ENABLED=0), as the test kit builds it (testcluster.buildHelm: `go
// install helm.sh/helm/v3/cmd/helm@version` from the Go module proxy, with
// Helm's version ldflags), in a GOPATH of its own under dir (go install
// puts a cross-compiled binary in bin/GOOS_GOARCH/) sharing the module
// cache, and returns the binary's path.
func buildHelm(version, goos, goarch, dir string) (string, error) {
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	if dir, err = filepath.Abs(dir); err != nil { // GOPATH must be absolute
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "building helm %s %s/%s for the image\n", version, goos, goarch)
	const module = "helm.sh/helm/v3"
	cmd := exec.Command("go", "install", "-trimpath",
		"-ldflags", "-s -w -X "+module+"/internal/version.version="+version+" -X "+module+"/internal/version.gitTreeState=clean",
		module+"/cmd/helm@"+version)
	cmd.Dir = dir // outside this module: go install pkg@version ignores go.mod
	cmd.Env = append(os.Environ(), "GOPATH="+dir, "GOMODCACHE="+strings.TrimSpace(string(modcache)), "GOBIN=",
		"GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building helm %s for %s/%s: %w", version, goos, goarch, err)
	}
	bin := filepath.Join(dir, "bin", "helm")
	if goos != runtime.GOOS || goarch != runtime.GOARCH {
		bin = filepath.Join(dir, "bin", goos+"_"+goarch, "helm")
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("helm %s for %s/%s: %w", version, goos, goarch, err)
	}
	return bin, nil
}

// writeReleaseNotes writes dist/release-notes.md: the image pinned by
// digest, how to publish and use it, and every artefact's sha256.
func writeReleaseNotes(path, version string, img *builtImage, sums map[string]string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# kubectl-gitops-preflight %s\n\n", version)
	if img != nil {
		fmt.Fprintf(&b, "## Container image\n\n")
		fmt.Fprintf(&b, "`%s` is an OCI image layout (a tar archive) holding the image index\n\n", img.file)
		fmt.Fprintf(&b, "    %s\n\n", img.digest)
		fmt.Fprintf(&b, "for %s: the static plugin binary as entrypoint, the Helm client %s, CA certificates (sha256 %s), running as user %s (non-root). Built without a container daemon, FROM scratch, reproducibly: the same commit builds the same digest.\n\n",
			strings.Join(img.platforms, " and "), img.helm, img.caSHA256, image.User)
		fmt.Fprintf(&b, "Publish it to your registry unchanged, then use it pinned by digest (the gate of deploy/gate: `gitopsPreflightGate.image`):\n\n")
		fmt.Fprintf(&b, "    skopeo copy --all oci-archive:%s:%s docker://REGISTRY/kubectl-gitops-preflight:%s\n", img.file, version, version)
		fmt.Fprintf(&b, "    image: REGISTRY/kubectl-gitops-preflight@%s\n\n", img.digest)
	}
	fmt.Fprintf(&b, "## Files (sha256)\n\n")
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "    %s  %s\n", sums[n], n)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
