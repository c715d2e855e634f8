package ingressclass

import (
	"path"
	"strings"

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

// Supported reports whether controller (an IngressClass spec.controller)
// is one the runtime supports.
func Supported(controller string) bool {
	_, ok := flavourNames[controller]
	return ok
}

// Flavour names the controller of class as the docs do ("NGINX Community
// (ingress-nginx)"), or by its spec.controller when unsupported.
func Flavour(c *cluster.IngressClass) string {
	if n, ok := flavourNames[c.Controller]; ok {
		return n
	}
	return c.Controller
}

// ServesClass reports whether workload w runs the controller of class, per
// flavour: the container's identity (image or entrypoint) and its class
// flags, never the workload's name.
func ServesClass(w cluster.Workload, class *cluster.IngressClass) bool {
	for _, c := range w.Containers {
		if containerServes(w, c, class) {
			return true
		}
	}
	return false
}

// containerServes is ServesClass for one container c of w.
func containerServes(w cluster.Workload, c cluster.Container, class *cluster.IngressClass) bool {
	args := AllArgs(c)
	repo, base := ImageName(c.Image)
	switch class.Controller {
	case ControllerNginxCommunity:
		// ingress-nginx matches IngressClasses by --controller-class
		// (default k8s.io/ingress-nginx).
		if !strings.Contains(repo, "ingress-nginx/controller") && !hasArgPrefix(args, "nginx-ingress-controller") && !containsArg(args, "/nginx-ingress-controller") {
			return false
		}
		cc, ok := ArgValue(args, "controller-class")
		if !ok || cc == "" {
			cc = ControllerNginxCommunity
		}
		return cc == class.Controller
	case ControllerNginxF5:
		// NGINX by F5 serves the class named by -ingress-class (default nginx).
		if base != "nginx-ingress" && base != "nginx-plus-ingress" && !hasArgPrefix(args, "nginx-configmaps") && !hasArgPrefix(args, "nginx-plus") {
			return false
		}
		if containsArg(args, "/nginx-ingress-controller") {
			return false // ingress-nginx's entrypoint
		}
		name, ok := ArgValue(args, "ingress-class")
		if !ok || name == "" {
			name = "nginx"
		}
		return name == class.Name
	case ControllerALB:
		return base == "aws-load-balancer-controller" || w.PodLabels["app.kubernetes.io/name"] == "aws-load-balancer-controller"
	case ControllerTraefik:
		if !hasArgPrefix(args, "providers.kubernetesingress") {
			return false
		}
		name, ok := ArgValue(args, "providers.kubernetesingress.ingressclass")
		return !ok || name == "" || name == class.Name
	case ControllerIstio:
		return w.PodLabels["istio"] == "ingressgateway" || (base == "proxyv2" && containsArg(args, "router"))
	case ControllerAmbassador:
		return strings.Contains(repo, "emissary") || strings.Contains(repo, "ambassador")
	}
	return false
}

// ArgValue returns the value of a flag in args, accepting one or two dashes
// and "--flag=value" or "--flag value"; ok is false when absent.
func ArgValue(args []string, flag string) (string, bool) {
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

func containsArg(args []string, s string) bool {
	for _, a := range args {
		if a == s {
			return true
		}
	}
	return false
}

// ImageName splits an image into its repository and the repository's base
// name: "registry.k8s.io/ingress-nginx/controller" and "controller" for
// registry.k8s.io/ingress-nginx/controller:v1@sha256:...
func ImageName(image string) (repo, base string) {
	image, _, _ = strings.Cut(image, "@")
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		image = image[:i]
	}
	return image, path.Base(image)
}

// AllArgs are a container's command then its args.
func AllArgs(c cluster.Container) []string {
	return append(append([]string(nil), c.Command...), c.Args...)
}
