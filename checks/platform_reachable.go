package checks

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// PlatformReachableCheck (tunnel mode) passes when the platform URL
// (global.codefresh.url, default https://g.codefresh.io) and the tunnel
// register host (tunnel-client.tunnelServer.host, default
// register-tunnels.cf-cd.com, port 443) complete a verified TLS handshake
// from this workstation (runtime URL: https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl#L336-L369;
// egress hosts: https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/values.yaml). It is
// advisory (SeverityWarn): the workstation's egress is not the cluster's.
func PlatformReachableCheck() Check {
	return Check{
		Meta: Meta{
			ID:       "platform-reachable",
			Impact:   ImpactAdvisory,
			Category: CategoryTunnel,
			Modes:    ModePre,
			Title:    "Codefresh platform and tunnel server answer over TLS",
			Severity: SeverityWarn,
			Offline:  true,
			Applies:  Applies{Access: []AccessMode{AccessTunnel}},
		},
		Run: runPlatformReachable,
	}
}

func runPlatformReachable(ctx context.Context, env *Env) (Result, error) {
	platform, tunnel := env.Inputs.PlatformURL, env.Inputs.TunnelServer
	type target struct{ what, host, port string }
	var targets []target
	u, err := url.Parse(platform)
	if err != nil || u.Hostname() == "" {
		return Fail("global.codefresh.url %q is not a URL", platform).WithSource(env.Source("global.codefresh.url")), nil
	}
	pport := u.Port()
	if pport == "" {
		pport = "443"
	}
	targets = append(targets, target{"platform", u.Hostname(), pport})
	th, tp := plan.HostPort(tunnel, "443")
	targets = append(targets, target{"tunnel server", th, tp})

	var ok, bad []string
	for _, t := range targets {
		res, err := env.Probe.TLS(ctx, t.host, t.port, "")
		if unanswered(err) {
			return Result{}, err
		}
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("%s %s:%s: %v", t.what, t.host, t.port, err))
		case !res.OK():
			why := "certificate not valid"
			switch {
			case res.ChainErr != nil:
				why = "untrusted certificate chain (a TLS-inspecting proxy? pass --ca-file)"
			case res.HostErr != nil:
				why = "certificate does not cover the host"
			case res.Expired:
				why = "certificate expired"
			}
			bad = append(bad, fmt.Sprintf("%s %s:%s: %s", t.what, t.host, t.port, why))
		default:
			ok = append(ok, fmt.Sprintf("%s %s:%s", t.what, t.host, t.port))
		}
	}
	where := "probed from this workstation, not from the cluster"
	if env.InCluster {
		where = "probed from the pod network, as the runtime's pods and the chart's validate-values hook will reach them"
	}
	if len(bad) > 0 {
		return Fail("%s (%s)", strings.Join(bad, "; "), where).
			WithHint("the cluster's nodes need HTTPS egress to these hosts (firewall, proxy: global.httpsProxy); from a node: curl -sI https://" + targets[0].host), nil
	}
	return Pass("%s answer over TLS (%s)", strings.Join(ok, " and "), where), nil
}
