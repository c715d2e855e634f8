package ingressclass

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Cluster is what Lookup reads (cluster.Snapshot answers it).
type Cluster interface {
	IngressClasses() ([]cluster.IngressClass, error)
	Deployments() ([]cluster.Workload, error)
	DaemonSets() ([]cluster.Workload, error)
	// Service gets one Service (ok false when it does not exist).
	Service(namespace, name string) (svc cluster.Service, ok bool, err error)
	ServicesIn(namespace string) ([]cluster.Service, error)
}

// Controller is what the ingress checks share about the planned
// IngressClass: the class, its controller workloads and the Service in
// front of them.
type Controller struct {
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

// Lookup finds IngressClass name, the Deployments and DaemonSets that run
// its controller (ServesClass) and their Service (findService).
func Lookup(c Cluster, name string) (*Controller, error) {
	ic := &Controller{ClassName: name}
	classes, err := c.IngressClasses()
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
	for _, list := range []func() ([]cluster.Workload, error){c.Deployments, c.DaemonSets} {
		ws, err := list()
		if err != nil {
			return nil, err
		}
		for _, w := range ws {
			if ServesClass(w, ic.Class) {
				ic.Workloads = append(ic.Workloads, w)
			}
		}
	}
	if err := findService(c, ic); err != nil {
		return nil, err
	}
	return ic, nil
}

// PublishedService returns the Service a controller's args name
// (ns/name or name in the workload's namespace), and the flag naming it:
// ingress-nginx --publish-service, NGINX by F5 -external-service, Traefik
// --providers.kubernetesingress.ingressendpoint.publishedservice.
func PublishedService(w cluster.Workload) (ns, name, flag string) {
	for _, c := range w.Containers {
		args := AllArgs(c)
		for _, f := range []string{"publish-service", "external-service", "providers.kubernetesingress.ingressendpoint.publishedservice"} {
			v, ok := ArgValue(args, f)
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
// whose selector matches the controller's pods (one namespaced list),
// else such a Service of type NodePort.
func findService(c Cluster, ic *Controller) error {
	for _, w := range ic.Workloads {
		ns, name, flag := PublishedService(w)
		if name == "" {
			continue
		}
		svc, ok, err := c.Service(ns, name)
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
		svcs, err := c.ServicesIn(w.Namespace)
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
