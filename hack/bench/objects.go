package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

func nsName(i int) string { return fmt.Sprintf("bench-%04d", i) }

var zones = []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"}

// nodeName is the name of the i-th node createNode makes.
func nodeName(i int) string {
	return fmt.Sprintf("ip-10-%d-%d-%d.eu-west-1.compute.internal", i/65536%256, i/256%256, i%256)
}

// createBoundPod creates pod i in namespace ns already bound to node
// (spec.nodeName set in the create, as the scheduler's binding would leave
// it), with cpu and memory requests, then writes status phase Running
// directly: the bench cluster has no scheduler to bind pods and no kubelet
// to run them or report their status, and a create drops the status it is
// sent.
func createBoundPod(ctx context.Context, kube kubernetes.Interface, node, i int, ns string) error {
	app := fmt.Sprintf("app-%05d", i/2)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:   fmt.Sprintf("%s-%08x-%05d", app, i, i%100000),
			Labels: map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/instance": app, "pod-template-hash": fmt.Sprintf("%08x", i/2)},
		},
		Spec: corev1.PodSpec{
			NodeName: nodeName(node),
			Containers: []corev1.Container{{
				Name:  "app",
				Image: fmt.Sprintf("registry.example.com/team-%03d/%s:1.4.2", i%150, app),
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
			}},
		},
	}
	created, err := kube.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	now := metav1.Now()
	created.Status = corev1.PodStatus{
		Phase:     corev1.PodRunning,
		HostIP:    fmt.Sprintf("10.%d.%d.%d", node/65536%256, node/256%256, node%256),
		PodIP:     fmt.Sprintf("100.%d.%d.%d", i/65536%256, i/256%256, i%256),
		StartTime: &now,
		QOSClass:  corev1.PodQOSBurstable,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", Ready: true, Image: p.Spec.Containers[0].Image, ImageID: fmt.Sprintf("registry.example.com/team-%03d/%s@sha256:%064x", i%150, app, i/2),
			ContainerID: fmt.Sprintf("containerd://%064x", i), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}},
	}
	_, err = kube.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}

// createNode creates the i-th node as a kubelet registers it (an m5.xlarge
// of an EKS node group: 3920m cpu, 15038088Ki memory allocatable), status
// in the create (testcluster.RegisterNode).
func createNode(ctx context.Context, kube kubernetes.Interface, i int) error {
	name := nodeName(i)
	zone := zones[i%len(zones)]
	return testcluster.RegisterNode(ctx, kube, testcluster.NodeSpec{
		Name: name, CPU: "3920m", Memory: "15038088Ki",
		ProviderID: fmt.Sprintf("aws:///%s/i-%017x", zone, i),
		InternalIP: fmt.Sprintf("10.%d.%d.%d", i/65536%256, i/256%256, i%256),
		Labels: map[string]string{
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"node.kubernetes.io/instance-type": "m5.xlarge", "topology.kubernetes.io/zone": zone,
			"topology.kubernetes.io/region": "eu-west-1", "eks.amazonaws.com/nodegroup": fmt.Sprintf("ng-%d", i%20),
		},
	})
}

func service(i int) *corev1.Service {
	app := fmt.Sprintf("app-%05d", i/2)
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%05d", i), Labels: map[string]string{
			"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": fmt.Sprintf("system-%03d", i%300), "app.kubernetes.io/managed-by": "Helm",
		}, Annotations: map[string]string{"meta.helm.sh/release-name": app, "meta.helm.sh/release-namespace": nsName(i % 2000)}},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{"app.kubernetes.io/name": app},
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP},
				{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9090), Protocol: corev1.ProtocolTCP},
			},
		},
	}
}

func deployment(i int) *appsv1.Deployment {
	app := fmt.Sprintf("app-%05d", i)
	labels := map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/instance": app}
	replicas := int32(2)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: app, Labels: map[string]string{
			"app.kubernetes.io/name": app, "app.kubernetes.io/instance": app, "app.kubernetes.io/version": "1.4.2",
			"app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "service-1.4.2",
		}, Annotations: map[string]string{"meta.helm.sh/release-name": app, "meta.helm.sh/release-namespace": nsName(i % 2000), "deployment.kubernetes.io/revision": "3"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090"}},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:  "app",
						Image: fmt.Sprintf("registry.example.com/team-%03d/%s:1.4.2", i%150, app),
						Args:  []string{"--port=8080", "--metrics-port=9090", "--log-level=info"},
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "metrics", ContainerPort: 9090}},
						Env:   []corev1.EnvVar{{Name: "APP_NAME", Value: app}, {Name: "ENV", Value: "prod"}},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
						},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}},
					}},
				},
			},
		},
	}
}

