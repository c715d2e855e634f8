package checks

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/version"
)

func TestServerSemver(t *testing.T) {
	tests := []struct {
		info version.Info
		want string
	}{
		{version.Info{GitVersion: "v1.29.3-eks-4f4795d"}, "1.29.3"},
		{version.Info{GitVersion: "v1.28.5-gke.1217000"}, "1.28.5"},
		{version.Info{GitVersion: "v1.30.2+k3s1"}, "1.30.2"},
		{version.Info{GitVersion: "v1.27.6+f67aeb3"}, "1.27.6"},
		{version.Info{GitVersion: "v1.22.17"}, "1.22.17"},
		{version.Info{GitVersion: "v1.23.0-alpha.1"}, "1.23.0"},
		{version.Info{GitVersion: "weird", Major: "1", Minor: "26+"}, "1.26.0"},
	}
	for _, tt := range tests {
		got, err := ServerSemver(&tt.info)
		if err != nil || got.String() != tt.want {
			t.Errorf("ServerSemver(%q) = %v, %v; want %s", tt.info.GitVersion, got, err, tt.want)
		}
	}
	if _, err := ServerSemver(&version.Info{GitVersion: "weird", Major: "x"}); err == nil {
		t.Error("ServerSemver(unparseable) = nil error")
	}
}

func TestKubernetesVersion(t *testing.T) {
	tests := []struct {
		git  string
		want Status
	}{
		{"v1.29.3-eks-4f4795d", StatusPass},
		// Above the docs' minimum, below the default chart's Argo CD
		// subchart's kubeVersion (TestKubernetesVersionFromTheChart).
		{"v1.23.0", StatusWarn},
		{"v1.22.17-gke.100", StatusFail},
		{"v1.18.0", StatusFail},
	}
	for _, tt := range tests {
		env, _ := fakeEnv(t, tt.git)
		got := runThrough(t, KubernetesVersion(), env)
		if got.Status != tt.want || !strings.Contains(got.Message, tt.git) {
			t.Errorf("kubernetes-version(%s) = %s %q; want %s naming the version", tt.git, got.Status, got.Message, tt.want)
		}
	}
}
