package checks

import (
	"context"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/ingressclass"
)

// IngressReportStatusCheck passes when the controller writes its address to
// Ingress objects' status; without it Argo CD keeps the runtime's Ingress
// "Progressing" and `helm install --wait` times out (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "NGINX Ingress: Enable report status to
// cluster", "NGINX Ingress Operator: Enable report status to cluster",
// Traefik "Enable report status to cluster"):
//   - NGINX by F5: -report-ingress-status (one or two dashes);
//   - NGINX Ingress Operator: NginxIngressController spec.reportIngressStatus.enable: true;
//   - Traefik: --providers.kubernetesingress.ingressendpoint.publishedservice
//     naming an existing Service, or ingressendpoint.ip / .hostname;
//   - ingress-nginx: reports by default unless --update-status=false.
//
// Other controllers have no documented setting: skip.
func IngressReportStatusCheck() Check {
	return Check{
		Meta: Meta{
			ID:       "ingress-report-status",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryIngress,
			Modes:    ModePre,
			Title:    "Ingress controller reports status to Ingress objects",
			Severity: SeverityFail,
			Requires: []string{"ingress-controller"},
			Applies:  Applies{Access: []AccessMode{AccessIngress}},
		},
		Run: runIngressReportStatus,
	}
}

const (
	snippetF5 = `spec:
  template:
    spec:
      containers:
        - args:
            - -report-ingress-status`
	snippetOperator = `spec:
  reportIngressStatus:
    enable: true`
	snippetTraefik = `providers:
  kubernetesIngress:
    ingressEndpoint:
      publishedService: "<namespace>/<traefik-service>"`
)

func runIngressReportStatus(_ context.Context, env *Env) (Result, error) {
	ic, r, err := ingressNeeds(env)
	if err != nil || r.Status != "" {
		return r, err
	}
	switch ic.Class.Controller {
	case ControllerNginxF5:
		ops, err := env.Cluster.NginxIngressControllers()
		if err != nil && !cluster.IsForbidden(err) {
			return Result{}, err
		}
		for _, op := range ops {
			if op.IngressClass != ic.Class.Name {
				continue
			}
			ref := ObjectRef{Kind: "NginxIngressController", Namespace: op.Namespace, Name: op.Name}
			if op.ReportIngressStatus {
				return Pass("NginxIngressController %s/%s has spec.reportIngressStatus.enable: true", op.Namespace, op.Name).WithObjects(ref), nil
			}
			return Fail("NginxIngressController %s/%s does not enable spec.reportIngressStatus", op.Namespace, op.Name).
				WithHint(fmt.Sprintf("kubectl edit nginxingresscontroller %s -n %s and add:\n%s", op.Name, op.Namespace, snippetOperator)).WithObjects(ref), nil
		}
		return perWorkload(ic, func(w cluster.Workload) (bool, string) {
			for _, c := range w.Containers {
				if v, ok := ingressclass.ArgValue(ingressclass.AllArgs(c), "report-ingress-status"); ok && v != "false" {
					return true, "-report-ingress-status"
				}
			}
			return false, "-report-ingress-status is not set"
		}, func(w cluster.Workload) string {
			return fmt.Sprintf("kubectl edit %s %s -n %s and add to the controller container:\n%s", strings.ToLower(w.Kind), w.Name, w.Namespace, snippetF5)
		})
	case ControllerTraefik:
		return perWorkloadErr(env, ic)
	case ControllerNginxCommunity:
		return perWorkload(ic, func(w cluster.Workload) (bool, string) {
			for _, c := range w.Containers {
				if v, ok := ingressclass.ArgValue(ingressclass.AllArgs(c), "update-status"); ok && v == "false" {
					return false, "--update-status=false disables status updates"
				}
			}
			return true, "status updates on (default)"
		}, func(w cluster.Workload) string {
			return fmt.Sprintf("kubectl edit %s %s -n %s and remove --update-status=false from the controller args", strings.ToLower(w.Kind), w.Name, w.Namespace)
		})
	}
	return Skip("no report-status setting is documented for %s", ingressclass.Flavour(ic.Class)), nil
}

// perWorkloadErr is the Traefik rule, which needs a Service lookup.
func perWorkloadErr(env *Env, ic *ingressclass.Controller) (Result, error) {
	if len(ic.Workloads) == 0 {
		return Skip("no controller workload for IngressClass %s (see ingress-controller)", ic.Class.Name), nil
	}
	var bad []string
	var refs []ObjectRef
	for _, w := range ic.Workloads {
		refs = append(refs, workloadRef(w))
		okW := false
		why := "--providers.kubernetesingress.ingressendpoint.publishedservice is not set"
		for _, c := range w.Containers {
			args := ingressclass.AllArgs(c)
			for _, f := range []string{"providers.kubernetesingress.ingressendpoint.ip", "providers.kubernetesingress.ingressendpoint.hostname"} {
				if v, ok := ingressclass.ArgValue(args, f); ok && v != "" {
					okW = true
				}
			}
			if v, ok := ingressclass.ArgValue(args, "providers.kubernetesingress.ingressendpoint.publishedservice"); ok && v != "" {
				ns, name, found := strings.Cut(v, "/")
				if !found {
					ns, name = w.Namespace, v
				}
				_, exists, err := env.Cluster.Service(ns, name)
				if err != nil {
					return Result{}, err
				}
				if exists {
					okW = true
				} else {
					why = fmt.Sprintf("publishedservice names Service %s/%s, which does not exist", ns, name)
				}
			}
		}
		if !okW {
			bad = append(bad, fmt.Sprintf("%s/%s/%s: %s", w.Kind, w.Namespace, w.Name, why))
		}
	}
	if len(bad) > 0 {
		return Fail("Traefik does not report Ingress status: %s", strings.Join(bad, "; ")).
			WithHint("set in the Traefik Helm values (or --providers.kubernetesingress.ingressendpoint.publishedservice=<ns>/<svc>):\n" + snippetTraefik).
			WithObjects(refs...), nil
	}
	return Pass("Traefik publishes its Service address to Ingress status").WithObjects(refs...), nil
}

func perWorkload(ic *ingressclass.Controller, ok func(cluster.Workload) (bool, string), hint func(cluster.Workload) string) (Result, error) {
	if len(ic.Workloads) == 0 {
		return Skip("no controller workload for IngressClass %s (see ingress-controller)", ic.Class.Name), nil
	}
	var refs []ObjectRef
	var bad []string
	var hints []string
	var why string
	for _, w := range ic.Workloads {
		refs = append(refs, workloadRef(w))
		good, reason := ok(w)
		why = reason
		if !good {
			bad = append(bad, fmt.Sprintf("%s/%s/%s: %s", w.Kind, w.Namespace, w.Name, reason))
			hints = append(hints, hint(w))
		}
	}
	if len(bad) > 0 {
		return Fail("%s does not report Ingress status: %s", ingressclass.Flavour(ic.Class), strings.Join(bad, "; ")).
			WithHint(strings.Join(hints, "\n")).WithObjects(refs...), nil
	}
	return Pass("%s reports Ingress status (%s)", ingressclass.Flavour(ic.Class), why).WithObjects(refs...), nil
}
