package checks

import (
	"context"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/installed"
)

// RuntimeIngressStatus passes, in ingress mode, when the runtime Ingress
// (codefresh-gitops-runtime, or ingress-master for legacy runtimes;
// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/ingress.yaml) has an address in status.loadBalancer.ingress. An
// empty status means the ingress controller does not report status to
// Ingress objects, so Argo CD's health check stays "Progressing" and the
// install times out (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "NGINX Ingress: Enable
// report status to cluster", "Traefik ... Enable report status to cluster");
// the pre-install check ingress-report-status names the setting.
func RuntimeIngressStatus() Check {
	return Check{
		Meta: Meta{
			ID:       "runtime-ingress-status",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryIngress,
			Modes:    ModePost,
			Title:    "The runtime Ingress has a load-balancer address in its status",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
		},
		Run: runRuntimeIngressStatus,
	}
}

func runRuntimeIngressStatus(_ context.Context, env *Env) (Result, error) {
	f, err := runtimeFacts(env)
	if err != nil {
		return Result{}, err
	}
	ns := env.Inputs.Namespace
	if !f.IngressFound {
		if f.Mode == AccessIngress {
			return Fail("no runtime Ingress (%s or %s) in namespace %s", installed.IngressName, installed.LegacyIngressName, ns).
				WithHint(fmt.Sprintf("install with --set global.runtime.ingress.enabled=true and global.runtime.ingress.hosts[0]=<host>, and check the release: helm get manifest %s -n %s | grep -A3 'kind: Ingress'", env.Inputs.ReleaseName, ns)), nil
		}
		return Skip("not in ingress mode (access mode %s): no runtime Ingress in namespace %s", f.Mode, ns), nil
	}
	if len(f.Ingress.LoadBalancer) > 0 {
		addrs := make([]string, len(f.Ingress.LoadBalancer))
		for i, a := range f.Ingress.LoadBalancer {
			addrs[i] = a.String()
		}
		return Pass("Ingress %s/%s has address %s", ns, f.Ingress.Name, strings.Join(addrs, ", ")).WithObjects(runtimeIngressRef(f)), nil
	}
	class := f.Class
	if class == "" {
		class = "<class>"
	}
	return Fail("Ingress %s/%s (class %s) has no address in status.loadBalancer.ingress: the ingress controller does not report status to Ingress objects, so Argo CD sees the runtime as Progressing and the install times out",
		ns, f.Ingress.Name, class).
		WithHint(fmt.Sprintf("find the setting with: kubectl gitops-preflight --only ingress-report-status --ingress-class %s (NGINX by F5: add -report-ingress-status to the controller args; NGINX Ingress Operator: spec.reportIngressStatus.enable: true; Traefik: --providers.kubernetesingress.ingressendpoint.publishedservice=<namespace>/<service>); then check: kubectl get ingress %s -n %s", class, f.Ingress.Name, ns)).
		WithObjects(runtimeIngressRef(f)), nil
}
