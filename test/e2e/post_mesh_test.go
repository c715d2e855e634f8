package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestPostMeshAndRollouts covers istio-virtualservice (service-mesh mode
// inferred from codefresh-cm, then given by flag) and rollouts-controllers
// with the upstream Argo Rollouts install beside the runtime's own.
func TestPostMeshAndRollouts(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.Start(t)
	const ns = "codefresh"
	c.CreateNamespace(t, ns)
	// What the chart renders in service-mesh mode: codefresh-cm with the
	// runtime URL and version, and no Ingress.
	c.Kubectl(t, "create", "configmap", "codefresh-cm", "-n", ns,
		"--from-literal=ingressHost=https://rt.example.com", "--from-literal=version=0.1.72", "--from-literal=ingressClassName=nginx")

	// Istio is not installed: the check does not apply.
	_, doc := postReplayed(t, c, "--only=istio-virtualservice,runtime-ingress-status")
	wantStatus(t, doc, "istio-virtualservice", "skip", "VirtualService API is not served")
	wantStatus(t, doc, "runtime-ingress-status", "skip", "not in ingress mode (access mode service-mesh)")
	// Ingress mode asked for, but the chart rendered no Ingress.
	_, doc = postReplayed(t, c, "--only=runtime-ingress-status", "--ingress-host=rt.example.com")
	wantStatus(t, doc, "runtime-ingress-status", "fail", "no runtime Ingress (codefresh-gitops-runtime or ingress-master) in namespace codefresh")

	c.Kubectl(t, "apply", "--server-side", "-f", filepath.Join(testcluster.RepoRoot(t), "testdata", "istio", "virtualservice-crd.yaml"))
	c.Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s", "crd/virtualservices.networking.istio.io")

	res, doc := postReplayed(t, c, "--only=istio-virtualservice")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1", res.Code)
	}
	wantStatus(t, doc, "istio-virtualservice", "fail", "no VirtualService in namespace codefresh for host rt.example.com",
		"/webhooks is not routed (want internal-router:80)", "/app-proxy is not routed", "/workflows is not routed")

	// The documented VirtualService minus /workflows, and /app-proxy to the
	// pre-0.0.543 destination.
	applyVS(t, c, ns, "internal-router", "rt.example.com", map[string]string{
		"/webhooks": "internal-router:80", "/app-proxy": "cap-app-proxy:3017"})
	_, doc = postReplayed(t, c, "--only=istio-virtualservice")
	ch := wantStatus(t, doc, "istio-virtualservice", "fail", "VirtualService internal-router for host rt.example.com (runtime 0.1.72)",
		"/app-proxy goes to cap-app-proxy:3017 (want internal-router:80)", "/workflows is not routed")
	if strings.Contains(ch.Message, "/webhooks") {
		t.Fatalf("/webhooks is routed, yet reported: %s", ch.Message)
	}
	// A VirtualService for another host does not count.
	applyVS(t, c, ns, "other", "other.example.com", map[string]string{"/workflows": "internal-router:80"})
	_, doc = postReplayed(t, c, "--only=istio-virtualservice")
	wantStatus(t, doc, "istio-virtualservice", "fail", "/workflows is not routed")

	applyVS(t, c, ns, "internal-router", "rt.example.com", map[string]string{
		"/webhooks": "internal-router:80", "/app-proxy": "internal-router:80", "/workflows": "internal-router:80"})
	res, doc = postReplayed(t, c, "--only=istio-virtualservice")
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0", res.Code)
	}
	wantStatus(t, doc, "istio-virtualservice", "pass", "VirtualService internal-router routes host rt.example.com")
	// The flags name another host: its routes are missing.
	_, doc = postReplayed(t, c, "--only=istio-virtualservice", "--access-mode=service-mesh", "--ingress-url=https://mesh.example.com")
	wantStatus(t, doc, "istio-virtualservice", "fail", "for host mesh.example.com")

	// Rollouts: the upstream install alone is one controller.
	c.CreateNamespace(t, "argo-rollouts")
	c.Kubectl(t, "apply", "--server-side", "-n", "argo-rollouts", "-f", upstream(t, "argo-rollouts/install.yaml"))
	_, doc = postReplayed(t, c, "--only=rollouts-controllers")
	wantStatus(t, doc, "rollouts-controllers", "pass", "one Argo Rollouts controller: argo-rollouts/argo-rollouts")
	// The runtime's controller makes two: the community one is to delete.
	labels := map[string]string{"app.kubernetes.io/name": "argo-rollouts"}
	_, err := c.Kube.AppsV1().Deployments(ns).Create(bg, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "argo-rollouts", Annotations: map[string]string{"meta.helm.sh/release-name": "cf-gitops-runtime"}},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "argo-rollouts", Image: "quay.io/codefresh/argo-rollouts:v1.7.2-cap-OSS-697"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, doc = postReplayed(t, c, "--only=rollouts-controllers")
	if res.Code != 0 {
		t.Fatalf("a warning exits %d, want 0", res.Code)
	}
	wantStatus(t, doc, "rollouts-controllers", "warn", "2 Argo Rollouts controllers: the runtime's codefresh/argo-rollouts and argo-rollouts/argo-rollouts",
		"kubectl delete deployment argo-rollouts -n argo-rollouts", "never the CRDs")
	if res, _ := postReplayed(t, c, "--only=rollouts-controllers", "--fail-on=warn"); res.Code != 1 {
		t.Fatalf("--fail-on=warn: exit %d, want 1", res.Code)
	}
}
