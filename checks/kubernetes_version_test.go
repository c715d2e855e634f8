package checks

import (
	"strings"
	"testing"
)

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
