package checks

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/net/http/httpproxy"
)

// EgressConfig judges, from the rendered release, each pod's proxy
// environment and CA mounts against the destinations it needs (see
// egressOfRun). Fails when a proxy is configured (global.httpProxy /
// httpsProxy, or a pod's own HTTP(S)_PROXY) and a pod that calls the
// platform or the tunnel server has none (chart 0.30's global proxy reaches
// app-proxy, argo-gateway, the event reporters and the hooks only,
// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/values.yaml#L148-L153);
// when a proxied pod's NO_PROXY, judged by Go's own matching
// (golang.org/x/net/http/httpproxy, what the runtime's Go programs use),
// sends an in-cluster destination to the proxy (argo-cd#14280), naming the
// entries to add; and when a platform CA is configured and a pod that calls
// the platform mounts none.
func EgressConfig() Check {
	return Check{
		Meta: Meta{
			ID:         "egress-config",
			Impact:     ImpactRuntimeBreaks,
			Category:   CategoryEgress,
			Modes:      ModePre | ModeUpgrade,
			Title:      "Every pod that needs egress gets the proxy, NO_PROXY and CA it needs",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
			ReadsChart: true,
		},
		Run: runEgressConfig,
	}
}

func runEgressConfig(ctx context.Context, env *Env) (Result, error) {
	ri, skip, err := imagesOfRun(ctx, env)
	if skip != nil || err != nil {
		return deref(skip), err
	}
	pods, err := egressOfRun(ctx, env, ri)
	if err != nil {
		return Result{}, err
	}
	in := env.Inputs
	proxySet := in.HTTPProxy != "" || in.HTTPSProxy != ""
	for _, p := range pods {
		proxySet = proxySet || p.Proxied
	}
	var problems []string
	var objs []ObjectRef
	addEntries := map[string]bool{}
	external, proxied := 0, 0
	for _, p := range pods {
		var ext []string
		for _, d := range p.Dests {
			if d.External {
				ext = append(ext, d.What+" ("+d.URL.Host+")")
			}
		}
		if len(ext) > 0 {
			external++
		}
		var msgs []string
		if proxySet && len(ext) > 0 && !p.Proxied {
			msgs = append(msgs, "calls "+strings.Join(ext, ", ")+" with no proxy (no HTTP_PROXY/HTTPS_PROXY in its environment; the chart's global.httpProxy does not reach it)")
		}
		if p.Proxied {
			proxied++
			cfg := httpproxy.Config{HTTPProxy: p.HTTPProxy, HTTPSProxy: p.HTTPSProxy, NoProxy: p.NoProxy}
			via := cfg.ProxyFunc()
			var leaks []string
			for _, d := range p.Dests {
				if d.External {
					continue
				}
				if px, err := via(d.URL); err == nil && px != nil {
					leaks = append(leaks, d.What+" ("+d.URL.Host+")")
					addEntries[d.URL.Hostname()] = true
				}
			}
			if len(leaks) > 0 {
				msgs = append(msgs, "sends "+strings.Join(leaks, ", ")+" to the proxy: NO_PROXY "+quoteOr(p.NoProxy)+" does not cover them")
			}
		}
		if in.PlatformCA && !p.MountsCA {
			for _, d := range p.Dests {
				if d.What == "the platform" {
					msgs = append(msgs, "calls the platform without the platform CA (Secret "+in.PlatformCASecret+") mounted")
					break
				}
			}
		}
		if len(msgs) > 0 {
			problems = append(problems, podLabel(p.Pod)+" "+strings.Join(msgs, "; "))
			objs = append(objs, podObject(p.Pod, in))
		}
	}
	if len(problems) > 0 {
		var hints []string
		if len(addEntries) > 0 {
			entries := sortedKeys(addEntries)
			noProxy := strings.Trim(strings.Join(append([]string{in.NoProxy}, entries...), ","), ",")
			hints = append(hints, "add "+strings.Join(entries, ",")+" to NO_PROXY: --set-string 'global.noProxy="+strings.ReplaceAll(noProxy, ",", `\,`)+"' (and to the env of each proxied component the global values do not reach)")
		}
		hints = append(hints, "give every component that calls the platform or the tunnel server HTTPS_PROXY and NO_PROXY through its own env value where global.httpProxy does not reach it")
		if in.PlatformCA {
			hints = append(hints, "mount the platform CA where it is missing: gitops-operator mounts it only from global.codefresh.tls.caCerts.secretKeyRef, and the hooks get none")
		}
		return Fail("%d of %d pods lack the egress configuration they need: %s", len(problems), len(pods), strings.Join(problems, "; ")).
			WithHint(strings.Join(hints, "; ")).WithObjects(objs...), nil
	}
	if !proxySet {
		return Pass("no proxy configured; %d of %d pods call the platform or the tunnel server directly", external, len(pods)), nil
	}
	return Pass("%d pods that call the platform or the tunnel server are proxied; NO_PROXY covers the in-cluster destinations of all %d proxied pods", external, proxied), nil
}

// quoteOr quotes s, or says it is empty.
func quoteOr(s string) string {
	if s == "" {
		return "(empty)"
	}
	return fmt.Sprintf("%q", s)
}
