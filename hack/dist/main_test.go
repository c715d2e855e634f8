package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestArchiveFiles: the Windows archive carries the .cmd completion helper
// (kubectl on Windows cannot run the sh one), the others the sh helper;
// every source file exists at the repository root; the .cmd runs the plugin's
// __complete with stderr dropped, in CRLF lines as cmd.exe expects.
func TestArchiveFiles(t *testing.T) {
	if err := os.Chdir("../.."); err != nil {
		t.Fatal(err)
	}
	for goos, want := range map[string]string{"windows": helperName + ".cmd", "linux": helperName, "darwin": helperName} {
		files := archiveFiles(goos, "built-binary")
		var names []string
		for _, f := range files[1:] {
			names = append(names, f.Name)
			if _, err := os.Stat(f.Src); err != nil {
				t.Errorf("%s: %v", goos, err)
			}
		}
		if files[0].Name != filepath.ToSlash(binDir)+map[bool]string{true: binName + ".exe", false: binName}[goos == "windows"] {
			t.Errorf("%s: binary at %s", goos, files[0].Name)
		}
		joined := strings.Join(names, " ")
		if !strings.Contains(" "+joined+" ", " "+want+" ") || (goos == "windows") == strings.Contains(" "+joined+" ", " "+helperName+" ") {
			t.Errorf("%s archive has %s, want the helper %s only", goos, joined, want)
		}
	}
	cmd, err := os.ReadFile(helperName + ".cmd")
	if err != nil {
		t.Fatal(err)
	}
	text := string(cmd)
	if strings.Count(text, "\n") != strings.Count(text, "\r\n") || !strings.Contains(text, "kubectl-gitops_preflight.exe\" __complete %* 2>NUL") {
		t.Errorf("%s.cmd: want CRLF lines running __complete with 2>NUL:\n%q", helperName, text)
	}
}

// TestHelmVersionIsTheTestedOne: the image carries the Helm client the
// end-to-end tests run.
func TestHelmVersionIsTheTestedOne(t *testing.T) {
	if HelmVersion != testcluster.HelmVersion {
		t.Errorf("hack/dist HelmVersion %s, testcluster.HelmVersion %s: keep them equal", HelmVersion, testcluster.HelmVersion)
	}
}
