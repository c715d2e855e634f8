package checks

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestRuntimeNamespace(t *testing.T) {
	ns := func(name string, phase corev1.NamespacePhase) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}}
	}
	tests := []struct {
		name    string
		input   string
		objs    []runtime.Object
		want    Status
		wantMsg string
	}{
		{"absent", "codefresh", nil, StatusPass, "does not exist yet"},
		{"active and empty", "codefresh", []runtime.Object{ns("codefresh", corev1.NamespaceActive)}, StatusPass, "is Active"},
		{"terminating", "codefresh", []runtime.Object{ns("codefresh", corev1.NamespaceTerminating)}, StatusFail, "Terminating"},
		{"invalid", "Code_Fresh", nil, StatusFail, "not a valid DNS-1123 label"},
		{"too long", strings.Repeat("a", 64), nil, StatusFail, "not a valid DNS-1123 label"},
		{"foreign workload", "codefresh", []runtime.Object{ns("codefresh", corev1.NamespaceActive), deployment("codefresh", "redis", nil)}, StatusWarn, "Deployment/redis"},
		{"own release workload", "codefresh", []runtime.Object{ns("codefresh", corev1.NamespaceActive),
			deployment("codefresh", "cap-app-proxy", map[string]string{"meta.helm.sh/release-name": DefaultReleaseName})}, StatusPass, "is Active"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _ := fakeEnv(t, "v1.30.0", tt.objs...)
			env.Inputs.Namespace = tt.input
			got := runThrough(t, RuntimeNamespace(), env)
			if got.Status != tt.want || !strings.Contains(got.Message, tt.wantMsg) {
				t.Fatalf("runtime-namespace = %s %q; want %s containing %q", got.Status, got.Message, tt.want, tt.wantMsg)
			}
		})
	}
}
