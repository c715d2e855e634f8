package cluster

import (
	corev1 "k8s.io/api/core/v1"
)

// Namespace is what the checks read of one namespace.
type Namespace struct {
	Name   string
	Exists bool
	// Terminating is true when status.phase is Terminating.
	Terminating bool
	Labels      map[string]string
}

// Namespace gets one namespace by name (a GET, not a list), once per snapshot
// and name. A namespace that does not exist is not an error: Exists is false.
func (s *Snapshot) Namespace(name string) (Namespace, error) {
	ns, found, err := getOne(s, "namespace/"+name, "namespaces/"+name, "", name,
		s.clients.Kube.CoreV1().Namespaces().Get,
		func(ns *corev1.Namespace) Namespace {
			return Namespace{
				Name:        name,
				Exists:      true,
				Terminating: ns.Status.Phase == corev1.NamespaceTerminating,
				Labels:      copyMap(ns.Labels),
			}
		})
	if err == nil && !found {
		ns.Name = name
	}
	return ns, err
}
