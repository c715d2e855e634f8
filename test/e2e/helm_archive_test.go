package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/release"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// noGoPATH is the PATH the Helm users of these tests have: system tools
// (sh, git, curl, tar, sha256sum), no Go toolchain.
const noGoPATH = "/usr/bin:/bin"

// TestHelmArchiveInstall is the install path of a Helm user without Go:
// `make dist` (hack/dist, one platform, signed with a throwaway key made
// here) produces the release archive, checksums.txt and the .prov; a server
// on 127.0.0.1 serves them as a release does. Helm 3 and Helm 4 install the
// plugin from the archive URL (Helm 4 verifying the .prov against the
// throwaway public key, and refusing a tampered archive or an unknown key),
// from the unpacked archive, and from a git URL served by a local git
// daemon, whose install hook fetches the archive from the local server and
// checks it against checksums.txt. Each installed plugin runs: version,
// --list-checks, and a run against an unreachable cluster (exit 3).
func TestHelmArchiveInstall(t *testing.T) {
	testcluster.Parallel(t)
	if runtime.GOOS != "linux" {
		t.Skip("the release server and hook are exercised on linux")
	}
	helm3 := testcluster.HelmBinary(t)
	helm4 := testcluster.Helm4Binary(t)
	root := testcluster.RepoRoot(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not on PATH; the git-URL install needs git")
	}
	for _, dir := range filepath.SplitList(noGoPATH) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			t.Fatalf("%s has a go binary: the test would not show an install without Go", dir)
		}
	}
	meta, err := release.ReadHelmPlugin(filepath.Join(root, "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tag := "v" + meta.Version
	name := fmt.Sprintf("kubectl-gitops_preflight_%s_%s_%s.tar.gz", tag, runtime.GOOS, runtime.GOARCH)

	// The release: archives, checksums.txt and .prov, as make dist makes them.
	keys := t.TempDir()
	goRun(t, root, "-C", "hack/sign", "run", ".", "-gen-key", keys)
	dist := filepath.Join(t.TempDir(), tag)
	// No container image (-image-platforms ""): TestImage builds it; here it
	// would cross-compile the plugin and Helm for linux/arm64.
	goRun(t, root, "run", "./hack/dist", "-version", tag, "-out", dist, "-no-krew",
		"-platforms", runtime.GOOS+"/"+runtime.GOARCH, "-image-platforms", "", "-sign-keyring", filepath.Join(keys, "secring.asc"))
	for _, f := range []string{name, name + ".prov", "checksums.txt"} {
		if _, err := os.Stat(filepath.Join(dist, f)); err != nil {
			t.Fatalf("make dist did not write %s: %v", f, err)
		}
	}
	var served []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served = append(served, r.Method+" "+r.URL.Path)
		// A release host's content types: Helm 3 installs an archive URL
		// only when HEAD says gzip.
		if strings.HasSuffix(r.URL.Path, ".tar.gz") {
			w.Header().Set("Content-Type", "application/gzip")
		}
		if rest, ok := strings.CutPrefix(r.URL.Path, "/tampered/"); ok {
			// The release's .prov with an archive one byte longer.
			data, err := os.ReadFile(filepath.Join(filepath.Dir(dist), rest))
			if err != nil {
				http.NotFound(w, r)
				return
			}
			if strings.HasSuffix(rest, ".tar.gz") {
				data = append(data, 0)
			}
			w.Write(data)
			return
		}
		http.StripPrefix("/download", http.FileServer(http.Dir(filepath.Dir(dist)))).ServeHTTP(w, r)
	}))
	defer srv.Close()
	base := srv.URL + "/download"
	archiveURL := base + "/" + tag + "/" + name

	gitURL := gitDaemon(t, root)

	for _, h := range []struct {
		name   string
		bin    string
		verify []string // Helm 4 verifies archives by default
	}{
		{"helm3", helm3, nil},
		{"helm4", helm4, []string{"--keyring", filepath.Join(keys, "pubring.asc")}},
	} {
		t.Run(h.name+" archive URL", func(t *testing.T) {
			env := helmEnv(t, base)
			out, code := run(t, env, h.bin, append([]string{"plugin", "install", archiveURL}, h.verify...)...)
			if code != 0 {
				t.Fatalf("helm plugin install %s: exit %d\n%s", archiveURL, code, out)
			}
			runInstalled(t, env, h.bin, meta.Version)
		})
		t.Run(h.name+" git URL with the install hook", func(t *testing.T) {
			env := helmEnv(t, base)
			args := []string{"plugin", "install", gitURL}
			if h.name == "helm4" {
				// Helm 4 cannot verify a git source: without --verify=false it refuses.
				if out, code := run(t, env, h.bin, args...); code == 0 || !strings.Contains(out, "--verify=false") {
					t.Errorf("helm 4 installed a git URL without --verify=false (exit %d):\n%s", code, out)
				}
				args = append(args, "--verify=false")
			}
			served = nil
			out, code := run(t, env, h.bin, args...)
			if code != 0 {
				t.Fatalf("helm plugin install %s: exit %d\n%s", gitURL, code, out)
			}
			if !strings.Contains(out, "sha256 verified") || !strings.Contains(strings.Join(served, ","), "GET /download/"+tag+"/checksums.txt") {
				t.Errorf("the install hook did not fetch and verify the archive (served %v):\n%s", served, out)
			}
			runInstalled(t, env, h.bin, meta.Version)
		})
	}
	// A downloaded archive file: neither Helm installs it as a file (Helm 3
	// takes directories only; Helm 4.3 wants plugin.yaml in a directory named
	// after the file, which Helm 3 and krew cannot have), so the README says
	// to unpack it and install the directory, as done here.
	unpacked := t.TempDir()
	if out, err := exec.Command("tar", "-xzf", filepath.Join(dist, name), "-C", unpacked).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	for _, h := range []struct{ name, bin string }{{"helm3", helm3}, {"helm4", helm4}} {
		t.Run(h.name+" unpacked archive", func(t *testing.T) {
			env := helmEnv(t, base)
			out, code := run(t, env, h.bin, "plugin", "install", unpacked)
			if code != 0 {
				t.Fatalf("helm plugin install %s: exit %d\n%s", unpacked, code, out)
			}
			runInstalled(t, env, h.bin, meta.Version)
		})
	}
	t.Run("helm4 refuses an archive whose .prov does not match", func(t *testing.T) {
		env := helmEnv(t, base)
		url := srv.URL + "/tampered/" + tag + "/" + name
		out, code := run(t, env, helm4, "plugin", "install", url, "--keyring", filepath.Join(keys, "pubring.asc"))
		if code == 0 || !strings.Contains(out, "verification failed") {
			t.Fatalf("a tampered archive installed (exit %d):\n%s", code, out)
		}
		out, code = run(t, env, helm4, "plugin", "install", archiveURL)
		if code == 0 || !strings.Contains(out, "verification failed") {
			t.Fatalf("an archive installed without the project's key in the keyring (exit %d):\n%s", code, out)
		}
	})
}

