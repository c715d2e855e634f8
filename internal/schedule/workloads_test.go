package schedule

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterWorkloads: the Deployments and StatefulSets, hooks and Jobs
// left out, with their labels, pod labels and images.
func TestClusterWorkloads(t *testing.T) {
	tpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}}}
	pod := corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "quay.io/codefresh/x:1"}}}
	specs := []PodSpec{
		{Kind: "Deployment", Name: "web", Namespace: "cf", Spec: pod, Template: tpl, Deployment: &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"tier": "web"}}}},
		{Kind: "StatefulSet", Name: "redis", Spec: pod, StatefulSet: &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"tier": "db"}}}},
		{Kind: "Deployment", Name: "hooked", Hook: "pre-install", Deployment: &appsv1.Deployment{}},
		{Kind: "Job", Name: "validate-values", Spec: pod},
	}
	got := ClusterWorkloads(specs)
	if len(got) != 2 {
		t.Fatalf("ClusterWorkloads = %+v, want web and redis", got)
	}
	w := got[0]
	if w.Kind != "Deployment" || w.Namespace != "cf" || w.Name != "web" || w.Labels["tier"] != "web" || w.PodLabels["app"] != "x" ||
		len(w.Containers) != 1 || w.Containers[0].Image != "quay.io/codefresh/x:1" {
		t.Errorf("web = %+v", w)
	}
	if r := got[1]; r.Kind != "StatefulSet" || r.Name != "redis" || r.Labels["tier"] != "db" {
		t.Errorf("redis = %+v", r)
	}
	if ClusterWorkloads(nil) != nil {
		t.Error("no specs, yet workloads")
	}
}
