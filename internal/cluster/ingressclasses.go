package cluster

import (
	"context"
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// IngressClass summarises a networking.k8s.io/v1 IngressClass.
type IngressClass struct {
	Name string
	// Controller is spec.controller, e.g. "k8s.io/ingress-nginx".
	Controller string
	// Default is true when annotated ingressclass.kubernetes.io/is-default-class=true.
	Default bool
	Labels  map[string]string
}

// IngressClasses lists the IngressClasses once per snapshot (cluster-scoped,
// usually a handful).
func (s *Snapshot) IngressClasses() ([]IngressClass, error) {
	return Memo(s, "ingressclasses", func() ([]IngressClass, error) {
		var out []IngressClass
		err := each(s.ctx, "ingressclasses", "", metav1.ListOptions{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Kube.NetworkingV1().IngressClasses().List(ctx, o)
			},
			func(obj runtime.Object) error {
				c, ok := obj.(*networkingv1.IngressClass)
				if !ok {
					return fmt.Errorf("unexpected %T in ingressclass list", obj)
				}
				out = append(out, IngressClass{
					Name:       c.Name,
					Controller: c.Spec.Controller,
					Default:    c.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true",
					Labels:     copyMap(c.Labels),
				})
				return nil
			})
		return out, err
	})
}
