package cluster

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The reads of the admission checks: the webhook configurations (whole:
// their rules and selectors are what matters), the EndpointSlices of a
// webhook's Service, and the ResourceQuotas and LimitRanges of a
// namespace. Each is listed once per snapshot.

// Webhooks are the cluster's webhook configurations.
type Webhooks struct {
	Validating []admissionregistrationv1.ValidatingWebhookConfiguration
	Mutating   []admissionregistrationv1.MutatingWebhookConfiguration
}

// WebhookConfigurations lists the Validating and Mutating webhook
// configurations once per snapshot.
func (s *Snapshot) WebhookConfigurations() (*Webhooks, error) {
	return Memo(s, "admission/webhooks", func() (*Webhooks, error) {
		w := &Webhooks{}
		err := each(s.ctx, "validatingwebhookconfigurations", "", metav1.ListOptions{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, o)
			},
			func(obj runtime.Object) error {
				w.Validating = append(w.Validating, *obj.(*admissionregistrationv1.ValidatingWebhookConfiguration))
				return nil
			})
		if err != nil {
			return nil, err
		}
		err = each(s.ctx, "mutatingwebhookconfigurations", "", metav1.ListOptions{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, o)
			},
			func(obj runtime.Object) error {
				w.Mutating = append(w.Mutating, *obj.(*admissionregistrationv1.MutatingWebhookConfiguration))
				return nil
			})
		if err != nil {
			return nil, err
		}
		return w, nil
	})
}

// ServiceEndpoints counts the ready and not-ready endpoints of a Service
// (its EndpointSlices, label kubernetes.io/service-name), once per
// snapshot and Service. An endpoint whose ready condition is unset counts
// as ready, as the API server's service resolver does.
func (s *Snapshot) ServiceEndpoints(namespace, name string) (ready, notReady int, err error) {
	type counts struct{ ready, notReady int }
	c, err := Memo(s, "admission/endpoints/"+namespace+"/"+name, func() (counts, error) {
		var c counts
		opts := metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name}
		err := each(s.ctx, "endpointslices", namespace, opts,
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Kube.DiscoveryV1().EndpointSlices(namespace).List(ctx, o)
			},
			func(obj runtime.Object) error {
				for _, e := range obj.(*discoveryv1.EndpointSlice).Endpoints {
					if e.Conditions.Ready == nil || *e.Conditions.Ready {
						c.ready++
					} else {
						c.notReady++
					}
				}
				return nil
			})
		return c, err
	})
	return c.ready, c.notReady, err
}

// Quota is what the checks read of a ResourceQuota: its hard limits, the
// quota controller's used figures, and the scopes that select the pods it
// counts.
type Quota struct {
	Name       string
	Hard, Used corev1.ResourceList
	Scopes     []corev1.ResourceQuotaScope
	// Selector is spec.scopeSelector's expressions.
	Selector []QuotaScope
}

// QuotaScope is one expression of a quota's scopeSelector.
type QuotaScope struct {
	Scope    corev1.ResourceQuotaScope
	Operator corev1.ScopeSelectorOperator
	Names    []string
}

// ResourceQuotas lists the ResourceQuotas of a namespace once per snapshot.
func (s *Snapshot) ResourceQuotas(namespace string) ([]Quota, error) {
	return Memo(s, "admission/quotas/"+namespace, func() ([]Quota, error) {
		var out []Quota
		err := each(s.ctx, "resourcequotas", namespace, metav1.ListOptions{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Kube.CoreV1().ResourceQuotas(namespace).List(ctx, o)
			},
			func(obj runtime.Object) error {
				q := obj.(*corev1.ResourceQuota)
				out = append(out, QuotaFrom(q))
				return nil
			})
		return out, err
	})
}

// QuotaFrom summarises a ResourceQuota.
func QuotaFrom(q *corev1.ResourceQuota) Quota {
	out := Quota{Name: q.Name, Hard: q.Spec.Hard, Used: q.Status.Used, Scopes: q.Spec.Scopes}
	if sel := q.Spec.ScopeSelector; sel != nil {
		for _, e := range sel.MatchExpressions {
			out.Selector = append(out.Selector, QuotaScope{Scope: e.ScopeName, Operator: e.Operator, Names: e.Values})
		}
	}
	return out
}
