package checks

import (
	"context"
	"fmt"
	"strings"
)

// IngressControllerCheck passes when a controller workload (Deployment or
// DaemonSet) serving the planned IngressClass exists and has at least one
// available replica. The workload is recognised by its container (image or
// entrypoint) and class flags, never by name: ingress-nginx by
// --controller-class, NGINX by F5 by -ingress-class, Traefik by
// --providers.kubernetesingress[.ingressclass], Istio by the ingressgateway
// pod label, ALB and Ambassador by image (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/,
// "Ingress controller configuration").
func IngressControllerCheck() Check {
	return Check{
		Meta: Meta{
			ID:       "ingress-controller",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryIngress,
			Modes:    ModePre,
			Title:    "An ingress controller for the IngressClass is running",
			Severity: SeverityFail,
			Requires: []string{"ingress-class"},
			Applies:  Applies{Access: []AccessMode{AccessIngress}},
		},
		Run: runIngressController,
	}
}

func runIngressController(_ context.Context, env *Env) (Result, error) {
	ic, r, err := ingressNeeds(env)
	if err != nil || r.Status != "" {
		return r, err
	}
	if len(ic.Workloads) == 0 {
		return Fail("no %s controller workload serves IngressClass %s", flavour(ic.Class), ic.Class.Name).
			WithHint("install the controller, or check its class flags match the IngressClass (kubectl get deploy,ds -A -o wide)").
			WithObjects(ObjectRef{Kind: "IngressClass", Name: ic.Class.Name}), nil
	}
	var avail, unavail []string
	var refs []ObjectRef
	for _, w := range ic.Workloads {
		refs = append(refs, workloadRef(w))
		s := fmt.Sprintf("%s/%s/%s (%d/%d available)", w.Kind, w.Namespace, w.Name, w.Available, w.Desired)
		if w.Available > 0 {
			avail = append(avail, s)
		} else {
			unavail = append(unavail, s)
		}
	}
	if len(avail) == 0 {
		return Fail("%s controller for IngressClass %s has no available replica: %s", flavour(ic.Class), ic.Class.Name, strings.Join(unavail, ", ")).
			WithHint(fmt.Sprintf("kubectl describe %s -n %s %s; kubectl get pods -n %s", strings.ToLower(ic.Workloads[0].Kind), ic.Workloads[0].Namespace, ic.Workloads[0].Name, ic.Workloads[0].Namespace)).
			WithObjects(refs...), nil
	}
	return Pass("%s controller: %s", flavour(ic.Class), strings.Join(avail, ", ")).WithObjects(refs...), nil
}