// helmEnv is a fresh Helm home with no Go on PATH and the install hook
// pointed at the local release server.
func helmEnv(t *testing.T, releases string) []string {
	home := t.TempDir()
	return []string{
		"PATH=" + noGoPATH, "HOME=" + home,
		"HELM_CONFIG_HOME=" + filepath.Join(home, "config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "data"),
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"),
		"GITOPS_PREFLIGHT_RELEASE_URL=" + releases,
	}
}

// runInstalled runs the installed plugin through Helm: its version, the
// catalogue, and a run against an unreachable cluster (exit 3, passed
// through by Helm, with the report naming helm gitops-preflight).
func runInstalled(t *testing.T, env []string, helm, version string) {
	t.Helper()
	out, code := run(t, env, helm, "plugin", "list")
	if code != 0 || !strings.Contains(out, "gitops-preflight") || !strings.Contains(out, version) {
		t.Fatalf("helm plugin list (exit %d):\n%s", code, out)
	}
	out, code = run(t, env, helm, "gitops-preflight", "version")
	if code != 0 || !strings.HasPrefix(out, "helm gitops-preflight ") {
		t.Errorf("helm gitops-preflight version: exit %d\n%s", code, out)
	}
	res := helmRun(t, env, helm, "gitops-preflight", "--list-checks", "-o", "json")
	var list []struct{ ID string }
	if err := json.Unmarshal([]byte(res.Stdout), &list); err != nil || len(list) != len(checks.All()) {
		t.Errorf("helm gitops-preflight --list-checks -o json: %v (%d checks)\n%s", err, len(list), res.Stdout)
	}
	kc := filepath.Join(t.TempDir(), "kc")
	if err := os.WriteFile(kc, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	res = helmRun(t, append(env, "KUBECONFIG="+kc), helm, "gitops-preflight", "--request-timeout", "2s")
	if res.Code != cli.ExitUnreachable || !strings.HasPrefix(res.Stdout, "helm gitops-preflight: pre-install checks") {
		t.Errorf("a run against an unreachable cluster: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
}

const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: down
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: x}
contexts:
- name: down
  context: {cluster: down, user: u}
current-context: down
`

// goRun runs the go tool in dir (with the test's own PATH, which has Go).
func goRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// gitDaemon serves a git repository of the plugin's sources (plugin.yaml,
// plugin.complete, install-binary.sh, LICENSE: what a clone of the project
// has, without a built binary) with `git daemon` on 127.0.0.1 and returns
// its git:// URL. The daemon stops with the test.
func gitDaemon(t *testing.T, root string) string {
	t.Helper()
	work := t.TempDir()
	for _, f := range []string{"plugin.yaml", "plugin.complete", "install-binary.sh", "LICENSE"} {
		copyFile(t, filepath.Join(root, f), filepath.Join(work, f), 0o755)
	}
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(work, "init", "-q", "-b", "main")
	git(work, "add", ".")
	git(work, "commit", "-q", "-m", "plugin sources")
	served := t.TempDir()
	git(served, "clone", "-q", "--bare", work, "gitops-preflight.git")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	daemon := exec.CommandContext(ctx, "git", "daemon", "--export-all", "--reuseaddr", "--base-path="+served,
		"--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), served)
	if err := daemon.Start(); err != nil {
		cancel()
		t.Fatalf("git daemon: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = daemon.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("git daemon does not listen on %s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "git://" + addr + "/gitops-preflight.git"
}
