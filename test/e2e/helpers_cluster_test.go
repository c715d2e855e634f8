package e2e

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1 "k8s.io/api/networking/v1"

	corev1 "k8s.io/api/core/v1"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"helm.sh/helm/v3/pkg/chart"
	rspb "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"
)

var webhookDoc = regexp.MustCompile(`(?m)^kind: (Validating|Mutating)WebhookConfiguration`)

// applyUpstream applies an upstream manifest without its admission webhook
// configurations (their Services have no pods on a bare apiserver, so they
// would block later creates), CRDs first: a failed first pass (custom
// resources before their CRD is Established) is retried once the CRDs are.
func applyUpstream(t *testing.T, c *testcluster.Cluster, rel string, extra ...string) {
	t.Helper()
	data, err := os.ReadFile(upstream(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, doc := range strings.Split(string(data), "\n---") {
		if !webhookDoc.MatchString(doc) {
			keep = append(keep, doc)
		}
	}
	f := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(f, []byte(strings.Join(keep, "\n---")), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--kubeconfig", c.AdminKubeconfig(), "apply", "--server-side", "--force-conflicts", "-f", f}, extra...)
	if out, err := exec.Command("kubectl", args...).CombinedOutput(); err != nil {
		c.Kubectl(t, "wait", "--for", "condition=established", "--timeout=60s", "crd", "--all")
		if out2, err2 := exec.Command("kubectl", args...).CombinedOutput(); err2 != nil {
			t.Fatalf("applying %s: %v\n%s\n%s", rel, err2, out, out2)
		}
	}
}

// setLoadBalancer sets (or, with no addresses, clears) a Service's
// status.loadBalancer.ingress as a cloud controller would.
func setLoadBalancer(t *testing.T, c *testcluster.Cluster, ns, name string, ips ...string) {
	t.Helper()
	ctx := context.Background()
	s, err := c.Kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Status.LoadBalancer.Ingress = nil
	for _, ip := range ips {
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	if _, err := c.Kube.CoreV1().Services(ns).UpdateStatus(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func testDeployment(ns, name string, replicas int32, cpu, fault string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	podLabels := map[string]string{"app": name}
	if fault != "" {
		podLabels[testcluster.FaultLabel] = fault
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "quay.io/codefresh/" + name + ":1.0",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
			},
		},
	}
}

func waitingReason(t *testing.T, c *testcluster.Cluster, ns, selector string) string {
	t.Helper()
	pods, err := c.Kube.CoreV1().Pods(ns).List(bg, metav1.ListOptions{LabelSelector: selector})
	if err != nil || len(pods.Items) == 0 || len(pods.Items[0].Status.ContainerStatuses) == 0 {
		return ""
	}
	if w := pods.Items[0].Status.ContainerStatuses[0].State.Waiting; w != nil {
		return w.Reason
	}
	return ""
}

// waitFor polls cond every 100 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	waitEvery(t, timeout, 100*time.Millisecond, what, cond)
}

// waitEvery is waitFor asking cond every interval: an Argo CD Application
// is a large object (its status lists every resource and the last sync's
// result), read once a second (argoPoll) rather than ten times.
func waitEvery(t *testing.T, timeout, interval time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(interval)
	}
}

// waitAvailable waits (up to 60 s) until the Deployment's rollout is complete
// and every replica available, as the controllers and kwok make it.
func waitAvailable(t *testing.T, c *testcluster.Cluster, ns, name string) {
	t.Helper()
	waitFor(t, 60*time.Second, "deployment "+ns+"/"+name+" available", func() bool {
		d, err := c.Kube.AppsV1().Deployments(ns).Get(bg, name, metav1.GetOptions{})
		if err != nil || d.Spec.Replicas == nil {
			return false
		}
		want := *d.Spec.Replicas
		return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == want &&
			d.Status.AvailableReplicas == want && d.Status.Replicas == want
	})
}

// plantedFleetToken is the value of the Secret plantFleetSecret writes.
const plantedFleetToken = "planted-fleet-token-7c2e"

// plantFleetSecret writes a codefresh-token Secret holding
// plantedFleetToken in c's runtime namespace.
func plantFleetSecret(t *testing.T, c *testcluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "codefresh"}}
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "codefresh-token", Namespace: "codefresh"}, Data: map[string][]byte{"token": []byte(plantedFleetToken)}}
	if _, err := c.Kube.CoreV1().Secrets("codefresh").Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// goodAndBrokenKubeconfig writes a kubeconfig whose current context
// ("broken") is unreachable and whose "good" context is the test cluster.
func goodAndBrokenKubeconfig(t *testing.T, c *testcluster.Cluster) string {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "config")
	cfg, err := clientcmd.LoadFromFile(c.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	admin := cfg.Contexts[cfg.CurrentContext]
	cfg.Contexts = map[string]*clientcmdapi.Context{"good": admin}
	cfg.Clusters["broken"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	cfg.Contexts["broken"] = &clientcmdapi.Context{Cluster: "broken", AuthInfo: admin.AuthInfo}
	cfg.CurrentContext = "broken"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

var bg = context.Background()

// writeRelease stores a Helm release revision with Helm's own Secrets driver.
func writeRelease(t *testing.T, c *testcluster.Cluster, ns, name string, version int, status rspb.Status, desc string) {
	t.Helper()
	d := driver.NewSecrets(c.Kube.CoreV1().Secrets(ns))
	rls := &rspb.Release{
		Name: name, Namespace: ns, Version: version,
		Info:  &rspb.Info{Status: status, Description: desc},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "gitops-runtime", Version: "0.30.0", AppVersion: "0.1.72"}},
	}
	key := "sh.helm.release.v1." + name + ".v" + strconv.Itoa(version)
	if err := d.Create(key, rls); err != nil {
		t.Fatalf("writing release %s: %v", key, err)
	}
}

