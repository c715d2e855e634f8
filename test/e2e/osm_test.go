package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestOSMIngress runs osm-ingress through the built binary against the real
// API server for both Open Service Mesh generations, with the upstream
// ingress-nginx (cloud) manifest as the ingress controller:
//   - v0.8: an osm-controller Deployment and the osm-config ConfigMap (as
//     OSM v0.8's chart renders them); HTTP ingress passes, HTTPS ingress needs
//     the guide's annotations (values before install, the runtime Ingress
//     after) and osm-ca-bundle;
//   - v0.10+: OSM's real IngressBackend CRD (testdata/osm): no IngressBackend
//     warns before install and fails with --post; the hint's YAML, applied as
//     it is, makes both pass.
func TestOSMIngress(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.Start(t)
	c.AddNode(t, testcluster.NodeSpec{Name: "node", CPU: "4", Memory: "16Gi"})
	applyUpstream(t, c, "ingress-nginx/cloud.yaml")
	const ns = "codefresh"
	c.CreateNamespace(t, ns)
	pre := []string{"--only", "osm-ingress", "--access-mode", "ingress", "--ingress-host", "rt.example.com", "--ingress-class", "nginx"}
	run := func(args ...string) (testcluster.Result, *checkDoc) {
		t.Helper()
		res, doc := c.RunJSONReplayed(t, nil, args...)
		ch := testcluster.Check(t, doc, "osm-ingress")
		return res, &checkDoc{Status: ch.Status, Message: ch.Message, Hint: ch.Hint}
	}
	want := func(res testcluster.Result, ch *checkDoc, code int, status string, text ...string) {
		t.Helper()
		if ch.Status != status || res.Code != code {
			t.Fatalf("osm-ingress = %s (%s; hint %q), exit %d; want %s, exit %d\nstderr: %s", ch.Status, ch.Message, ch.Hint, res.Code, status, code, res.Stderr)
		}
		for _, s := range text {
			if !strings.Contains(ch.Message, s) && !strings.Contains(ch.Hint, s) {
				t.Fatalf("osm-ingress message %q / hint %q lacks %q", ch.Message, ch.Hint, s)
			}
		}
	}

	res, ch := run(pre...)
	want(res, ch, 0, "skip", "Open Service Mesh is not installed")

	// --- OSM v0.8: controller and osm-config in osm-system.
	c.CreateNamespace(t, "osm-system")
	labels := map[string]string{"app": "osm-controller"}
	if _, err := c.Kube.AppsV1().Deployments("osm-system").Create(bg, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "osm-system", Name: "osm-controller", Labels: labels},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "osm-controller", Image: "openservicemesh/osm-controller:v0.8.0"}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Kubectl(t, "create", "configmap", "osm-config", "-n", "osm-system",
		"--from-literal=use_https_ingress=false", "--from-literal=permissive_traffic_policy_mode=false")
	res, ch = run(pre...)
	want(res, ch, 0, "skip", "namespace codefresh is not monitored by Open Service Mesh")
	c.Kubectl(t, "label", "namespace", ns, "openservicemesh.io/monitored-by=osm")
	res, ch = run(pre...)
	want(res, ch, 0, "pass", "OSM v0.8 (osm-system/osm-config)", "admits HTTP ingress")

	c.Kubectl(t, "patch", "configmap", "osm-config", "-n", "osm-system", "--type=merge", "-p", `{"data":{"use_https_ingress":"true"}}`)
	res, ch = run(pre...)
	want(res, ch, 0, "warn", "nginx.ingress.kubernetes.io/backend-protocol is missing", "Secret osm-system/osm-ca-bundle does not exist")
	// The hint's values, as they are, plus the CA bundle OSM's Tresor creates.
	valuesYAML := hintBody(t, ch.Hint)
	values := filepath.Join(t.TempDir(), "values.yaml")
	writeFile(t, values, valuesYAML)
	c.Kubectl(t, "create", "secret", "generic", "osm-ca-bundle", "-n", "osm-system", "--from-literal=ca.crt=not-a-real-ca")
	res, ch = run(append(pre, "-f", values)...)
	want(res, ch, 0, "pass", "global.runtime.ingress.annotations carries the HTTPS backend annotations")

	// After install: the runtime Ingress without the annotations fails.
	runtimeIngress(t, c, ns, "codefresh-gitops-runtime", "nginx", "rt.example.com")
	res, ch = run("--post", "--only=osm-ingress")
	want(res, ch, 1, "fail", "Ingress codefresh-gitops-runtime", "proxy-ssl-verify is missing")
	var v struct {
		Global struct {
			Runtime struct {
				Ingress struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"ingress"`
			} `json:"runtime"`
		} `json:"global"`
	}
	if err := yaml.Unmarshal([]byte(valuesYAML), &v); err != nil {
		t.Fatal(err)
	}
	annotate := []string{"annotate", "ingress", "-n", ns, "codefresh-gitops-runtime", "--overwrite"}
	for k, val := range v.Global.Runtime.Ingress.Annotations {
		annotate = append(annotate, k+"="+val)
	}
	c.Kubectl(t, annotate...)
	res, ch = run("--post", "--only=osm-ingress")
	want(res, ch, 0, "pass", "Ingress codefresh-gitops-runtime carries the HTTPS backend annotations")

	// --- OSM v0.10+: the IngressBackend API (OSM's CRD) replaces osm-config.
	c.Kubectl(t, "delete", "configmap", "osm-config", "-n", "osm-system")
	for _, f := range []string{"ingressbackend-crd.yaml", "meshconfig-crd.yaml"} {
		c.Kubectl(t, "apply", "--server-side", "-f", filepath.Join(testcluster.RepoRoot(t), "testdata", "osm", f))
	}
	c.Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/ingressbackends.policy.openservicemesh.io", "crd/meshconfigs.config.openservicemesh.io")

	res, ch = run(pre...)
	want(res, ch, 0, "warn", "namespace codefresh is in OSM mesh osm", "no IngressBackend admits the ingress controller's Service ingress-nginx/ingress-nginx-controller to internal-router:8080",
		"create it after install", "kind: IngressBackend")
	ibYAML := hintBody(t, ch.Hint)
	res, ch = run("--post", "--only=osm-ingress")
	want(res, ch, 1, "fail", "no IngressBackend admits the ingress controller's Service ingress-nginx/ingress-nginx-controller")

	// The Service port instead of the target port admits nothing in OSM.
	port80 := filepath.Join(t.TempDir(), "ib80.yaml")
	writeFile(t, port80, strings.Replace(ibYAML, "number: 8080", "number: 80", 1))
	c.Kubectl(t, "apply", "-f", port80)
	res, ch = run("--post", "--only=osm-ingress")
	want(res, ch, 1, "fail", "IngressBackend internal-router has backend internal-router port 80, but OSM matches the target port 8080")

	// The hint's IngressBackend, applied as it is.
	ib := filepath.Join(t.TempDir(), "ib.yaml")
	writeFile(t, ib, ibYAML)
	c.Kubectl(t, "apply", "-f", ib)
	res, ch = run("--post", "--only=osm-ingress")
	want(res, ch, 0, "pass", "IngressBackend internal-router admits Service ingress-nginx/ingress-nginx-controller to internal-router:8080 over http")
	res, ch = run(pre...)
	want(res, ch, 0, "pass", "IngressBackend internal-router admits")

	// Another source only: fails again.
	c.Kubectl(t, "patch", "ingressbackend", "-n", ns, "internal-router", "--type=json",
		"-p", `[{"op":"replace","path":"/spec/sources/0/name","value":"other-gateway"}]`)
	res, ch = run("--post", "--only=osm-ingress")
	want(res, ch, 1, "fail", "admits Service ingress-nginx/other-gateway, not the ingress controller's Service ingress-nginx/ingress-nginx-controller")
}

// checkDoc is the part of a check's JSON the OSM test reads.
type checkDoc struct {
	Status, Message, Hint string
}

// hintBody is the object a hint prints after its first line.
func hintBody(t *testing.T, hint string) string {
	t.Helper()
	_, body, ok := strings.Cut(hint, "\n")
	if !ok || strings.TrimSpace(body) == "" {
		t.Fatalf("hint has no object after its first line: %q", hint)
	}
	return body
}
