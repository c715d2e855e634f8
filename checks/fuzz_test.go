package checks

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/version"
)

// FuzzHelmVersionOutput feeds arbitrary `helm version --short` output to
// helm-version: never a panic, always a status (or an error, reported as
// `error`).
func FuzzHelmVersionOutput(f *testing.F) {
	for _, s := range []string{"v3.14.2+gc309b6f\n", "v4.0.1+g123\n", "Client: v2.16.1+gbbdfe5e\n", "", "v99999999999999999999.0.0", "version.BuildInfo{Version:\"v3.7.2\"}", "\x00\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		env := &Env{Host: Host{
			Getenv:  func(k string) string { return map[string]string{"HELM_BIN": "/opt/helm"}[k] },
			Command: func(context.Context, string, ...string) ([]byte, error) { return out, nil },
		}}
		env.withDefaults()
		r, err := HelmVersion().Run(context.Background(), env)
		if err == nil && r.Status != StatusPass && r.Status != StatusFail && r.Status != StatusWarn {
			t.Fatalf("status %q for %q", r.Status, out)
		}
	})
}

// FuzzServerSemver parses arbitrary /version gitVersions (what kubectl
// version prints as the server's): never a panic; a parsed version keeps the
// major and minor it was given.
func FuzzServerSemver(f *testing.F) {
	for _, s := range []string{"v1.29.3-eks-4f4795d", "v1.30.2+k3s1", "v1.23.0-alpha.1", "1.28", "", "v", "v1.2.3.4.5", "v18446744073709551616.0.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, git string) {
		v, err := ServerSemver(&version.Info{GitVersion: git})
		if err == nil && v == nil {
			t.Fatalf("ServerSemver(%q) = nil, nil", git)
		}
	})
}
