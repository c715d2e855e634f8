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
// platform, the tunnel server or the Git provider has none (chart 0.30's
// global proxy reaches app-proxy, argo-gateway, the event reporters and
// the hooks only,
// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/values.yaml#L148-L153),
// naming the values key that gives that pod its environment, found by
// Helm's render (chart.Pending.EnvKeys), or saying that the chart has no
// value for it; when a proxied pod's NO_PROXY, judged by Go's own matching
// (golang.org/x/net/http/httpproxy, what the runtime's Go programs use),
// sends an in-cluster destination to the proxy (argo-cd#14280), naming the
// entries to add; and when a platform CA is configured and a pod that calls
// the platform mounts none. An Argo CD repository with its own proxy
// (argo-cd.configs.repositories.<name>.proxy) is reached through it.
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
	ri, pods, skip, err := egressOfRun(ctx, env)
	if skip != nil || err != nil {
		return deref(skip), err
	}
	in := env.Inputs
	// The proxy: the global values', else the first proxied pod's.
	httpProxy, httpsProxy := in.HTTPProxy, in.HTTPSProxy
	for _, p := range pods {
		if httpProxy == "" && httpsProxy == "" && p.Proxied {
			httpProxy, httpsProxy = p.HTTPProxy, p.HTTPSProxy
		}
	}
	proxySet := httpProxy != "" || httpsProxy != ""

	msgs := make([][]string, len(pods))
	var unproxied []int // pods that call outside with no proxy
	entries := map[string]bool{}
	external, proxied := 0, 0
	for i, p := range pods {
		var ext []string
		for _, d := range p.Dests {
			if d.External && d.Proxy == "" {
				ext = append(ext, d.label())
			}
		}
		if len(ext) > 0 {
			external++
		}
		mustProxy := proxySet && len(ext) > 0 && !p.Proxied
		if mustProxy {
			unproxied = append(unproxied, i)
			// proxyValues ends it with the value to set.
			msgs[i] = append(msgs[i], "calls "+strings.Join(ext, ", ")+" with no proxy (no HTTP_PROXY/HTTPS_PROXY in its environment: the chart's global proxy does not reach it)")
		}
		if p.Proxied || mustProxy {
			// Its NO_PROXY: its own, or the global one it is to get.
			cfg := httpproxy.Config{HTTPProxy: p.HTTPProxy, HTTPSProxy: p.HTTPSProxy, NoProxy: p.NoProxy}
			if mustProxy {
				cfg = httpproxy.Config{HTTPProxy: httpProxy, HTTPSProxy: httpsProxy, NoProxy: in.NoProxy}
			}
			via := cfg.ProxyFunc()
			var leaks []string
			for _, d := range p.Dests {
				if d.External {
					continue
				}
				if px, err := via(d.URL); err == nil && px != nil {
					leaks = append(leaks, d.label())
					entries[d.URL.Hostname()] = true
				}
			}
			if p.Proxied {
				proxied++
				if len(leaks) > 0 {
					msgs[i] = append(msgs[i], "sends "+strings.Join(leaks, ", ")+" to the proxy: NO_PROXY "+noProxyWords(p)+" does not cover them")
				}
			}
		}
		if in.PlatformCA && !p.MountsCA {
			for _, d := range p.Dests {
				if d.What == "the platform" {
					msgs[i] = append(msgs[i], "calls the platform without the platform CA (Secret "+in.PlatformCASecret+") mounted")
					break
				}
			}
		}
	}
	noProxy := strings.Trim(strings.Join(append([]string{in.NoProxy}, sortedKeys(entries)...), ","), ",")
	var hints []string
	if len(entries) > 0 {
		hints = append(hints, fmt.Sprintf("add %s to NO_PROXY (the global value reaches the components the global proxy reaches):\n  --set-string 'global.noProxy=%s'",
			strings.Join(sortedKeys(entries), ","), strings.ReplaceAll(noProxy, ",", `\,`)))
	}
	if len(unproxied) > 0 {
		h, err := proxyValues(ctx, env, ri, pods, unproxied, msgs, [][2]string{{"HTTPS_PROXY", httpsProxy}, {"HTTP_PROXY", httpProxy}, {"NO_PROXY", noProxy}})
		if err != nil {
			return Result{}, err
		}
		hints = append(hints, h...)
	}
	var problems []string
	var objs []ObjectRef
	for i, m := range msgs {
		if len(m) > 0 {
			problems = append(problems, podLabel(pods[i].Pod)+" "+strings.Join(m, "; "))
			objs = append(objs, podObject(pods[i].Pod, in))
		}
	}
	if len(problems) > 0 {
		if in.PlatformCA {
			hints = append(hints, "mount the platform CA where it is missing: gitops-operator mounts it only from global.codefresh.tls.caCerts.secretKeyRef, and the hooks get none")
		}
		return Fail("%d of %d pods lack the egress configuration they need: %s", len(problems), len(pods), strings.Join(problems, "; ")).
			WithHint(strings.Join(hints, "\n")).WithObjects(objs...), nil
	}
	if !proxySet {
		return Pass("no proxy configured; %d of %d pods call the platform, the tunnel server or the Git provider directly", external, len(pods)), nil
	}
	return Pass("the %d pods that call the platform, the tunnel server or the Git provider are proxied; NO_PROXY covers the in-cluster destinations of all %d proxied pods", external, proxied), nil
}

