package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// controllerWorkload creates an ingress controller as its install leaves it:
// IngressClass class of spec.controller, a Deployment ns/name running image
// with args and podLabels, and a LoadBalancer Service ns/name selecting it.
// The scheduler, controllers and kwok run it once a node joins; only the
// LoadBalancer address is written by the test (setLoadBalancer): no cloud
// controller runs here.
func controllerWorkload(t *testing.T, c *testcluster.Cluster, class, controller, ns, name, image string, args []string, podLabels map[string]string) {
	t.Helper()
	if _, err := c.Kube.NetworkingV1().IngressClasses().Create(bg, &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: class}, Spec: networkingv1.IngressClassSpec{Controller: controller},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.CreateNamespace(t, ns)
	if _, err := c.Kube.AppsV1().Deployments(ns).Create(bg, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: podLabels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "controller", Image: image, Args: args}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Kube.CoreV1().Services(ns).Create(bg, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: podLabels,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "https", Port: 443}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// setIngressAddress sets (or clears) the runtime Ingress's status address,
// as a controller that reports status does.
func setIngressAddress(t *testing.T, c *testcluster.Cluster, ns, name string, ips ...string) {
	t.Helper()
	ing, err := c.Kube.NetworkingV1().Ingresses(ns).Get(bg, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ing.Status.LoadBalancer.Ingress = nil
	for _, ip := range ips {
		ing.Status.LoadBalancer.Ingress = append(ing.Status.LoadBalancer.Ingress, networkingv1.IngressLoadBalancerIngress{IP: ip})
	}
	if _, err := c.Kube.NetworkingV1().Ingresses(ns).UpdateStatus(bg, ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestIstioIngressClass: an Istio ingress class (istio.io/ingress-controller)
// served by the istio-ingressgateway, with an Istio Gateway and the
// documented VirtualService, before and after install.
func TestIstioIngressClass(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.Start(t)
	root := testcluster.RepoRoot(t)
	for _, f := range []string{"gateway-crd.yaml", "virtualservice-crd.yaml"} {
		c.Kubectl(t, "apply", "--server-side", "-f", filepath.Join(root, "testdata", "istio", f))
	}
	c.Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s", "crd/gateways.networking.istio.io", "crd/virtualservices.networking.istio.io")
	// The istio-ingressgateway as Istio's gateway chart renders it: proxyv2
	// running "proxy router", pods labelled istio=ingressgateway.
	controllerWorkload(t, c, "istio", "istio.io/ingress-controller", "istio-system", "istio-ingressgateway",
		"docker.io/istio/proxyv2:1.24.0", []string{"proxy", "router", "--domain", "$(POD_NAMESPACE).svc.cluster.local"},
		map[string]string{"app": "istio-ingressgateway", "istio": "ingressgateway"})
	const ns, host = "codefresh", "rt.example.com"
	c.CreateNamespace(t, ns)
	gw := filepath.Join(t.TempDir(), "gateway.yaml")
	writeFile(t, gw, `apiVersion: networking.istio.io/v1
kind: Gateway
metadata:
  name: internal-router
  namespace: istio-system
spec:
  selector:
    istio: ingressgateway
  servers:
  - port: {number: 80, name: http, protocol: HTTP}
    hosts: ["`+host+`"]
`)
	c.Kubectl(t, "apply", "-f", gw)

	pre := []string{"--access-mode", "ingress", "--ingress-host", host, "--ingress-class", "istio", "--skip-ingress-validation",
		"--only", "ingress-class,ingress-controller,ingress-external-address,ingress-report-status"}
	expectCodeReplayed(t, c, 1, map[string]string{"ingress-class": "pass", "ingress-controller": "fail"}, pre...)
	// A node joins: the scheduler binds the controller's pods, kwok runs them,
	// the Deployment controller reports it available.
	c.AddNode(t, testcluster.NodeSpec{Name: "node", CPU: "4", Memory: "16Gi"})
	waitAvailable(t, c, "istio-system", "istio-ingressgateway")
	expectCodeReplayed(t, c, 1, map[string]string{"ingress-controller": "pass", "ingress-external-address": "fail", "ingress-report-status": "skip"}, pre...)
	setLoadBalancer(t, c, "istio-system", "istio-ingressgateway", "127.0.0.7")
	expectCodeReplayed(t, c, 0, map[string]string{"ingress-class": "pass", "ingress-controller": "pass", "ingress-external-address": "pass", "ingress-report-status": "skip"}, pre...)

	// After install: the runtime Ingress of class istio; no VirtualService yet.
	runtimeIngress(t, c, ns, "codefresh-gitops-runtime", "istio", host)
	c.Kubectl(t, "create", "configmap", "codefresh-cm", "-n", ns, "--from-literal=ingressHost=https://"+host, "--from-literal=version=0.1.72")
	res, doc := post(t, c, "--only=istio-virtualservice")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1", res.Code)
	}
	wantStatus(t, doc, "istio-virtualservice", "fail", "no VirtualService in namespace codefresh for host rt.example.com", "/webhooks is not routed")
	applyVS(t, c, ns, "internal-router", host, map[string]string{
		"/webhooks": "internal-router:80", "/app-proxy": "internal-router:80", "/workflows": "internal-router:80"})
	res, doc = post(t, c, "--only=istio-virtualservice,runtime-ingress-status")
	wantStatus(t, doc, "istio-virtualservice", "pass", "VirtualService internal-router routes host rt.example.com")
	wantStatus(t, doc, "runtime-ingress-status", "fail", "class istio")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1 (runtime-ingress-status fails)", res.Code)
	}
	setIngressAddress(t, c, ns, "codefresh-gitops-runtime", "127.0.0.7")
	res, doc = post(t, c, "--only=istio-virtualservice,runtime-ingress-status")
	wantStatus(t, doc, "runtime-ingress-status", "pass", "127.0.0.7")
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0", res.Code)
	}
	// A misrouted path fails again, with the exit code.
	applyVS(t, c, ns, "internal-router", host, map[string]string{
		"/webhooks": "internal-router:80", "/app-proxy": "cap-app-proxy:3017", "/workflows": "internal-router:80"})
	res, doc = post(t, c, "--only=istio-virtualservice")
	wantStatus(t, doc, "istio-virtualservice", "fail", "/app-proxy goes to cap-app-proxy:3017 (want internal-router:80)")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1", res.Code)
	}
}

