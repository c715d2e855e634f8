package admission

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// restrictedPod meets the restricted Pod Security Standard.
func restrictedPod() *corev1.Pod {
	no, yes := false, true
	return &corev1.Pod{Spec: corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		Containers: []corev1.Container{{Name: "c", Image: "i", SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no,
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
	}}
}

// TestStrictestLevel: the strictest standard every pod meets.
func TestStrictestLevel(t *testing.T) {
	plain := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	privileged := plain.DeepCopy()
	privileged.Spec.HostNetwork = true
	for _, tc := range []struct {
		pods []*corev1.Pod
		want string
	}{
		{[]*corev1.Pod{restrictedPod(), nil}, "restricted"},
		{[]*corev1.Pod{restrictedPod(), plain}, "baseline"},
		{[]*corev1.Pod{plain, privileged}, "privileged"},
	} {
		if got, err := StrictestLevel(tc.pods); err != nil || got != tc.want {
			t.Errorf("StrictestLevel = %q, %v; want %q", got, err, tc.want)
		}
	}
}

// TestEvaluateLocally: the namespace's enforce label refuses as the API
// server would (its message parsed), its warn label warns; no label is
// privileged.
func TestEvaluateLocally(t *testing.T) {
	plain := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	plain.GenerateName = "operator-"
	r, warnings, err := EvaluateLocally(plain, NamespacePolicy(map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}))
	if err != nil || r == nil || r.Layer != LayerPodSecurity || r.Policy != "restricted:latest" || !strings.Contains(r.Detail, "allowPrivilegeEscalation") || len(warnings) != 0 {
		t.Errorf("enforce restricted: %+v, %v, %v", r, warnings, err)
	}
	r, warnings, err = EvaluateLocally(plain, NamespacePolicy(map[string]string{"pod-security.kubernetes.io/warn": "restricted"}))
	if err != nil || r != nil || len(warnings) != 1 || !strings.HasPrefix(warnings[0], `would violate PodSecurity "restricted:latest": `) {
		t.Errorf("warn restricted: %+v, %v, %v", r, warnings, err)
	}
	if r, warnings, err := EvaluateLocally(plain, NamespacePolicy(nil)); r != nil || len(warnings) != 0 || err != nil {
		t.Errorf("no label: %+v, %v, %v", r, warnings, err)
	}
}
