package release

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const repoRoot = "../.."

// validPlugin is a manifest that passes every rule; cases mutate it.
func validPlugin() KrewPlugin {
	p := KrewPlugin{APIVersion: KrewAPIVersion, Kind: KrewKind}
	p.Metadata.Name = "gitops-preflight"
	p.Spec = KrewPluginSpec{Version: "v1.2.3", ShortDescription: "Preflight checks", Platforms: []KrewPlatform{
		{URI: "https://example.com/a.tar.gz", Sha256: strings.Repeat("ab", 32), Bin: "kubectl-gitops_preflight",
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"os": "linux", "arch": "amd64"}}},
		{URI: "https://example.com/b.zip", Sha256: strings.Repeat("cd", 32), Bin: "kubectl-gitops_preflight.exe",
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"os": "windows", "arch": "amd64"}}},
	}}
	return p
}

func TestKrewRules(t *testing.T) {
	if err := ValidateKrewPlugin("gitops-preflight", validPlugin()); err != nil {
		t.Fatalf("valid manifest rejected: %v", err)
	}
	tests := []struct {
		name    string
		file    string
		mutate  func(p *KrewPlugin)
		wantErr string
	}{
		{"apiVersion", "", func(p *KrewPlugin) { p.APIVersion = "krew.googlecontainertools.github.com/v1alpha1" }, "apiVersion"},
		{"kind", "", func(p *KrewPlugin) { p.Kind = "Plugins" }, "kind"},
		{"name differs from file", "", func(p *KrewPlugin) { p.Metadata.Name = "gitops_preflight" }, `plugin should be named "gitops-preflight"`},
		{"unsafe name", "gitops.preflight", func(p *KrewPlugin) { p.Metadata.Name = "gitops.preflight" }, "is not allowed"},
		{"windows device name", "nul", func(p *KrewPlugin) { p.Metadata.Name = "nul" }, "is not allowed"},
		{"no short description", "", func(p *KrewPlugin) { p.Spec.ShortDescription = "" }, "should have a short description"},
		{"line break", "", func(p *KrewPlugin) { p.Spec.ShortDescription = "a\nb" }, "line breaks"},
		{"too long", "", func(p *KrewPlugin) { p.Spec.ShortDescription = strings.Repeat("x", 51) }, "at most 50"},
		{"version without v", "", func(p *KrewPlugin) { p.Spec.Version = "1.2.3" }, "not starting with 'v'"},
		{"version not semver", "", func(p *KrewPlugin) { p.Spec.Version = "v1.2" }, "failed to parse plugin version"},
		{"no version", "", func(p *KrewPlugin) { p.Spec.Version = "" }, "should have a version"},
		{"no platforms", "", func(p *KrewPlugin) { p.Spec.Platforms = nil }, "should have a platform"},
		{"no uri", "", func(p *KrewPlugin) { p.Spec.Platforms[0].URI = "" }, "`uri` has to be set"},
		{"upper-case sha256", "", func(p *KrewPlugin) { p.Spec.Platforms[0].Sha256 = strings.Repeat("AB", 32) }, "`sha256` value"},
		{"short sha256", "", func(p *KrewPlugin) { p.Spec.Platforms[0].Sha256 = "abc" }, "`sha256` value"},
		{"no bin", "", func(p *KrewPlugin) { p.Spec.Platforms[0].Bin = "" }, "`bin` has to be set"},
		{"empty files", "", func(p *KrewPlugin) { p.Spec.Platforms[0].Files = []KrewFileOperation{} }, "unspecified or non-empty"},
		{"file without from", "", func(p *KrewPlugin) { p.Spec.Platforms[0].Files = []KrewFileOperation{{To: "."}} }, "`from` field"},
		{"nil selector", "", func(p *KrewPlugin) { p.Spec.Platforms[0].Selector = nil }, "nil selector"},
		{"empty selector", "", func(p *KrewPlugin) { p.Spec.Platforms[0].Selector = &metav1.LabelSelector{} }, "empty selector"},
		{"unknown selector key", "", func(p *KrewPlugin) { p.Spec.Platforms[0].Selector.MatchLabels["distro"] = "debian" }, `key "distro" not supported`},
		{"unsupported platform", "", func(p *KrewPlugin) { p.Spec.Platforms[0].Selector.MatchLabels["arch"] = "s390x" }, "doesn't match any supported platforms"},
		{"overlapping selectors", "", func(p *KrewPlugin) {
			p.Spec.Platforms[1].Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"os": "linux"}}
		}, "overlapping selectors"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPlugin()
			tt.mutate(&p)
			file := tt.file
			if file == "" {
				file = "gitops-preflight"
			}
			err := ValidateKrewPlugin(file, p)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ValidateKrewPlugin = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestKrewTemplate renders the repository's .krew.yaml as krew-release-bot
// would for v1.2.3 and validates the result as validate-krew-manifest would
// (file named gitops-preflight.yaml).
func TestKrewTemplate(t *testing.T) {
	tmpl, err := os.ReadFile(filepath.Join(repoRoot, ".krew.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	rendered, err := RenderKrewTemplate(tmpl, "v1.2.3", func(uri string) (string, error) {
		uris = append(uris, uri)
		sum := sha256.Sum256([]byte(uri))
		return hex.EncodeToString(sum[:]), nil
	})
	if err != nil {
		t.Fatalf("rendering .krew.yaml: %v", err)
	}
	path := filepath.Join(t.TempDir(), "gitops-preflight.yaml")
	if err := os.WriteFile(path, rendered, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := ReadKrewManifest(path)
	if err != nil {
		t.Fatalf("rendered .krew.yaml fails krew's rules: %v\n%s", err, rendered)
	}
	if p.Spec.Version != "v1.2.3" {
		t.Errorf("version = %q", p.Spec.Version)
	}
	want := map[string]string{
		"darwin/amd64": "_v1.2.3_darwin_amd64.tar.gz", "darwin/arm64": "_v1.2.3_darwin_arm64.tar.gz",
		"linux/amd64": "_v1.2.3_linux_amd64.tar.gz", "linux/arm64": "_v1.2.3_linux_arm64.tar.gz",
		"windows/amd64": "_v1.2.3_windows_amd64.zip",
	}
	if len(p.Spec.Platforms) != len(want) {
		t.Fatalf("%d platforms, want %d", len(p.Spec.Platforms), len(want))
	}
	for _, pl := range p.Spec.Platforms {
		key := pl.Selector.MatchLabels["os"] + "/" + pl.Selector.MatchLabels["arch"]
		if !strings.HasSuffix(pl.URI, "/releases/download/v1.2.3/kubectl-gitops_preflight"+want[key]) {
			t.Errorf("%s: uri %s", key, pl.URI)
		}
		wantBin := "bin/kubectl-gitops_preflight" // where plugin.yaml points too
		if strings.HasPrefix(key, "windows") {
			wantBin += ".exe"
		}
		if pl.Bin != wantBin || pl.Files != nil {
			t.Errorf("%s: bin %q files %v, want bin %q and no files (extract all, LICENSE included)", key, pl.Bin, pl.Files, wantBin)
		}
	}
	if !strings.Contains(p.Spec.Caveats, "cp \"${KREW_ROOT:-$HOME/.krew}/store/gitops-preflight/v1.2.3/kubectl_complete-gitops_preflight") || strings.Contains(p.Spec.Caveats, "ln -s") {
		t.Errorf("caveats do not explain the completion helper of this version:\n%s", p.Spec.Caveats)
	}
	if len(uris) != len(want) {
		t.Errorf("addURIAndSha called %d times, want %d", len(uris), len(want))
	}
}

func TestArchives(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bin, lic, helper := write("bin", "#!/bin/true\n"), write("LICENSE", "Apache"), write("helper", "#!/bin/sh\n")
	mtime := time.Unix(1700000000, 0)
	for _, tc := range []struct {
		ext, bin string
		windows  bool
	}{{".tar.gz", "kubectl-gitops_preflight", false}, {".zip", "kubectl-gitops_preflight.exe", true}} {
		files := []File{{Name: tc.bin, Src: bin, Mode: 0o755}, {Name: "kubectl_complete-gitops_preflight", Src: helper, Mode: 0o755}, {Name: "LICENSE", Src: lic, Mode: 0o644}}
		a, b := filepath.Join(dir, "a"+tc.ext), filepath.Join(dir, "b"+tc.ext)
		for _, p := range []string{a, b} {
			if err := WriteArchive(p, files, mtime); err != nil {
				t.Fatal(err)
			}
		}
		if err := CheckKrewArchive(a, tc.bin, tc.windows); err != nil {
			t.Errorf("%s: %v", tc.ext, err)
		}
		entries, err := ListArchive(a)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name == "kubectl_complete-gitops_preflight" && e.Mode&0o111 == 0 {
				t.Errorf("%s: completion helper not executable: %v", tc.ext, e.Mode)
			}
		}
		sa, _ := SHA256File(a)
		sb, _ := SHA256File(b)
		if sa != sb || len(sa) != 64 || strings.ToLower(sa) != sa {
			t.Errorf("%s: archives of the same inputs differ or sha256 is not lowercase hex: %s %s", tc.ext, sa, sb)
		}
		noLicense := filepath.Join(dir, "c"+tc.ext)
		if err := WriteArchive(noLicense, files[:2], mtime); err != nil {
			t.Fatal(err)
		}
		if err := CheckKrewArchive(noLicense, tc.bin, tc.windows); err == nil || !strings.Contains(err.Error(), "LICENSE") {
			t.Errorf("%s without LICENSE: %v", tc.ext, err)
		}
		if err := CheckKrewArchive(a, "other", tc.windows); err == nil {
			t.Errorf("%s: missing bin not detected", tc.ext)
		}
	}
	notExec := filepath.Join(dir, "d.tar.gz")
	if err := WriteArchive(notExec, []File{{Name: "kubectl-gitops_preflight", Src: bin, Mode: 0o644}, {Name: "LICENSE", Src: lic, Mode: 0o644}}, mtime); err != nil {
		t.Fatal(err)
	}
	if err := CheckKrewArchive(notExec, "kubectl-gitops_preflight", false); err == nil {
		t.Error("non-executable bin not detected")
	}
}

// TestHelmPluginYAML checks the repository's plugin.yaml against Helm 3.4+
// strict decoding and the Helm 4 legacy-schema rules. (Helm's own loader,
// helm.sh/helm/v3/pkg/plugin, would pull pkg/kube's dependency tree into
// this module; the real Helm loads it in test/e2e TestHelmPlugin.)
func TestHelmPluginYAML(t *testing.T) {
	m, err := ReadHelmPlugin(filepath.Join(repoRoot, "plugin.yaml"))
	if err != nil {
		t.Fatalf("plugin.yaml: %v", err)
	}
	if m.Name != "gitops-preflight" {
		t.Errorf("name %q", m.Name)
	}

	bad := map[string]string{
		"v-prefixed version":          "name: x\nversion: v1.0.0\nplatformCommand: [{command: x}]\n",
		"Helm 4 schema":               "apiVersion: v1\nname: x\nversion: 1.0.0\n",
		"args need Helm 3.18":         "name: x\nversion: 1.0.0\nplatformCommand: [{command: x, args: [a]}]\n",
		"command and platformCommand": "name: x\nversion: 1.0.0\ncommand: x\nplatformCommand: [{command: x}]\n",
		"bad name":                    "name: x y\nversion: 1.0.0\nplatformCommand: [{command: x}]\n",
	}
	for name, content := range bad {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "plugin.yaml")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadHelmPlugin(path); err == nil {
				t.Errorf("accepted:\n%s", content)
			}
		})
	}
}
