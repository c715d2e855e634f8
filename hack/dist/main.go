// Command dist builds the release artefacts into a directory (make dist):
//
//	kubectl-gitops_preflight_<version>_<os>_<arch>.tar.gz  linux, darwin × amd64, arm64
//	kubectl-gitops_preflight_<version>_windows_amd64.zip
//	checksums.txt                                           sha256sum format
//	gitops-preflight.yaml                                   krew manifest from .krew.yaml
//
// Each archive is a krew plugin and a Helm plugin at once: bin/ holds the
// binary (krew's `bin`, and where plugin.yaml points), and the root LICENSE,
// README.md, plugin.yaml, plugin.complete, install-binary.sh (the Helm
// install hook: a no-op when the binary is there) and the kubectl completion
// helper (kubectl_complete-gitops_preflight, a .cmd on Windows). With
// -sign-keyring every archive also gets a Helm 4 provenance file,
// <archive>.prov, signed by hack/sign (its own module). The krew manifest is
// the krew-release-bot template .krew.yaml rendered for <version> with the
// sha256 of these archives, then checked with krew's rules
// (internal/release). <version> must be vX.Y.Z[-pre][+build]: krew requires
// the leading v (krew's manifest rules: https://krew.sigs.k8s.io/docs/developer-guide/plugin-manifest/).
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/release"
)

const (
	binName    = "kubectl-gitops_preflight"
	helperName = "kubectl_complete-gitops_preflight"
	// binDir is where the binary sits in an archive: plugin.yaml's command
	// and .krew.yaml's bin point there.
	binDir   = "bin/"
	manifest = "gitops-preflight.yaml"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		version   = flag.String("version", "", "release version, vX.Y.Z (the git tag)")
		out       = flag.String("out", "dist", "output directory (emptied first)")
		ldflags   = flag.String("ldflags", "", "go build -ldflags")
		platforms = flag.String("platforms", "darwin/amd64,darwin/arm64,linux/amd64,linux/arm64,windows/amd64", "os/arch list")
		mtime     = flag.Int64("mtime", 0, "modification time of archive entries, Unix seconds (the commit time: reproducible archives)")
		keyring   = flag.String("sign-keyring", "", "OpenPGP secret keyring of the release key: write <archive>.prov for Helm 4 (empty: no .prov)")
		keyName   = flag.String("sign-key", "gitops-preflight", "name of the signing key in -sign-keyring")
		passEnv   = flag.String("sign-passphrase-env", "", "environment variable holding the signing key's passphrase")
		noKrew    = flag.Bool("no-krew", false, "skip the krew manifest (a build of some platforms only)")
		img       = imageFlags()
	)
	flag.Parse()
	if !strings.HasPrefix(*version, "v") {
		return fmt.Errorf("version %q must be vX.Y.Z (krew needs the leading v): tag the commit or set VERSION=vX.Y.Z", *version)
	}
	// plugin.yaml's version is the tag without its v (Helm >= 4.1.4 rejects the v).
	helm, err := release.ReadHelmPlugin("plugin.yaml")
	if err != nil {
		return err
	}
	if want := strings.TrimPrefix(*version, "v"); helm.Version != want {
		if !strings.Contains(want, "-") {
			return fmt.Errorf("plugin.yaml has version %q; a release %s needs %q there", helm.Version, *version, want)
		}
		fmt.Fprintf(os.Stderr, "warning: plugin.yaml has version %q, not %q (fine for a pre-release build)\n", helm.Version, want)
	}
	for _, pc := range helm.PlatformCommand {
		want := "${HELM_PLUGIN_DIR}/" + binDir + binName
		if pc.OS == "windows" {
			want += ".exe"
		}
		if pc.Command != want {
			return fmt.Errorf("plugin.yaml runs %q on %q; the archives have %s", pc.Command, pc.OS, want)
		}
	}
	if err := os.RemoveAll(*out); err != nil {
		return err
	}
	build := filepath.Join(*out, "build")
	if err := os.MkdirAll(build, 0o755); err != nil {
		return err
	}
	modTime := time.Unix(*mtime, 0).UTC()
	sums := map[string]string{}
	for _, p := range strings.Split(*platforms, ",") {
		goos, goarch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok {
			return fmt.Errorf("platform %q is not os/arch", p)
		}
		bin := binName
		ext := ".tar.gz"
		if goos == "windows" {
			bin += ".exe"
			ext = ".zip"
		}
		binPath := filepath.Join(build, goos+"-"+goarch, bin)
		fmt.Fprintf(os.Stderr, "building %s/%s\n", goos, goarch)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", *ldflags, "-o", binPath, "./cmd/kubectl-gitops_preflight")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build %s/%s: %w", goos, goarch, err)
		}
		name := fmt.Sprintf("%s_%s_%s_%s%s", binName, *version, goos, goarch, ext)
		archive := filepath.Join(*out, name)
		files := archiveFiles(goos, binPath)
		if err := release.WriteArchive(archive, files, modTime); err != nil {
			return err
		}
		if err := release.CheckKrewArchive(archive, binDir+bin, goos == "windows"); err != nil {
			return err
		}
		if goos != "windows" { // Helm installs .tar.gz/.tgz archives only
			if err := release.CheckHelmArchive(archive, binDir+bin); err != nil {
				return err
			}
		}
		sum, err := release.SHA256File(archive)
		if err != nil {
			return err
		}
		sums[name] = sum
	}
	// The container image, from the same linux binaries.
	var built *builtImage
	if len(img.platforms()) > 0 {
		if built, err = img.build(*out, build, *version, *ldflags, time.Unix(*mtime, 0).UTC()); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(build); err != nil {
		return err
	}
	allSums := sums
	if built != nil {
		allSums = maps.Clone(sums)
		allSums[built.file] = built.sha256
	}
	if err := writeChecksums(filepath.Join(*out, "checksums.txt"), allSums); err != nil {
		return err
	}
	if err := writeReleaseNotes(filepath.Join(*out, releaseNotes), *version, built, allSums); err != nil {
		return err
	}
	if *keyring != "" {
		if err := sign(*out, sums, *keyring, *keyName, *passEnv); err != nil {
			return err
		}
	}
	if *noKrew {
		fmt.Fprintf(os.Stderr, "wrote %d archives and checksums.txt to %s\n", len(sums), *out)
		return nil
	}
	tmpl, err := os.ReadFile(".krew.yaml")
	if err != nil {
		return err
	}
	rendered, err := release.RenderKrewTemplate(tmpl, *version, func(uri string) (string, error) {
		sum, ok := sums[path.Base(uri)]
		if !ok {
			return "", fmt.Errorf(".krew.yaml names %s, which this build did not produce (see -platforms)", path.Base(uri))
		}
		return sum, nil
	})
	if err != nil {
		return fmt.Errorf("rendering .krew.yaml: %w", err)
	}
	mpath := filepath.Join(*out, manifest)
	if err := os.WriteFile(mpath, rendered, 0o644); err != nil {
		return err
	}
	if _, err := release.ReadKrewManifest(mpath); err != nil {
		return fmt.Errorf("%s fails krew's rules: %w", mpath, err)
	}
	fmt.Fprintf(os.Stderr, "wrote %d archives, checksums.txt and %s to %s\n", len(sums), manifest, *out)
	return nil
}

