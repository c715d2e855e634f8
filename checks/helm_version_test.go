package checks

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestHelmVersion(t *testing.T) {
	tests := []struct {
		name     string
		helmBin  string
		onPath   bool
		output   string
		cmdErr   error
		want     Status
		wantText string
	}{
		{"HELM_BIN new", "/opt/helm", false, "v3.14.2+gc309b6f\n", nil, StatusPass, "v3.14.2"},
		{"PATH helm 4", "", true, "v4.0.1+g123\n", nil, StatusPass, "v4.0.1"},
		{"old helm", "", true, "v3.7.2+g663a896\n", nil, StatusFail, "older than 3.11.0"},
		// The docs' 3.8.0 is below the chart README's 3.11.0.
		{"docs minimum", "", true, "v3.10.3+g8a6b2f4\n", nil, StatusFail, `older than 3.11.0 (the gitops-runtime chart's README, "Prerequisites": Helm 3.11.0+`},
		{"helm 2", "", true, "Client: v2.16.1+gbbdfe5e\n", nil, StatusFail, "older than 3.11.0"},
		// Every form Helm 3 and 4 print: from source without ldflags (no
		// patch), releases (+g<commit>), pre-releases, the long form.
		{"helm 4 from source", "/opt/helm", false, "v4.3\n", nil, StatusPass, "helm v4.3 ("},
		{"helm 3 from source", "", true, "v3.22\n", nil, StatusPass, "helm v3.22 ("},
		{"helm 4 release", "", true, "v4.3.1+g5b7d2a1\n", nil, StatusPass, "helm v4.3.1+g5b7d2a1 ("},
		{"helm 3 release", "", true, "v3.22.0+gabc\n", nil, StatusPass, "helm v3.22.0+gabc ("},
		{"helm 4 rc", "", true, "v4.0.0-rc.1+gabc\n", nil, StatusPass, "v4.0.0-rc.1"},
		{"minimum", "", true, "v3.11.0+g472c573\n", nil, StatusPass, "v3.11.0"},
		{"minimum from source", "", true, "v3.11\n", nil, StatusPass, "v3.11 ("},
		{"old from source", "", true, "v3.7\n", nil, StatusFail, "v3.7 (/usr/local/bin/helm) is older than 3.11.0"},
		{"3.11 pre-release", "", true, "v3.11.0-rc.1\n", nil, StatusFail, "older than 3.11.0"},
		{"warning first", "", true, "WARNING: Kubernetes configuration file is group-readable\nv3.22.0+gabc\n", nil, StatusPass, "v3.22.0"},
		{"long form", "", true, `version.BuildInfo{Version:"v4.3.1", GitCommit:"", GitTreeState:"clean"}` + "\n", nil, StatusPass, "v4.3.1"},
		{"absent", "", false, "", nil, StatusWarn, "no helm client"},
		{"broken", "", true, "", errors.New("exec format error"), StatusFail, "did not report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _ := fakeEnv(t, "v1.30.0")
			env.Getenv = func(k string) string {
				if k == "HELM_BIN" {
					return tt.helmBin
				}
				return ""
			}
			env.LookPath = func(string) (string, error) {
				if tt.onPath {
					return "/usr/local/bin/helm", nil
				}
				return "", errors.New("not found")
			}
			var ranWith string
			env.Command = func(_ context.Context, name string, args ...string) ([]byte, error) {
				ranWith = name + " " + strings.Join(args, " ")
				return []byte(tt.output), tt.cmdErr
			}
			got := runThrough(t, HelmVersion(), env)
			if got.Status != tt.want || !strings.Contains(got.Message, tt.wantText) {
				t.Fatalf("helm-version = %s %q; want %s containing %q", got.Status, got.Message, tt.want, tt.wantText)
			}
			if tt.helmBin != "" && !strings.HasPrefix(ranWith, tt.helmBin+" ") {
				t.Errorf("ran %q, want $HELM_BIN %s", ranWith, tt.helmBin)
			}
		})
	}
}

// TestHelmVersionUnreadable: output without a version is an error (the check
// ends in "error", exit 1), never a guess.
func TestHelmVersionUnreadable(t *testing.T) {
	for _, out := range []string{"", "helm\n", "3.22.0\n", "Error: unknown flag: --short\n"} {
		env, _ := fakeEnv(t, "v1.30.0")
		env.Getenv = func(string) string { return "/opt/helm" }
		env.Command = func(context.Context, string, ...string) ([]byte, error) { return []byte(out), nil }
		got, err := runHelmVersion(t.Context(), env)
		if err == nil || !strings.Contains(err.Error(), "cannot find a version") {
			t.Errorf("output %q: got %s %q, %v; want the error \"cannot find a version\"", out, got.Status, got.Message, err)
		}
	}
}
