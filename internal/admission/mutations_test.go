package admission

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestPodChanges: what admission changed, in a few words; defaulting (a
// request from its limit, an empty pod securityContext) is not a change.
func TestPodChanges(t *testing.T) {
	sent := podOfYAML(t, `
metadata: {labels: {app: a}}
spec:
  containers:
  - name: main
    image: a:1
    resources: {limits: {cpu: 500m}}
`)
	got := podOfYAML(t, `
metadata:
  labels: {app: a, team: x}
  annotations: {kubernetes.io/limit-ranger: "LimitRanger plugin set: memory request for container main"}
spec:
  securityContext: {}
  initContainers:
  - {name: proxy, image: p, restartPolicy: Always}
  containers:
  - name: main
    image: mirror/a:1
    resources: {limits: {cpu: 500m}, requests: {cpu: 500m, memory: 64Mi}}
    securityContext: {runAsNonRoot: true}
`)
	changes, resources := PodChanges(sent, got)
	want := "added native sidecar proxy | requests.memory set to 64Mi of main | image of main a:1 → mirror/a:1 | securityContext of main (runAsNonRoot) | labels team added | annotations kubernetes.io/limit-ranger added"
	if strings.Join(changes, " | ") != want || !resources {
		t.Errorf("changes %q (resources %v), want %q", strings.Join(changes, " | "), resources, want)
	}
	if c, r := PodChanges(sent, sent); len(c) != 0 || r {
		t.Errorf("a pod unchanged: %v %v", c, r)
	}
}

// podOfYAML reads a pod written as YAML.
func podOfYAML(t *testing.T, doc string) *corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict([]byte(doc), &pod); err != nil {
		t.Fatal(err)
	}
	return &pod
}

// TestMetadataChanges: labels and annotations added, changed and removed,
// keys only (a value may be a secret's); none when nothing changed.
func TestMetadataChanges(t *testing.T) {
	got := MetadataChanges(map[string]string{"app": "a", "tier": "web"}, map[string]string{"app": "b", "team": "platform"},
		map[string]string{"note": "x"}, map[string]string{"note": "x", "token": "s3cr3t"})
	want := []string{"labels app changed, team added, tier removed", "annotations token added"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("MetadataChanges = %q, want %q", got, want)
	}
	if got := MetadataChanges(map[string]string{"a": "1"}, map[string]string{"a": "1"}, nil, map[string]string{}); len(got) != 0 {
		t.Errorf("nothing changed, got %q", got)
	}
	if strings.Contains(strings.Join(got, " "), "s3cr3t") {
		t.Error("a value is printed")
	}
}