// TestAmbassadorIngress: Ambassador / Emissary-ingress
// (getambassador.io/ingress-controller), found by its image.
func TestAmbassadorIngress(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.Start(t)
	controllerWorkload(t, c, "ambassador", "getambassador.io/ingress-controller", "ambassador", "ambassador",
		"docker.io/emissaryingress/emissary:3.9.1", nil, map[string]string{"app.kubernetes.io/name": "emissary-ingress"})
	// A workload with another image does not serve the class.
	controllerWorkload(t, c, "decoy", "example.com/decoy", "decoy", "ambassador-like", "docker.io/library/nginx:1.27", nil, map[string]string{"app": "decoy"})
	const ns, host = "codefresh", "rt.example.com"
	c.CreateNamespace(t, ns)
	pre := []string{"--access-mode", "ingress", "--ingress-host", host, "--ingress-class", "ambassador", "--skip-ingress-validation",
		"--only", "ingress-class,ingress-controller,ingress-external-address,ingress-report-status"}
	expectCodeReplayed(t, c, 1, map[string]string{"ingress-class": "pass", "ingress-controller": "fail"}, pre...)
	// A node joins: the scheduler binds the controller's pods, kwok runs them,
	// the Deployment controller reports it available.
	c.AddNode(t, testcluster.NodeSpec{Name: "node", CPU: "4", Memory: "16Gi"})
	waitAvailable(t, c, "ambassador", "ambassador")
	expectCodeReplayed(t, c, 1, map[string]string{"ingress-controller": "pass", "ingress-external-address": "fail", "ingress-report-status": "skip"}, pre...)
	setLoadBalancer(t, c, "ambassador", "ambassador", "127.0.0.8")
	expectCodeReplayed(t, c, 0, map[string]string{"ingress-controller": "pass", "ingress-external-address": "pass"}, pre...)
	// The decoy class is not supported: a warn, not a failure.
	expectCodeReplayed(t, c, 0, map[string]string{"ingress-class": "warn"},
		"--access-mode", "ingress", "--ingress-host", host, "--ingress-class", "decoy", "--only", "ingress-class")

	// After install: the runtime Ingress of class ambassador, status not yet reported.
	runtimeIngress(t, c, ns, "codefresh-gitops-runtime", "ambassador", host)
	res, doc := post(t, c, "--only=runtime-ingress-status,istio-virtualservice")
	wantStatus(t, doc, "runtime-ingress-status", "fail", "Ingress codefresh/codefresh-gitops-runtime (class ambassador) has no address")
	wantStatus(t, doc, "istio-virtualservice", "skip", "is not Istio")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1", res.Code)
	}
	setIngressAddress(t, c, ns, "codefresh-gitops-runtime", "127.0.0.8")
	res, doc = post(t, c, "--only=runtime-ingress-status")
	wantStatus(t, doc, "runtime-ingress-status", "pass", "127.0.0.8")
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0", res.Code)
	}
}

