// Command demo shows kubectl gitops-preflight at work without touching any
// cluster of yours: it starts a throwaway kube-apiserver and etcd (the test
// control plane, bin/k8s), fills it with a realistic, partly broken cluster,
// runs the plugin against it through kubectl (when kubectl is on PATH), and
// stops it. Run it with `make demo`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/go-logr/logr"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

func main() {
	plugin := flag.String("plugin", "bin/kubectl-gitops_preflight", "path of the built plugin")
	flag.Parse()
	if err := run(*plugin, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(plugin string, extraArgs []string) error {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = "bin/k8s"
	}
	ctrllog.SetLogger(logr.Discard())
	fmt.Println("Starting a local kube-apiserver and etcd (nothing of yours is touched)...")
	env := &envtest.Environment{BinaryAssetsDirectory: assets, ControlPlaneStartTimeout: 60 * time.Second}
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("starting control plane (did `make test-binaries` run?): %w", err)
	}
	defer func() { _ = env.Stop() }()
	admin, err := env.AddUser(envtest.User{Name: "demo-admin", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "gitops-preflight-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	kc, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return err
	}

	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(admin.Config())
	ext := apiextensionsclient.NewForConfigOrDie(admin.Config())
	if err := populate(ctx, kube, ext); err != nil {
		return fmt.Errorf("populating the demo cluster: %w", err)
	}
	fmt.Print(`
The demo cluster:
  - nodes small-1 (1 CPU, 2Gi) and small-2 (2 CPU, 4Gi), and big (8 CPU, 32Gi) which is cordoned
  - a community Argo CD in namespace argocd and an Argo CD CRD not owned by any Helm release
  - namespace codefresh already runs an unrelated redis Deployment
  - an ingress-nginx IngressClass whose LoadBalancer Service is still <pending>
`)

	abs, err := filepath.Abs(plugin)
	if err != nil {
		return err
	}
	// The demo never dials out of this machine: platform-reachable would probe
	// g.codefresh.io, and the ingress host's TLS/HTTP probes a real host.
	runs := [][]string{
		{"--skip", "platform-reachable"},
		{"--ingress-host", "gitops.demo.example.com", "--only", "ingress-class,ingress-controller,ingress-external-address,ingress-tcp,ingress-report-status"},
	}
	for i, args := range runs {
		if i > 0 {
			fmt.Println("\nThe same cluster, planning an ingress-based runtime:")
		}
		if err := runPlugin(dir, abs, kubeconfig, append(args, extraArgs...)); err != nil {
			return err
		}
	}
	return nil
}

// runPlugin runs the plugin as users do, `kubectl gitops-preflight`, with the
// plugin put on PATH the way krew or `make install` would; without kubectl on
// PATH it runs the binary itself.
func runPlugin(dir, plugin, kubeconfig string, args []string) error {
	link := filepath.Join(dir, "kubectl-gitops_preflight")
	if _, err := os.Lstat(link); err != nil {
		if err := os.Symlink(plugin, link); err != nil {
			return err
		}
	}
	fmt.Printf("\n$ kubectl gitops-preflight %s\n", strings.Join(args, " "))
	var cmd *exec.Cmd
	if _, err := exec.LookPath("kubectl"); err == nil {
		cmd = exec.Command("kubectl", append([]string{"gitops-preflight", "--kubeconfig", kubeconfig}, args...)...)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	} else {
		cmd = exec.Command(plugin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err := cmd.Run()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		fmt.Printf("(exit code %d: some checks failed, as this demo cluster intends)\n", ee.ExitCode())
		return nil
	}
	return err
}

func populate(ctx context.Context, kube kubernetes.Interface, ext apiextensionsclient.Interface) error {
	for _, n := range []testcluster.NodeSpec{
		{Name: "small-1", CPU: "1", Memory: "2Gi"},
		{Name: "small-2", CPU: "2", Memory: "4Gi"},
		{Name: "big", CPU: "8", Memory: "32Gi", Unschedulable: true},
	} {
		if err := testcluster.CreateNode(ctx, kube, n); err != nil {
			return err
		}
	}
	for _, ns := range []string{"argocd", "codefresh", "ingress-nginx"} {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	deploys := []*appsv1.Deployment{
		deployment("argocd", "argocd-server", "quay.io/argoproj/argocd:v2.11.3",
			map[string]string{"app.kubernetes.io/name": "argocd-server", "app.kubernetes.io/part-of": "argocd", "app.kubernetes.io/component": "server"}, nil),
		deployment("argocd", "argocd-repo-server", "quay.io/argoproj/argocd:v2.11.3",
			map[string]string{"app.kubernetes.io/name": "argocd-repo-server", "app.kubernetes.io/part-of": "argocd", "app.kubernetes.io/component": "repo-server"}, nil),
		deployment("codefresh", "redis", "redis:7", map[string]string{"app": "redis"}, nil),
		deployment("ingress-nginx", "ingress-nginx-controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2",
			map[string]string{"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller", "app.kubernetes.io/instance": "ingress-nginx"},
			[]string{"/nginx-ingress-controller", "--publish-service=$(POD_NAMESPACE)/ingress-nginx-controller", "--controller-class=k8s.io/ingress-nginx", "--ingress-class=nginx"}),
	}
	for _, d := range deploys {
		created, err := kube.AppsV1().Deployments(d.Namespace).Create(ctx, d, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		created.Status = appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1}
		if _, err := kube.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ingress-nginx", Name: "ingress-nginx-controller",
			Labels: map[string]string{"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller"}},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller"},
			Ports:    []corev1.ServicePort{{Name: "https", Port: 443}},
		},
	}
	if _, err := kube.CoreV1().Services("ingress-nginx").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return err
	}
	ic := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}
	if _, err := kube.NetworkingV1().IngressClasses().Create(ctx, ic, metav1.CreateOptions{}); err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "applications.argoproj.io", Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "argoproj.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "applications", Singular: "application", Kind: "Application", ListKind: "ApplicationList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr(true),
				}},
			}},
		},
	}
	_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
	return err
}

func deployment(ns, name, image string, labels map[string]string, args []string) *appsv1.Deployment {
	one := int32(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image, Args: args}}},
			},
		},
	}
}

func ptr[T any](v T) *T { return &v }