// archiveFiles lists one platform's archive: the binary built at binPath
// in bin/, the kubectl completion helper (the .cmd one on Windows, which
// kubectl there finds through PATHEXT; the sh one elsewhere), LICENSE,
// README.md and the Helm plugin files, all from the repository root.
func archiveFiles(goos, binPath string) []release.File {
	bin, helper := binName, helperName
	if goos == "windows" {
		bin += ".exe"
		helper += ".cmd"
	}
	return []release.File{
		{Name: binDir + bin, Src: binPath, Mode: 0o755},
		{Name: helper, Src: helper, Mode: 0o755},
		{Name: "LICENSE", Src: "LICENSE", Mode: 0o644},
		{Name: "README.md", Src: "README.md", Mode: 0o644},
		{Name: "plugin.yaml", Src: "plugin.yaml", Mode: 0o644},
		{Name: "plugin.complete", Src: "plugin.complete", Mode: 0o755},
		{Name: "install-binary.sh", Src: "install-binary.sh", Mode: 0o755},
	}
}

// sign runs hack/sign (a module of its own, so that the plugin does not
// depend on Helm 4) on every archive in dir: <archive>.prov next to each.
func sign(dir string, sums map[string]string, keyring, key, passEnv string) error {
	abs := filepath.Abs
	ring, err := abs(keyring)
	if err != nil {
		return err
	}
	meta, err := abs("plugin.yaml")
	if err != nil {
		return err
	}
	args := []string{"-C", "hack/sign", "run", ".", "-keyring", ring, "-key", key, "-plugin-yaml", meta}
	if passEnv != "" {
		args = append(args, "-passphrase-env", passEnv)
	}
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p, err := abs(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		args = append(args, p)
	}
	cmd := exec.Command("go", args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("signing the archives: %w", err)
	}
	return nil
}

// writeChecksums writes "<sha256>  <file>" lines sorted by file name, the
// format `sha256sum -c` reads.
func writeChecksums(p string, sums map[string]string) error {
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(sums[n] + "  " + n + "\n")
	}
	return os.WriteFile(p, []byte(b.String()), 0o644)
}