// proxyValues names, in msgs (each pod's first: the call with no proxy),
// the values key that gives each pod of
// unproxied its environment (chart.Pending.EnvKeys: the key that reaches
// the fewest pods besides it), or says that its chart has none, and
// returns the hint lines that set vars (NAME, value; empty values left
// out) through each key.
func proxyValues(ctx context.Context, env *Env, ri *renderedImages, pods []podEgress, unproxied []int, msgs [][]string, vars [][2]string) ([]string, error) {
	keys, failed, err := env.Chart.EnvKeys(ctx)
	if err != nil {
		return nil, err
	}
	var set [][2]string
	for _, v := range vars {
		if v[1] != "" {
			set = append(set, v)
		}
	}
	var hints []string
	chosen := map[string]bool{}
	for _, i := range unproxied {
		p := pods[i].Pod
		ks := keys[p.Kind+"/"+p.Namespace+"/"+p.Name]
		if len(ks) == 0 && len(failed) > 0 {
			msgs[i][0] += fmt.Sprintf("; no value of chart %s found for this, and %s", p.Chart(ri.r.ChartName), couldNotTrace(failed))
			continue
		}
		if len(ks) == 0 {
			msgs[i][0] += fmt.Sprintf("; chart %s has no value for this", p.Chart(ri.r.ChartName))
			hints = append(hints, fmt.Sprintf("chart %s has no value that gives %s an environment: route its egress through a transparent proxy, or allow it direct egress", p.Chart(ri.r.ChartName), p.Ref()))
			continue
		}
		k := ks[0]
		msgs[i][0] += "; the value that gives it one: " + k.SetPath()
		if chosen[k.SetPath()] {
			continue
		}
		chosen[k.SetPath()] = true
		flags := k.SetFlags(set)
		if flags == nil {
			var items []string
			for _, v := range set {
				items = append(items, fmt.Sprintf("{name: %s, value: %q}", v[0], v[1]))
			}
			hints = append(hints, fmt.Sprintf("give %s its proxy: append %s to %s in your values file", p.Ref(), strings.Join(items, ", "), k.SetPath()))
			continue
		}
		hints = append(hints, fmt.Sprintf("give %s its proxy:\n  %s", p.Ref(), strings.Join(flags, "\n  ")))
	}
	return hints, nil
}

// noProxyWords is the pod's NO_PROXY as a message shows it: quoted, or,
// read from a Secret, that Secret's name and key (a Secret's value is
// never printed).
func noProxyWords(p podEgress) string {
	if p.NoProxyFrom != "" {
		return "(from " + p.NoProxyFrom + ")"
	}
	return quoteOr(p.NoProxy)
}

// quoteOr quotes s, or says it is empty.
func quoteOr(s string) string {
	if s == "" {
		return "(empty)"
	}
	return fmt.Sprintf("%q", s)
}
