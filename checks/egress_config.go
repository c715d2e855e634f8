package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/images"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/netpol"
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
	rep := netpol.ProxyFindings(pods, netpol.Proxy{HTTP: in.HTTPProxy, HTTPS: in.HTTPSProxy, NoProxy: in.NoProxy}, in.PlatformCA)
	msgs := make([][]string, len(pods))
	var unproxied []int // pods that call outside with no proxy
	for i, f := range rep.Pods {
		if len(f.Direct) > 0 {
			unproxied = append(unproxied, i)
			// proxyValues ends it with the value to set.
			msgs[i] = append(msgs[i], "calls "+strings.Join(f.Direct, ", ")+" with no proxy (no HTTP_PROXY/HTTPS_PROXY in its environment: the chart's global proxy does not reach it)")
		}
		if len(f.Leaks) > 0 {
			msgs[i] = append(msgs[i], "sends "+strings.Join(f.Leaks, ", ")+" to the proxy: NO_PROXY "+noProxyWords(pods[i])+" does not cover them")
		}
		if f.NoCA {
			msgs[i] = append(msgs[i], "calls the platform without the platform CA (Secret "+in.PlatformCASecret+") mounted")
		}
	}
	noProxy := strings.Trim(strings.Join(append([]string{in.NoProxy}, rep.NoProxyAdd...), ","), ",")
	var hints []string
	if len(rep.NoProxyAdd) > 0 {
		hints = append(hints, fmt.Sprintf("add %s to NO_PROXY (the global value reaches the components the global proxy reaches):\n  --set-string 'global.noProxy=%s'",
			strings.Join(rep.NoProxyAdd, ","), strings.ReplaceAll(noProxy, ",", `\,`)))
	}
	if len(unproxied) > 0 {
		h, err := proxyValues(ctx, env, ri, pods, unproxied, msgs, [][2]string{{"HTTPS_PROXY", rep.Proxy.HTTPS}, {"HTTP_PROXY", rep.Proxy.HTTP}, {"NO_PROXY", noProxy}})
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
	if !rep.Proxy.Set() {
		return Pass("no proxy configured; %d of %d pods call the platform, the tunnel server or the Git provider directly", rep.External, len(pods)), nil
	}
	return Pass("the %d pods that call the platform, the tunnel server or the Git provider are proxied; NO_PROXY covers the in-cluster destinations of all %d proxied pods", rep.External, rep.Proxied), nil
}

// egressOfRun is the egress of every pod of the run's rendering
// (netpol.Egress), once per snapshot. It reads the rendering first
// (imagesOfRun: skip is set when there is none to read), and the
// ClusterIP of Service default/kubernetes: the API server's address.
func egressOfRun(ctx context.Context, env *Env) (ri *images.Rendered, pods []netpol.PodEgress, skip *Result, err error) {
	if ri, skip, err = imagesOfRun(ctx, env); skip != nil || err != nil {
		return nil, nil, skip, err
	}
	pods, err = memoOr(env, "egress/pods", func() ([]netpol.PodEgress, error) {
		apiIP := ""
		if svc, found, err := env.Cluster.Service("default", "kubernetes"); err != nil {
			return nil, err
		} else if found && len(svc.ClusterIPs) > 0 {
			apiIP = svc.ClusterIPs[0]
		}
		in := env.Inputs
		return netpol.Egress(ri.Rendering, ri.Pods, netpol.Release{Namespace: in.Namespace, PlatformURL: in.PlatformURL, TunnelServer: in.TunnelServer,
			Tunnel: in.AccessMode == AccessTunnel, PlatformCASecret: in.PlatformCASecret, APIServerIP: apiIP}), nil
	})
	return ri, pods, nil, err
}

// proxyValues names, in msgs (each pod's first: the call with no proxy),
// the values key that gives each pod of
// unproxied its environment (chart.Pending.EnvKeys: the key that reaches
// the fewest pods besides it), or says that its chart has none, and
// returns the hint lines that set vars (NAME, value; empty values left
// out) through each key.
func proxyValues(ctx context.Context, env *Env, ri *images.Rendered, pods []netpol.PodEgress, unproxied []int, msgs [][]string, vars [][2]string) ([]string, error) {
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
			msgs[i][0] += fmt.Sprintf("; no value of chart %s found for this, and %s", p.Chart(ri.Rendering.ChartName), couldNotTrace(failed))
			continue
		}
		if len(ks) == 0 {
			msgs[i][0] += fmt.Sprintf("; chart %s has no value for this", p.Chart(ri.Rendering.ChartName))
			hints = append(hints, fmt.Sprintf("chart %s has no value that gives %s an environment: route its egress through a transparent proxy, or allow it direct egress", p.Chart(ri.Rendering.ChartName), p.Ref()))
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
func noProxyWords(p netpol.PodEgress) string {
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

// sortedKeys returns m's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
