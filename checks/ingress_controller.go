package checks

import (
	"context"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/ingressclass"
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
		return Fail("no %s controller workload serves IngressClass %s", ingressclass.Flavour(ic.Class), ic.Class.Name).
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
		return Fail("%s controller for IngressClass %s has no available replica: %s", ingressclass.Flavour(ic.Class), ic.Class.Name, strings.Join(unavail, ", ")).
			WithHint(fmt.Sprintf("kubectl describe %s -n %s %s; kubectl get pods -n %s", strings.ToLower(ic.Workloads[0].Kind), ic.Workloads[0].Namespace, ic.Workloads[0].Name, ic.Workloads[0].Namespace)).
			WithObjects(refs...), nil
	}
	return Pass("%s controller: %s", ingressclass.Flavour(ic.Class), strings.Join(avail, ", ")).WithObjects(refs...), nil
}

// lookupIngress finds the planned class's controller (ingressclass.Lookup), once
// per run.
func lookupIngress(env *Env) (*ingressclass.Controller, error) {
	name := env.Inputs.IngressClass
	return cluster.Memo(env.Cluster, "checks/ingress-controller/"+name, func() (*ingressclass.Controller, error) {
		return ingressclass.Lookup(env.Cluster, name)
	})
}

// ingressNeeds returns the planned class's controller, or a skip result
// (non-empty Status) when the class is missing: ingress-class reports that,
// so the dependants do not repeat it.
func ingressNeeds(env *Env) (*ingressclass.Controller, Result, error) {
	ic, err := lookupIngress(env)
	if err != nil {
		return nil, Result{}, err
	}
	if ic.Class == nil {
		return ic, Skip("IngressClass %s does not exist (see ingress-class)", ic.ClassName), nil
	}
	return ic, Result{}, nil
}

// imageName is an image's repository and its base name (ingressclass.ImageName).
func imageName(image string) (repo, base string) { return ingressclass.ImageName(image) }

func workloadRef(w cluster.Workload) ObjectRef {
	return ObjectRef{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name}
}

func serviceRef(s *cluster.Service) ObjectRef {
	return ObjectRef{Kind: "Service", Namespace: s.Namespace, Name: s.Name}
}
