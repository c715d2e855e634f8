package checks

import (
	"context"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// IngressHostReachableCheck passes when an HTTP request to
// <protocol>://<host> gets any HTTP answer, as the chart's validator's HEAD
// does (https://github.com/codefresh-io/cli-v2/blob/v0.2.16/cmd/commands/helm.go: any status is accepted; transport, DNS and TLS
// errors fail). Skipped with --skip-ingress-validation or
// global.runtime.ingress.skipValidation (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/,
// "Disable ingress validation"). When the host does not resolve yet, the
// controller's external address is probed with Host and SNI = host.
func IngressHostReachableCheck() Check {
	return Check{
		Meta: Meta{
			ID:       "ingress-host-reachable",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryIngress,
			Modes:    ModePre,
			Title:    "Ingress host answers HTTP",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
			Applies:  Applies{Access: []AccessMode{AccessIngress}, Needs: []Input{InputIngressHost}},
		},
		Run: runIngressHostReachable,
	}
}

func runIngressHostReachable(ctx context.Context, env *Env) (Result, error) {
	if env.Inputs.SkipIngressValidation {
		return Skip("ingress validation disabled (--skip-ingress-validation / global.runtime.ingress.skipValidation)"), nil
	}
	proto := ingressProtocol(env)
	host, port := plan.HostPort(env.Inputs.IngressHost, map[string]string{"http": "80"}[proto])
	if port == "" {
		port = "443"
	}
	u := proto + "://" + env.Inputs.IngressHost
	via, note, err := dialPlan(ctx, env, host, port)
	hint := "create the DNS record for " + host + " pointing at the ingress controller's external address, or install with --set global.runtime.ingress.skipValidation=true if DNS will only exist later"
	if unanswered(err) {
		return Result{}, err
	}
	if err != nil {
		return Fail("HEAD %s: %v", u, err).WithHint(hint).WithSource(env.Source("global.runtime.ingress.hosts[0]")), nil
	}
	res, err := env.Probe.HTTP(ctx, u, via)
	if unanswered(err) {
		return Result{}, err
	}
	if err != nil {
		return Fail("HEAD %s: %v%s", u, err, note).WithHint(hint).WithSource(env.Source("global.runtime.ingress.hosts[0]")), nil
	}
	return Pass("HEAD %s answered %s%s", u, res.Status, note), nil
}
