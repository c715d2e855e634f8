package cluster

import (
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	return Memo(s, "namespace/"+name, func() (Namespace, error) {
		ns, err := s.clients.Kube.CoreV1().Namespaces().Get(s.ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return Namespace{Name: name}, nil
		}
		if err != nil {
			return Namespace{}, &ListError{Verb: "get", Resource: "namespaces/" + name, Err: err}
		}
		return Namespace{
			Name:        name,
			Exists:      true,
			Terminating: ns.Status.Phase == corev1.NamespaceTerminating,
			Labels:      copyMap(ns.Labels),
		}, nil
	})
}
