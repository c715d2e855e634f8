package cluster

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NginxIngressControllerGVR is the NGINX Ingress Operator's resource
// (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/,
// "NGINX Ingress Operator: Enable report status to cluster").
var NginxIngressControllerGVR = schema.GroupVersionResource{Group: "k8s.nginx.org", Version: "v1alpha1", Resource: "nginxingresscontrollers"}

// NginxIngressController summarises one NginxIngressController.
type NginxIngressController struct {
	Namespace, Name string
	// IngressClass is spec.ingressClass ("nginx" when unset, the operator's default).
	IngressClass string
	// ReportIngressStatus is spec.reportIngressStatus.enable.
	ReportIngressStatus bool
}

// NginxIngressControllers lists the operator's resources in all namespaces,
// once per snapshot; none (and no error) when the CRD is not installed.
func (s *Snapshot) NginxIngressControllers() ([]NginxIngressController, error) {
	return Memo(s, "nginxingresscontrollers", func() ([]NginxIngressController, error) {
		var out []NginxIngressController
		err := each(s.ctx, "nginxingresscontrollers.k8s.nginx.org", "", metav1.ListOptions{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Dynamic.Resource(NginxIngressControllerGVR).Namespace(metav1.NamespaceAll).List(ctx, o)
			},
			func(obj runtime.Object) error {
				u, ok := obj.(*unstructured.Unstructured)
				if !ok {
					return nil
				}
				c := NginxIngressController{Namespace: u.GetNamespace(), Name: u.GetName(), IngressClass: "nginx"}
				if v, ok, _ := unstructured.NestedString(u.Object, "spec", "ingressClass"); ok && v != "" {
					c.IngressClass = v
				}
				c.ReportIngressStatus, _, _ = unstructured.NestedBool(u.Object, "spec", "reportIngressStatus", "enable")
				out = append(out, c)
				return nil
			})
		if err != nil && apierrors.IsNotFound(err) {
			return nil, nil
		}
		return out, err
	})
}