// TestNginxIngressOperator: NGINX by F5 installed by the NGINX Ingress
// Operator (NginxIngressController, minimal CRD in testdata), with and
// without spec.reportIngressStatus.enable; the operator's resource decides,
// whatever the Deployment's args.
func TestNginxIngressOperator(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.Start(t)
	c.AddNode(t, testcluster.NodeSpec{Name: "node", CPU: "4", Memory: "16Gi"})
	c.Kubectl(t, "apply", "--server-side", "-f", filepath.Join(testcluster.RepoRoot(t), "testdata", "nginx-ingress-operator", "nginxingresscontroller-crd.yaml"))
	c.Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s", "crd/nginxingresscontrollers.k8s.nginx.org")
	// What the operator deploys for NginxIngressController my-nginx: the
	// NGINX Ingress Controller image, -ingress-class and its ConfigMap.
	controllerWorkload(t, c, "nginx", "nginx.org/ingress-controller", "nginx-operator", "my-nginx",
		"docker.io/nginx/nginx-ingress:3.7.0", []string{"-nginx-configmaps=nginx-operator/my-nginx", "-ingress-class=nginx"},
		map[string]string{"app": "my-nginx"})
	waitAvailable(t, c, "nginx-operator", "my-nginx") // scheduled by the scheduler, run by kwok
	setLoadBalancer(t, c, "nginx-operator", "my-nginx", "127.0.0.9")
	nic := filepath.Join(t.TempDir(), "nic.yaml")
	apply := func(enable string) {
		t.Helper()
		writeFile(t, nic, `apiVersion: k8s.nginx.org/v1alpha1
kind: NginxIngressController
metadata:
  name: my-nginx
  namespace: nginx-operator
spec:
  type: deployment
  image:
    repository: docker.io/nginx/nginx-ingress
    tag: 3.7.0
    pullPolicy: IfNotPresent
  serviceType: LoadBalancer
  ingressClass: nginx
`+enable)
		c.Kubectl(t, "apply", "--server-side", "--force-conflicts", "-f", nic)
	}
	pre := []string{"--access-mode", "ingress", "--ingress-host", "rt.example.com", "--ingress-class", "nginx", "--skip-ingress-validation",
		"--only", "ingress-class,ingress-controller,ingress-external-address,ingress-report-status"}

	// Without spec.reportIngressStatus: fail, the hint is the field to add.
	apply("")
	res, doc := c.RunJSONReplayed(t, nil, pre...)
	ch := wantStatus(t, doc, "ingress-report-status", "fail", "NginxIngressController nginx-operator/my-nginx does not enable spec.reportIngressStatus")
	if !strings.Contains(ch.Hint, "reportIngressStatus:\n    enable: true") || res.Code != 1 {
		t.Fatalf("hint %q, exit %d; want the reportIngressStatus snippet, exit 1", ch.Hint, res.Code)
	}
	for _, id := range []string{"ingress-class", "ingress-controller", "ingress-external-address"} {
		wantStatus(t, doc, id, "pass")
	}
	// enable: false is the same.
	apply("  reportIngressStatus:\n    enable: false\n")
	expectCodeReplayed(t, c, 1, map[string]string{"ingress-report-status": "fail"}, pre...)
	// enable: true passes, although the Deployment lacks -report-ingress-status.
	apply("  reportIngressStatus:\n    enable: true\n    externalService: my-nginx\n")
	res, doc = c.RunJSONReplayed(t, nil, pre...)
	wantStatus(t, doc, "ingress-report-status", "pass", "NginxIngressController nginx-operator/my-nginx has spec.reportIngressStatus.enable: true")
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0", res.Code)
	}
	// An operator resource of another class does not count: the Deployment's
	// args decide (no -report-ingress-status: fail).
	apply("  reportIngressStatus:\n    enable: true\n")
	c.Kubectl(t, "patch", "nginxingresscontroller", "-n", "nginx-operator", "my-nginx", "--type=merge", "-p", `{"spec":{"ingressClass":"other"}}`)
	res, doc = c.RunJSONReplayed(t, nil, pre...)
	wantStatus(t, doc, "ingress-report-status", "fail", "-report-ingress-status is not set")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1", res.Code)
	}
}
