package checks

import (
	"context"
	"net/url"
)

// IngressURLCheck (service-mesh mode) passes when global.runtime.ingressUrl
// is a valid http(s) URL that answers an HTTP request with any status
// (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl#L336-L369 step 4: "Only http and https are supported";
// https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Validated settings", Access mode).
func IngressURLCheck() Check {
	return Check{
		Meta: Meta{
			ID:       "ingress-url",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryServiceMesh,
			Modes:    ModePre,
			Title:    "Runtime ingress URL is valid and answers",
			Severity: SeverityFail,
			Offline:  true,
			Applies:  Applies{Access: []AccessMode{AccessServiceMesh}},
		},
		Run: runIngressURL,
	}
}

func runIngressURL(ctx context.Context, env *Env) (Result, error) {
	raw := env.Inputs.IngressURL
	u, err := url.Parse(raw)
	if raw == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Fail("global.runtime.ingressUrl %q is not an http(s) URL", raw).
			WithHint("--set global.runtime.ingressUrl=https://<runtime host> (or --ingress-url)").WithSource(env.Source("global.runtime.ingressUrl")), nil
	}
	res, err := env.Probe.HTTP(ctx, raw, "")
	if unanswered(err) {
		return Result{}, err
	}
	if err != nil {
		return Fail("HEAD %s: %v", raw, err).
			WithHint("route the host to Service internal-router port 80 through your mesh gateway (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/: Istio \"Cluster routing service\") and check DNS/TLS").WithSource(env.Source("global.runtime.ingressUrl")), nil
	}
	return Pass("HEAD %s answered %s", raw, res.Status), nil
}
