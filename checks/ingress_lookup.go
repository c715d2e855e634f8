package checks

import (
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Ingress controllers the runtime supports, by IngressClass spec.controller
// (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Ingress controller configuration":
// Ambassador, AWS ALB, Istio, NGINX Enterprise, NGINX Community, Traefik).
const (
	ControllerNginxCommunity = "k8s.io/ingress-nginx"
	ControllerNginxF5        = "nginx.org/ingress-controller"
	ControllerALB            = "ingress.k8s.aws/alb"
	ControllerTraefik        = "traefik.io/ingress-controller"
	ControllerIstio          = "istio.io/ingress-controller"
	ControllerAmbassador     = "getambassador.io/ingress-controller"
)

// flavourNames are the docs' names of the supported controllers.
var flavourNames = map[string]string{
	ControllerNginxCommunity: "NGINX Community (ingress-nginx)",
	ControllerNginxF5:        "NGINX by F5 (NGINX Enterprise)",
	ControllerALB:            "AWS ALB",
	ControllerTraefik:        "Traefik",
	ControllerIstio:          "Istio",
	ControllerAmbassador:     "Ambassador",
}

// ingressController is what the ingress checks share about the planned
// IngressClass: the class, its controller workloads and the LoadBalancer
// Service in front of them. It is computed once per run (cluster.Memo).
type ingressController struct {
	ClassName string
	Class     *cluster.IngressClass // nil when the class does not exist
	// Workloads run the controller of the class (Deployments and DaemonSets).
	Workloads []cluster.Workload
	// Service is the controller's published Service, nil when none is found;
	// ServiceHow says how it was found ("--publish-service", "selector").
	Service    *cluster.Service
	ServiceHow string
	// ServiceNamed is set when the controller's args name a Service that
	// does not exist (ns/name).
	ServiceNamed string
}

// lookupIngress finds the planned class's controller, once per run.
func lookupIngress(env *Env) (*ingressController, error) {
	name := env.Inputs.IngressClass
	return cluster.Memo(env.Cluster, "checks/ingress-controller/"+name, func() (*ingressController, error) {
		ic := &ingressController{ClassName: name}
		classes, err := env.Cluster.IngressClasses()
		if err != nil {
			return nil, err
		}
		for i := range classes {
			if classes[i].Name == name {
				ic.Class = &classes[i]
			}
		}
		if ic.Class == nil {
			return ic, nil
		}
		for _, list := range []func() ([]cluster.Workload, error){env.Cluster.Deployments, env.Cluster.DaemonSets} {
			ws, err := list()
			if err != nil {
				return nil, err
			}
			for _, w := range ws {
				if servesClass(w, ic.Class) {
					ic.Workloads = append(ic.Workloads, w)
				}
			}
		}
		if err := findService(env, ic); err != nil {
			return nil, err
		}
		return ic, nil
	})
}

// argValue returns the value of a flag in args, accepting one or two dashes
// and "--flag=value" or "--flag value"; ok is false when absent.
func argValue(args []string, flag string) (string, bool) {
	for i, a := range args {
		trimmed := strings.TrimLeft(a, "-")
		if len(a)-len(trimmed) == 0 || len(a)-len(trimmed) > 2 {
			continue
		}
		if trimmed == flag {
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				return args[i+1], true
			}
			return "", true
		}
		if v, ok := strings.CutPrefix(trimmed, flag+"="); ok {
			return v, true
		}
	}
	return "", false
}

func hasArgPrefix(args []string, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(strings.TrimLeft(a, "-"), prefix) {
			return true
		}
	}
	return false
}

// imageName is an image's repository base name: "controller" for
// registry.k8s.io/ingress-nginx/controller:v1@sha256:...
func imageName(image string) (repo, base string) {
	image, _, _ = strings.Cut(image, "@")
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		image = image[:i]
	}
	return image, path.Base(image)
}

func allArgs(c cluster.Container) []string {
	return append(append([]string(nil), c.Command...), c.Args...)
}

