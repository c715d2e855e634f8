package ingressclass

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// workload is a one-container Deployment ns/name with image, args and pod
// labels.
func workload(ns, name, image string, args []string, podLabels map[string]string) cluster.Workload {
	return cluster.Workload{Kind: "Deployment", Namespace: ns, Name: name, PodLabels: podLabels,
		Containers: []cluster.Container{{Name: "controller", Image: image, Args: args}}}
}

const nginxImage = "registry.k8s.io/ingress-nginx/controller:v1.12.0@sha256:abc"

// TestServesClass: which workload serves an IngressClass, per supported
// controller: by image or entrypoint and class flags, never by the
// workload's name.
func TestServesClass(t *testing.T) {
	class := func(name, controller string) *cluster.IngressClass {
		return &cluster.IngressClass{Name: name, Controller: controller}
	}
	for _, c := range []struct {
		name  string
		class *cluster.IngressClass
		w     cluster.Workload
		want  bool
	}{
		{"ingress-nginx by image", class("nginx", ControllerNginxCommunity), workload("n", "my-ctrl", nginxImage, nil, nil), true},
		{"ingress-nginx by entrypoint", class("nginx", ControllerNginxCommunity), workload("n", "c", "mirror/ctrl:1", []string{"/nginx-ingress-controller"}, nil), true},
		{"ingress-nginx of another --controller-class", class("nginx", ControllerNginxCommunity),
			workload("n", "c", nginxImage, []string{"--controller-class=example.com/internal"}, nil), false},
		{"a workload named like a controller is not one", class("nginx", ControllerNginxCommunity), workload("n", "ingress-nginx-controller", "busybox:1.36", nil, nil), false},
		{"NGINX by F5 serves the class its -ingress-class names", class("f5", ControllerNginxF5),
			workload("n", "nic", "nginx/nginx-ingress:4.0.0", []string{"-nginx-configmaps=$(POD_NAMESPACE)/cm", "-ingress-class=f5"}, nil), true},
		{"NGINX by F5 of another class (default nginx)", class("f5", ControllerNginxF5), workload("n", "nic", "nginx/nginx-ingress:4.0.0", nil, nil), false},
		{"ingress-nginx's entrypoint is not NGINX by F5", class("nginx", ControllerNginxF5),
			workload("n", "c", "nginx/nginx-ingress:4.0.0", []string{"/nginx-ingress-controller"}, nil), false},
		{"AWS ALB by pod label", class("alb", ControllerALB),
			workload("kube-system", "lbc", "example.com/mirror/lbc:v2", nil, map[string]string{"app.kubernetes.io/name": "aws-load-balancer-controller"}), true},
		{"AWS ALB by image", class("alb", ControllerALB), workload("kube-system", "x", "public.ecr.aws/eks/aws-load-balancer-controller:v2.8.0", nil, nil), true},
		{"Traefik with its ingress provider", class("traefik", ControllerTraefik),
			workload("t", "traefik", "traefik:v3.1", []string{"--providers.kubernetesingress", "--providers.kubernetesingress.ingressclass=traefik"}, nil), true},
		{"Traefik bound to another class", class("traefik", ControllerTraefik),
			workload("t", "traefik", "traefik:v3.1", []string{"--providers.kubernetesingress.ingressclass=other"}, nil), false},
		{"Traefik without its ingress provider", class("traefik", ControllerTraefik), workload("t", "traefik", "traefik:v3.1", nil, nil), false},
		{"Istio ingress gateway by entrypoint", class("istio", ControllerIstio), workload("i", "gw", "docker.io/istio/proxyv2:1.24.0", []string{"proxy", "router"}, nil), true},
		{"Istio ingress gateway by label", class("istio", ControllerIstio), workload("i", "gw", "x:1", nil, map[string]string{"istio": "ingressgateway"}), true},
		{"Istio sidecar is no gateway", class("istio", ControllerIstio), workload("i", "app", "docker.io/istio/proxyv2:1.24.0", []string{"proxy", "sidecar"}, nil), false},
		{"Ambassador by image", class("ambassador", ControllerAmbassador), workload("e", "edge", "docker.io/emissaryingress/emissary:3.9.1", nil, nil), true},
		{"an unsupported controller", class("other", "example.com/ingress"), workload("n", "c", nginxImage, nil, nil), false},
	} {
		if got := ServesClass(c.w, c.class); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestArgValue(t *testing.T) {
	args := []string{"-ingress-class=f5", "--publish-service", "ns/svc", "--report-ingress-status", "---three=x", "--flag", "-next"}
	for _, c := range []struct {
		flag, want string
		ok         bool
	}{
		{"ingress-class", "f5", true},
		{"publish-service", "ns/svc", true},
		{"report-ingress-status", "", true},
		{"flag", "", true},
		{"three", "", false},
		{"missing", "", false},
	} {
		if got, ok := ArgValue(args, c.flag); got != c.want || ok != c.ok {
			t.Errorf("ArgValue(%s) = %q, %v", c.flag, got, ok)
		}
	}
}

func TestImageName(t *testing.T) {
	for image, want := range map[string][2]string{
		nginxImage:                      {"registry.k8s.io/ingress-nginx/controller", "controller"},
		"localhost:5000/nginx-ingress":  {"localhost:5000/nginx-ingress", "nginx-ingress"},
		"traefik:v3.1":                  {"traefik", "traefik"},
		"docker.io/istio/proxyv2@sha:1": {"docker.io/istio/proxyv2", "proxyv2"},
	} {
		if repo, base := ImageName(image); repo != want[0] || base != want[1] {
			t.Errorf("ImageName(%s) = %s, %s", image, repo, base)
		}
	}
}

func TestFlavour(t *testing.T) {
	if got := Flavour(&cluster.IngressClass{Controller: ControllerNginxF5}); got != "NGINX by F5 (NGINX Enterprise)" {
		t.Errorf("flavour %q", got)
	}
	if got := Flavour(&cluster.IngressClass{Controller: "example.com/x"}); got != "example.com/x" || Supported("example.com/x") || !Supported(ControllerALB) {
		t.Errorf("unsupported: %q", got)
	}
}

// fakeCluster answers Lookup from slices; services are by "ns/name".
type fakeCluster struct {
	classes     []cluster.IngressClass
	deployments []cluster.Workload
	daemonSets  []cluster.Workload
	services    []cluster.Service
	listErr     error
}

func (f fakeCluster) IngressClasses() ([]cluster.IngressClass, error) { return f.classes, nil }
func (f fakeCluster) Deployments() ([]cluster.Workload, error)        { return f.deployments, f.listErr }
func (f fakeCluster) DaemonSets() ([]cluster.Workload, error)         { return f.daemonSets, nil }
func (f fakeCluster) Service(ns, name string) (cluster.Service, bool, error) {
	for _, s := range f.services {
		if s.Namespace == ns && s.Name == name {
			return s, true, nil
		}
	}
	return cluster.Service{}, false, nil
}
func (f fakeCluster) ServicesIn(ns string) ([]cluster.Service, error) {
	var out []cluster.Service
	for _, s := range f.services {
		if s.Namespace == ns {
			out = append(out, s)
		}
	}
	return out, nil
}

// TestLookup: the class, its controller workloads and the Service in front
// of them: the one --publish-service names, else a LoadBalancer Service
// selecting the controller's pods, else a NodePort one.
func TestLookup(t *testing.T) {
	nginx := cluster.IngressClass{Name: "nginx", Controller: ControllerNginxCommunity}
	ctrl := workload("ingress-nginx", "ctrl", nginxImage, []string{"--publish-service=$(POD_NAMESPACE)/published"}, map[string]string{"app": "ctrl"})
	other := workload("ingress-nginx", "web", "nginx:1", nil, map[string]string{"app": "web"})
	svc := func(name string, typ corev1.ServiceType, sel map[string]string) cluster.Service {
		return cluster.Service{Namespace: "ingress-nginx", Name: name, Type: typ, Selector: sel}
	}
	c := fakeCluster{classes: []cluster.IngressClass{nginx}, deployments: []cluster.Workload{other, ctrl},
		services: []cluster.Service{svc("published", corev1.ServiceTypeClusterIP, nil), svc("lb", corev1.ServiceTypeLoadBalancer, map[string]string{"app": "ctrl"})}}
	ic, err := Lookup(c, "nginx")
	if err != nil {
		t.Fatal(err)
	}
	if ic.Class == nil || len(ic.Workloads) != 1 || ic.Workloads[0].Name != "ctrl" || ic.Service.Name != "published" || ic.ServiceHow != "--publish-service" {
		t.Errorf("published: %+v", ic)
	}
	c.services = c.services[1:]
	c.services = append(c.services, svc("np", corev1.ServiceTypeNodePort, map[string]string{"app": "ctrl"}))
	if ic, _ := Lookup(c, "nginx"); ic.Service.Name != "lb" || ic.ServiceHow != "selector" || ic.ServiceNamed != "ingress-nginx/published" {
		t.Errorf("a LoadBalancer Service by selector: %+v", ic)
	}
	c.services = c.services[1:]
	if ic, _ := Lookup(c, "nginx"); ic.Service.Name != "np" {
		t.Errorf("a NodePort Service by selector: %+v", ic)
	}
	if ic, err := Lookup(c, "nope"); err != nil || ic.Class != nil || ic.ClassName != "nope" || ic.Workloads != nil {
		t.Errorf("class missing: %+v, %v", ic, err)
	}
	c.listErr = errors.New("forbidden")
	if _, err := Lookup(c, "nginx"); err == nil {
		t.Error("a failed list is no error")
	}
}

func TestPublishedService(t *testing.T) {
	for _, c := range []struct {
		args           []string
		ns, name, flag string
	}{
		{[]string{"--publish-service=$(POD_NAMESPACE)/svc"}, "w", "svc", "publish-service"},
		{[]string{"-external-service=nic"}, "w", "nic", "external-service"},
		{[]string{"--providers.kubernetesingress.ingressendpoint.publishedservice=t/traefik"}, "t", "traefik", "providers.kubernetesingress.ingressendpoint.publishedservice"},
		{nil, "", "", ""},
	} {
		ns, name, flag := PublishedService(workload("w", "c", "x:1", c.args, nil))
		if ns != c.ns || name != c.name || flag != c.flag {
			t.Errorf("%q: %s/%s by %s", c.args, ns, name, flag)
		}
	}
}
