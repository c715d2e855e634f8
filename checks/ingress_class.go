package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/ingressclass"
)

// IngressClassCheck passes when the planned IngressClass
// (global.runtime.ingress.className, default nginx) exists and its
// spec.controller is one the runtime supports (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/,
// "Ingress controller configuration"; the chart's validator GETs the class,
// https://github.com/codefresh-io/cli-v2/blob/v0.2.16/cmd/commands/helm.go). Missing: fail; unsupported controller: warn.
func IngressClassCheck() Check {
	return Check{
		Meta: Meta{
			ID:       "ingress-class",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryIngress,
			Modes:    ModePre,
			Title:    "IngressClass exists and its controller is supported",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
			Applies:  Applies{Access: []AccessMode{AccessIngress}},
		},
		Run: runIngressClass,
	}
}

// Ingress controllers the runtime supports, by IngressClass spec.controller
// (ingressclass.ControllerNginxCommunity, ...).
const (
	ControllerNginxCommunity = ingressclass.ControllerNginxCommunity
	ControllerNginxF5        = ingressclass.ControllerNginxF5
	ControllerALB            = ingressclass.ControllerALB
	ControllerTraefik        = ingressclass.ControllerTraefik
	ControllerIstio          = ingressclass.ControllerIstio
	ControllerAmbassador     = ingressclass.ControllerAmbassador
)

func runIngressClass(_ context.Context, env *Env) (Result, error) {
	ic, err := lookupIngress(env)
	if err != nil {
		return Result{}, err
	}
	if ic.Class == nil {
		classes, err := env.Cluster.IngressClasses()
		if err != nil {
			return Result{}, err
		}
		var names []string
		for _, c := range classes {
			names = append(names, c.Name+" ("+c.Controller+")")
		}
		sort.Strings(names)
		have := "none"
		if len(names) > 0 {
			have = strings.Join(names, ", ")
		}
		return Fail("IngressClass %s not found; the cluster has: %s", ic.ClassName, have).
			WithHint("install an ingress controller (see \"Ingress controller configuration\" in https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/) or set --ingress-class / global.runtime.ingress.className to an existing class: kubectl get ingressclass").
			WithSource(env.Source("global.runtime.ingress.className")), nil
	}
	ref := ObjectRef{Kind: "IngressClass", Name: ic.Class.Name}
	if !ingressclass.Supported(ic.Class.Controller) {
		return Warn("IngressClass %s has controller %s, which Codefresh does not support", ic.Class.Name, ic.Class.Controller).
			WithHint(fmt.Sprintf("supported controllers: %s, %s, %s, %s, %s, %s", ControllerNginxCommunity, ControllerNginxF5, ControllerALB, ControllerTraefik, ControllerIstio, ControllerAmbassador)).
			WithObjects(ref).WithSource(env.Source("global.runtime.ingress.className")), nil
	}
	return Pass("IngressClass %s: %s (%s)", ic.Class.Name, ic.Class.Controller, ingressclass.Flavour(ic.Class)).WithObjects(ref), nil
}
