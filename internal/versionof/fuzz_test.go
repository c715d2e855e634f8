package versionof

import (
	"bytes"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/version"
)

// FuzzHelmOutput feeds arbitrary `helm version --short` output to
// HelmOutput: never a panic; a version found is in the output as printed
// (after a v), and either parses or comes with semver's error.
func FuzzHelmOutput(f *testing.F) {
	for _, s := range []string{"v3.14.2+gc309b6f\n", "v4.0.1+g123\n", "Client: v2.16.1+gbbdfe5e\n", "", "v99999999999999999999.0.0", "version.BuildInfo{Version:\"v3.7.2\"}", "\x00\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		raw, v, err := HelmOutput(out)
		if errors.Is(err, ErrNoVersion) {
			return
		}
		if !bytes.Contains(out, []byte("v"+raw)) {
			t.Fatalf("HelmOutput(%q) = %q, not in the output", out, raw)
		}
		if (err == nil) == (v == nil) {
			t.Fatalf("HelmOutput(%q) = %q, %v, %v: want a version or an error", out, raw, v, err)
		}
	})
}

// FuzzServer parses arbitrary /version gitVersions (what kubectl version
// prints as the server's): never a panic, never nil without an error.
func FuzzServer(f *testing.F) {
	for _, s := range []string{"v1.29.3-eks-4f4795d", "v1.30.2+k3s1", "v1.23.0-alpha.1", "1.28", "", "v", "v1.2.3.4.5", "v18446744073709551616.0.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, git string) {
		v, err := Server(&version.Info{GitVersion: git})
		if err == nil && v == nil {
			t.Fatalf("Server(%q) = nil, nil", git)
		}
	})
}