// servesClass reports whether workload w runs the controller of class, per
// flavour: the container's identity (image or entrypoint) and its class
// flags, never the workload's name.
func servesClass(w cluster.Workload, class *cluster.IngressClass) bool {
	for _, c := range w.Containers {
		args := allArgs(c)
		repo, base := imageName(c.Image)
		switch class.Controller {
		case ControllerNginxCommunity:
			// ingress-nginx matches IngressClasses by --controller-class
			// (default k8s.io/ingress-nginx).
			if !strings.Contains(repo, "ingress-nginx/controller") && !hasArgPrefix(args, "nginx-ingress-controller") && !containsArg(args, "/nginx-ingress-controller") {
				continue
			}
			cc, ok := argValue(args, "controller-class")
			if !ok || cc == "" {
				cc = ControllerNginxCommunity
			}
			if cc == class.Controller {
				return true
			}
		case ControllerNginxF5:
			// NGINX by F5 serves the class named by -ingress-class (default nginx).
			if base != "nginx-ingress" && base != "nginx-plus-ingress" && !hasArgPrefix(args, "nginx-configmaps") && !hasArgPrefix(args, "nginx-plus") {
				continue
			}
			if containsArg(args, "/nginx-ingress-controller") {
				continue // ingress-nginx's entrypoint
			}
			name, ok := argValue(args, "ingress-class")
			if !ok || name == "" {
				name = "nginx"
			}
			if name == class.Name {
				return true
			}
		case ControllerALB:
			if base == "aws-load-balancer-controller" || w.PodLabels["app.kubernetes.io/name"] == "aws-load-balancer-controller" {
				return true
			}
		case ControllerTraefik:
			if !hasArgPrefix(args, "providers.kubernetesingress") {
				continue
			}
			if name, ok := argValue(args, "providers.kubernetesingress.ingressclass"); ok && name != "" && name != class.Name {
				continue
			}
			return true
		case ControllerIstio:
			if w.PodLabels["istio"] == "ingressgateway" || (base == "proxyv2" && containsArg(args, "router")) {
				return true
			}
		case ControllerAmbassador:
			if strings.Contains(repo, "emissary") || strings.Contains(repo, "ambassador") {
				return true
			}
		}
	}
	return false
}

func containsArg(args []string, s string) bool {
	for _, a := range args {
		if a == s {
			return true
		}
	}
	return false
}

// publishedService returns the Service a controller's args name
// (ns/name or name in the workload's namespace): ingress-nginx
// --publish-service, NGINX by F5 -external-service, Traefik
// --providers.kubernetesingress.ingressendpoint.publishedservice.
func publishedService(w cluster.Workload) (ns, name, flag string) {
	for _, c := range w.Containers {
		args := allArgs(c)
		for _, f := range []string{"publish-service", "external-service", "providers.kubernetesingress.ingressendpoint.publishedservice"} {
			v, ok := argValue(args, f)
			if !ok || v == "" {
				continue
			}
			v = strings.ReplaceAll(v, "$(POD_NAMESPACE)", w.Namespace)
			if n, s, found := strings.Cut(v, "/"); found {
				return n, s, f
			}
			return w.Namespace, v, f
		}
	}
	return "", "", ""
}

// findService sets ic.Service: the Service the controller's args name (a
// GET), else a Service of type LoadBalancer in the controller's namespace
// whose selector matches the controller's pods (one namespaced list).
func findService(env *Env, ic *ingressController) error {
	for _, w := range ic.Workloads {
		ns, name, flag := publishedService(w)
		if name == "" {
			continue
		}
		svc, ok, err := env.Cluster.Service(ns, name)
		if err != nil {
			return err
		}
		if ok {
			ic.Service, ic.ServiceHow = &svc, "--"+flag
			return nil
		}
		ic.ServiceNamed = ns + "/" + name
	}
	var fallback *cluster.Service
	for _, w := range ic.Workloads {
		svcs, err := env.Cluster.ServicesIn(w.Namespace)
		if err != nil {
			return err
		}
		for i := range svcs {
			s := svcs[i]
			if len(s.Selector) == 0 || !subset(s.Selector, w.PodLabels) {
				continue
			}
			switch s.Type {
			case corev1.ServiceTypeLoadBalancer:
				ic.Service, ic.ServiceHow = &s, "selector"
				return nil
			case corev1.ServiceTypeNodePort:
				if fallback == nil {
					fallback = &s
				}
			}
		}
	}
	if fallback != nil {
		ic.Service, ic.ServiceHow = fallback, "selector"
	}
	return nil
}

func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func workloadRef(w cluster.Workload) ObjectRef {
	return ObjectRef{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name}
}

func serviceRef(s *cluster.Service) ObjectRef {
	return ObjectRef{Kind: "Service", Namespace: s.Namespace, Name: s.Name}
}

// ingressNeeds returns the planned class's controller, or a skip result
// (non-empty Status) when the class is missing: ingress-class reports that,
// so the dependants do not repeat it.
func ingressNeeds(env *Env) (*ingressController, Result, error) {
	ic, err := lookupIngress(env)
	if err != nil {
		return nil, Result{}, err
	}
	if ic.Class == nil {
		return ic, Skip("IngressClass %s does not exist (see ingress-class)", ic.ClassName), nil
	}
	return ic, Result{}, nil
}

func flavour(c *cluster.IngressClass) string {
	if n, ok := flavourNames[c.Controller]; ok {
		return n
	}
	return c.Controller
}

// ingressProtocol is global.runtime.ingress.protocol (default https).
func ingressProtocol(env *Env) string { return env.Inputs.IngressProtocol }