var crdDoc = regexp.MustCompile(`(?m)^kind: CustomResourceDefinition\s*$`)

// fixtureCRDs reads the CustomResourceDefinitions of the real Argo CD and
// Argo Rollouts install manifests.
func fixtureCRDs(fixtures string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, rel := range []string{"argo-cd/install.yaml", "argo-rollouts/install.yaml"} {
		data, err := os.ReadFile(filepath.Join(fixtures, rel))
		if err != nil {
			return nil, fmt.Errorf("upstream fixture: %w", err)
		}
		n := 0
		for _, doc := range strings.Split(string(data), "\n---") {
			if !crdDoc.MatchString(doc) {
				continue
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.Unmarshal([]byte(doc), &crd); err != nil {
				return nil, fmt.Errorf("%s: %w", rel, err)
			}
			out = append(out, &crd)
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("no CRD in upstream fixture %s", rel)
		}
	}
	return out, nil
}

func otherCRD(i int) *apiextensionsv1.CustomResourceDefinition {
	group := fmt.Sprintf("team%02d.bench.example.com", i%10)
	plural := fmt.Sprintf("widgets%02d", i)
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group, Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: fmt.Sprintf("widget%02d", i), Kind: fmt.Sprintf("Widget%02d", i), ListKind: fmt.Sprintf("Widget%02dList", i)},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", XPreserveUnknownFields: &preserve},
						"status": {Type: "object", XPreserveUnknownFields: &preserve},
					},
				}},
			}},
		},
	}
}

func waitEstablished(ctx context.Context, ext apiextensionsclient.Interface, crds []*apiextensionsv1.CustomResourceDefinition) error {
	deadline := time.Now().Add(2 * time.Minute)
	for _, want := range crds {
		for {
			got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, want.Name, metav1.GetOptions{})
			if err == nil && established(got) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s not Established after 2m (%w)", want.Name, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

func established(c *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

var webhookDoc = regexp.MustCompile(`(?m)^kind: (Validating|Mutating)WebhookConfiguration`)

// seedIngressNginx applies the real ingress-nginx (cloud) manifest without
// its admission webhook configuration (no pod serves it here), then sets the
// statuses a running cluster would: the controller Deployment available and
// the LoadBalancer Service's address (127.0.0.1, so that any probe of it
// stays on this machine).
func seedIngressNginx(ctx context.Context, kube kubernetes.Interface, kc, fixtures, dir string) error {
	data, err := os.ReadFile(filepath.Join(fixtures, "ingress-nginx", "cloud.yaml"))
	if err != nil {
		return fmt.Errorf("upstream fixture: %w", err)
	}
	var keep []string
	for _, doc := range strings.Split(string(data), "\n---") {
		if !webhookDoc.MatchString(doc) {
			keep = append(keep, doc)
		}
	}
	f := filepath.Join(dir, "ingress-nginx.yaml")
	if err := os.WriteFile(f, []byte(strings.Join(keep, "\n---")), 0o600); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kc, "apply", "--server-side", "-f", f).CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply: %w\n%s", err, out)
	}
	d, err := kube.AppsV1().Deployments("ingress-nginx").Get(ctx, "ingress-nginx-controller", metav1.GetOptions{})
	if err != nil {
		return err
	}
	d.Status.Replicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas, d.Status.UpdatedReplicas = 1, 1, 1, 1
	if _, err := kube.AppsV1().Deployments("ingress-nginx").UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		return err
	}
	s, err := kube.CoreV1().Services("ingress-nginx").Get(ctx, "ingress-nginx-controller", metav1.GetOptions{})
	if err != nil {
		return err
	}
	s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "127.0.0.1"}}
	_, err = kube.CoreV1().Services("ingress-nginx").UpdateStatus(ctx, s, metav1.UpdateOptions{})
	return err
}