// deployment creates a Deployment of the release with the given replicas and
// sets status.availableReplicas, as the controller would.
func deployment(t *testing.T, c *testcluster.Cluster, ns, name string, replicas, available int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels,
			Annotations: map[string]string{"meta.helm.sh/release-name": "cf-gitops-runtime", "meta.helm.sh/release-namespace": ns}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "quay.io/codefresh/" + name + ":1.0"}}},
			},
		},
	}
	created, err := c.Kube.AppsV1().Deployments(ns).Create(bg, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating deployment %s: %v", name, err)
	}
	setDeploymentStatus(t, c, created, available)
}

func setDeploymentStatus(t *testing.T, c *testcluster.Cluster, d *appsv1.Deployment, available int32) {
	t.Helper()
	// The Deployment controller writes the status too: on a conflict, read
	// the object again and write the wanted status over the controller's.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d.Status = appsv1.DeploymentStatus{Replicas: *d.Spec.Replicas, ReadyReplicas: available, AvailableReplicas: available, UpdatedReplicas: *d.Spec.Replicas,
			UnavailableReplicas: *d.Spec.Replicas - available, ObservedGeneration: d.Generation}
		_, err := c.Kube.AppsV1().Deployments(d.Namespace).UpdateStatus(bg, d, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			if fresh, gerr := c.Kube.AppsV1().Deployments(d.Namespace).Get(bg, d.Name, metav1.GetOptions{}); gerr == nil {
				d = fresh
			}
		}
		return err
	})
	if err != nil {
		t.Fatalf("setting status of deployment %s: %v", d.Name, err)
	}
}

// pod creates a pod with labels and sets its status (container statuses and
// conditions), as the kubelet and scheduler would.
func pod(t *testing.T, c *testcluster.Cluster, ns, name string, labels map[string]string, status corev1.PodStatus) {
	t.Helper()
	podWith(t, c, ns, name, "main", "", labels, status)
}

// podWith is pod with a named container, bound to node (when not "").
func podWith(t *testing.T, c *testcluster.Cluster, ns, name, container, node string, labels map[string]string, status corev1.PodStatus) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: container, Image: "quay.io/codefresh/x:1"}}},
	}
	created, err := c.Kube.CoreV1().Pods(ns).Create(bg, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	created.Status = status
	if _, err := c.Kube.CoreV1().Pods(ns).UpdateStatus(bg, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("setting status of pod %s: %v", name, err)
	}
}

// warningEvent records a Warning event about an object.
func warningEvent(t *testing.T, c *testcluster.Cluster, ns, kind, name, reason, msg string) {
	t.Helper()
	now := metav1.NewTime(time.Now())
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: ns, GenerateName: name + "."},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: ns, Name: name, APIVersion: "v1"},
		Type:           corev1.EventTypeWarning, Reason: reason, Message: msg, Count: 3,
		FirstTimestamp: now, LastTimestamp: now, Source: corev1.EventSource{Component: "kubelet"},
	}
	if _, err := c.Kube.CoreV1().Events(ns).Create(bg, e, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating event: %v", err)
	}
}

// runtimeIngress creates the chart's runtime Ingress: the host's /webhooks,
// /workflows and /app-proxy to internal-router:80 (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/ingress.yaml).
func runtimeIngress(t *testing.T, c *testcluster.Cluster, ns, name, class, host string) *networkingv1.Ingress {
	t.Helper()
	prefix := networkingv1.PathTypePrefix
	var paths []networkingv1.HTTPIngressPath
	for _, p := range []string{"/webhooks", "/workflows", "/app-proxy"} {
		paths = append(paths, networkingv1.HTTPIngressPath{Path: p, PathType: &prefix, Backend: networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "internal-router", Port: networkingv1.ServiceBackendPort{Number: 80}}}})
	}
	in := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app.kubernetes.io/part-of": "codefresh-gitops-runtime"}},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{Host: host,
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: paths}}}}},
	}
	created, err := c.Kube.NetworkingV1().Ingresses(ns).Create(bg, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating ingress: %v", err)
	}
	return created
}

// applyVS applies a VirtualService for host with one http route per path
// prefix to "service:port".
func applyVS(t *testing.T, c *testcluster.Cluster, ns, name, host string, routes map[string]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: networking.istio.io/v1alpha3\nkind: VirtualService\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
		"\nspec:\n  hosts: [" + host + "]\n  gateways: [istio-system/internal-router]\n  http:\n")
	for _, p := range []string{"/webhooks", "/app-proxy", "/workflows"} {
		dest, ok := routes[p]
		if !ok {
			continue
		}
		svc, port, _ := strings.Cut(dest, ":")
		b.WriteString("  - match:\n    - uri:\n        prefix: " + p + "\n    route:\n    - destination:\n        host: " + svc + "\n        port:\n          number: " + port + "\n")
	}
	f := filepath.Join(t.TempDir(), name+".yaml")
	writeFile(t, f, b.String())
	c.Kubectl(t, "apply", "--server-side", "--force-conflicts", "-f", f)
}

func ptr[T any](v T) *T { return &v }

// isList reports whether r is a LIST of resource (the last path segment of a
// collection URL, e.g. "nodes" for /api/v1/nodes, "deployments" for
// /apis/apps/v1/deployments).
func isList(r *http.Request, resource string) bool {
	return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/"+resource)
}
