package release

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestInstallHook runs install-binary.sh (plugin.yaml's install hook) as
// Helm does after a git-URL install: HELM_PLUGIN_DIR holds the sources, the
// release server (a local one, through GITOPS_PREFLIGHT_RELEASE_URL) has the
// archive of plugin.yaml's version and checksums.txt. The hook installs the
// binary when the checksum matches, refuses a tampered archive or a missing
// release with a message that says what to do, and does nothing when the
// binary is already there (an archive install).
func TestInstallHook(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the hook supports linux and darwin")
	}
	meta, err := ReadHelmPlugin(filepath.Join(repoRoot, "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(meta.Hooks["install"], "install-binary.sh") {
		t.Fatalf("plugin.yaml's install hook does not run install-binary.sh: %q", meta.Hooks["install"])
	}
	tag := "v" + meta.Version
	name := "kubectl-gitops_preflight_" + tag + "_" + runtime.GOOS + "_" + runtime.GOARCH + ".tar.gz"

	src := t.TempDir()
	fake := filepath.Join(src, "fake-bin")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho fake plugin\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(src, name)
	if err := WriteArchive(archive, []File{{Name: "bin/kubectl-gitops_preflight", Src: fake, Mode: 0o755}}, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	good := hex.EncodeToString(sum[:]) + "  " + name + "\n"
	checksums := good
	var requests []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests = append(requests, r.URL.Path)
		switch r.URL.Path {
		case "/" + tag + "/checksums.txt":
			w.Write([]byte(checksums))
		case "/" + tag + "/" + name:
			w.Write(data)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	hook := func(t *testing.T, base string, args ...string) (string, string, error) {
		dir := t.TempDir()
		for _, f := range []string{"plugin.yaml", "install-binary.sh"} {
			b, err := os.ReadFile(filepath.Join(repoRoot, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		// The hook exactly as plugin.yaml has it, run as Helm runs legacy hooks.
		cmd := exec.Command("sh", append([]string{"-c", meta.Hooks["install"]}, args...)...)
		cmd.Env = append(os.Environ(), "HELM_PLUGIN_DIR="+dir, "GITOPS_PREFLIGHT_RELEASE_URL="+base)
		out, err := cmd.CombinedOutput()
		return dir, string(out), err
	}

	t.Run("installs the verified binary", func(t *testing.T) {
		dir, out, err := hook(t, srv.URL)
		if err != nil {
			t.Fatalf("hook failed: %v\n%s", err, out)
		}
		got, err := os.ReadFile(filepath.Join(dir, "bin", "kubectl-gitops_preflight"))
		if err != nil || string(got) != "#!/bin/sh\necho fake plugin\n" {
			t.Fatalf("binary not installed (%v): %q\n%s", err, got, out)
		}
		if !strings.Contains(out, "sha256 verified") {
			t.Errorf("hook output %q", out)
		}
	})
	t.Run("refuses a tampered archive", func(t *testing.T) {
		checksums = strings.Repeat("0", 64) + "  " + name + "\n"
		defer func() { checksums = good }()
		dir, out, err := hook(t, srv.URL)
		if err == nil || !strings.Contains(out, "checksums.txt says "+strings.Repeat("0", 64)) || !strings.Contains(out, "helm plugin install") {
			t.Fatalf("tampered archive: err %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "bin", "kubectl-gitops_preflight")); err == nil {
			t.Error("a binary failing its checksum was installed")
		}
	})
	t.Run("says what to do when the release is not there", func(t *testing.T) {
		_, out, err := hook(t, srv.URL+"/nothing-here")
		if err == nil || !strings.Contains(out, "cannot download "+srv.URL+"/nothing-here/"+tag+"/checksums.txt") || !strings.Contains(out, "make build") {
			t.Fatalf("missing release: err %v\n%s", err, out)
		}
	})
	t.Run("a binary already there is kept", func(t *testing.T) {
		requests = nil
		dir := t.TempDir()
		for _, f := range []string{"plugin.yaml", "install-binary.sh"} {
			b, _ := os.ReadFile(filepath.Join(repoRoot, f))
			os.WriteFile(filepath.Join(dir, f), b, 0o755)
		}
		os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
		os.WriteFile(filepath.Join(dir, "bin", "kubectl-gitops_preflight"), []byte("mine"), 0o755)
		cmd := exec.Command("sh", "-c", meta.Hooks["install"])
		cmd.Env = append(os.Environ(), "HELM_PLUGIN_DIR="+dir, "GITOPS_PREFLIGHT_RELEASE_URL="+srv.URL)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "bin", "kubectl-gitops_preflight")); string(b) != "mine" || len(requests) != 0 {
			t.Errorf("binary replaced (%q) or release fetched (%v)", b, requests)
		}
	})
}

// TestHelmArchiveCheck: an archive without plugin.yaml, or without the binary
// where it points, is refused.
func TestHelmArchiveCheck(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	os.WriteFile(f, []byte("x"), 0o755)
	for _, tc := range []struct {
		files   []File
		wantErr string
	}{
		{[]File{{Name: "plugin.yaml", Src: f, Mode: 0o644}, {Name: "bin/kubectl-gitops_preflight", Src: f, Mode: 0o755}}, ""},
		{[]File{{Name: "bin/kubectl-gitops_preflight", Src: f, Mode: 0o755}}, "no plugin.yaml"},
		{[]File{{Name: "plugin.yaml", Src: f, Mode: 0o644}, {Name: "kubectl-gitops_preflight", Src: f, Mode: 0o755}}, "no executable bin/kubectl-gitops_preflight"},
		{[]File{{Name: "plugin.yaml", Src: f, Mode: 0o644}, {Name: "bin/kubectl-gitops_preflight", Src: f, Mode: 0o644}}, "no executable"},
	} {
		p := filepath.Join(dir, "a.tar.gz")
		if err := WriteArchive(p, tc.files, time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
		err := CheckHelmArchive(p, "bin/kubectl-gitops_preflight")
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%v: err %v, want %q", tc.files, err, tc.wantErr)
		}
	}
}
