package checks

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// Routing of the runtime through Istio (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/,
// "Cluster routing service"): runtime 0.0.543 or higher needs one
// VirtualService routing /webhooks, /app-proxy and /workflows to
// internal-router port 80; 0.0.542 or lower routes /app-proxy to
// cap-app-proxy port 3017 and /webhooks/<runtime>/<event-source> to
// <event-source>-eventsource-svc port 80.
var (
	internalRouterMinVersion = semver.MustParse("0.0.543")
	InternalRouterPaths      = []string{"/webhooks", "/app-proxy", "/workflows"}
)

// Destinations of the documented routes.
const (
	internalRouterHost = plan.InternalRouterName
	internalRouterPort = 80
	appProxyHost       = plan.AppProxyName
	appProxyPort       = 3017
	eventSourceSuffix  = "-eventsource-svc"
)

// IstioVirtualService passes, when the runtime is reached through Istio (an
// IngressClass of controller istio.io/ingress-controller, or service-mesh
// mode with the VirtualService API served), when a VirtualService in the
// runtime namespace for the runtime host routes the documented paths to the
// documented destinations for the runtime's version (codefresh-cm `version`,
// compared with Masterminds semver). It reports each missing or misrouted path.
func IstioVirtualService() Check {
	return Check{
		Meta: Meta{
			ID:       "istio-virtualservice",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryServiceMesh,
			Modes:    ModePost,
			Title:    "An Istio VirtualService routes /webhooks, /app-proxy and /workflows of the host to internal-router:80",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
		},
		Run: runIstioVirtualService,
	}
}

func runIstioVirtualService(_ context.Context, env *Env) (Result, error) {
	f, err := runtimeFacts(env)
	if err != nil {
		return Result{}, err
	}
	ns := env.Inputs.Namespace
	switch f.Mode {
	case AccessIngress:
		if f.Controller != ControllerIstio {
			return Skip("IngressClass %s is not Istio (%s)", f.Class, ControllerIstio), nil
		}
	case AccessServiceMesh:
	default:
		return Skip("access mode %s does not route through Istio", f.Mode), nil
	}
	vss, served, err := env.Cluster.VirtualServices(ns)
	if err != nil {
		return Result{}, err
	}
	if !served {
		if f.Mode == AccessServiceMesh {
			return Skip("service-mesh mode without Istio: the networking.istio.io VirtualService API is not served"), nil
		}
		return Fail("IngressClass %s is Istio, but the networking.istio.io VirtualService API is not served", f.Class).
			WithHint("install Istio's CRDs (istioctl install) and create the VirtualService of docs/checks/istio-virtualservice.md"), nil
	}
	if f.Host == "" {
		return Fail("the runtime host is unknown: codefresh-cm has no ingressHost").
			WithHint("pass it with --ingress-host or --ingress-url"), nil
	}
	legacy := false
	version := f.ConfigMap["version"]
	if v, err := semver.NewVersion(version); err == nil && v.LessThan(internalRouterMinVersion) {
		legacy = true
	}
	var routes []cluster.HTTPRoute
	var names []string
	sort.SliceStable(vss, func(i, j int) bool { return vss[i].Name < vss[j].Name })
	for _, vs := range vss {
		if hostMatches(vs.Hosts, f.Host) {
			routes = append(routes, vs.HTTP...)
			names = append(names, vs.Name)
		}
	}
	var problems []string
	if legacy {
		problems = legacyRouteProblems(routes, env.Inputs.RuntimeName)
	} else {
		for _, p := range InternalRouterPaths {
			problems = append(problems, routeProblem(routes, p, internalRouterHost, internalRouterPort, ns)...)
		}
	}
	what := fmt.Sprintf("runtime %s", orUnknown(version))
	if len(problems) == 0 {
		return Pass("VirtualService %s routes host %s as %s needs", strings.Join(names, ", "), f.Host, what), nil
	}
	subject := fmt.Sprintf("no VirtualService in namespace %s for host %s", ns, f.Host)
	if len(names) > 0 {
		subject = fmt.Sprintf("VirtualService %s for host %s", strings.Join(names, ", "), f.Host)
	}
	hint := fmt.Sprintf("create or fix the VirtualService in namespace %s (hosts: [%s]; gateways: [<ns>/<gateway>]) as in docs/checks/istio-virtualservice.md; check with: kubectl get virtualservices -n %s -o yaml", ns, f.Host, ns)
	refs := make([]ObjectRef, 0, len(names))
	for _, n := range names {
		refs = append(refs, ObjectRef{Kind: "VirtualService", Namespace: ns, Name: n})
	}
	return Fail("%s (%s): %s", subject, what, strings.Join(problems, "; ")).WithHint(hint).WithObjects(refs...), nil
}

func orUnknown(s string) string {
	if s == "" {
		return "version unknown"
	}
	return s
}

// hostMatches reports whether a VirtualService's hosts cover host ("*",
// exact, or a "*.domain" wildcard).
func hostMatches(hosts []string, host string) bool {
	for _, h := range hosts {
		switch {
		case h == "*", strings.EqualFold(h, host):
			return true
		case strings.HasPrefix(h, "*.") && strings.HasSuffix(strings.ToLower(host), strings.ToLower(h[1:])):
			return true
		}
	}
	return false
}

// firstRoute returns the first route (Istio evaluates them in order) whose
// uri matches path.
func firstRoute(routes []cluster.HTTPRoute, path string) (cluster.HTTPRoute, bool) {
	for _, r := range routes {
		if len(r.URIs) == 0 {
			return r, true
		}
		for _, u := range r.URIs {
			switch u.Kind {
			case "prefix":
				if strings.HasPrefix(path, u.Value) {
					return r, true
				}
			case "exact":
				if u.Value == path {
					return r, true
				}
			case "regex":
				if re, err := regexp.Compile("^(?:" + u.Value + ")$"); err == nil && re.MatchString(path) {
					return r, true
				}
			}
		}
	}
	return cluster.HTTPRoute{}, false
}

// routeProblem checks that path is routed to host:port (a port of 0 is the
// Service's only port and accepted). It returns a one-element problem list or nil.
func routeProblem(routes []cluster.HTTPRoute, path, host string, port int64, ns string) []string {
	r, ok := firstRoute(routes, path)
	if !ok {
		return []string{fmt.Sprintf("%s is not routed (want %s:%d)", path, host, port)}
	}
	if len(r.Destinations) == 0 {
		return []string{fmt.Sprintf("%s has no destination (want %s:%d)", path, host, port)}
	}
	for _, d := range r.Destinations {
		if !sameService(d.Host, host, ns) || (d.Port != 0 && d.Port != port) {
			return []string{fmt.Sprintf("%s goes to %s:%d (want %s:%d)", path, d.Host, d.Port, host, port)}
		}
	}
	return nil
}

// sameService reports whether an Istio destination host names Service svc of
// namespace ns (short, namespaced or fully qualified).
func sameService(dest, svc, ns string) bool {
	dest = strings.TrimSuffix(strings.ToLower(dest), ".")
	return slices.Contains([]string{svc, svc + "." + ns, svc + "." + ns + ".svc", svc + "." + ns + ".svc.cluster.local"}, dest)
}

// legacyRouteProblems checks the ≤0.0.542 layout: /app-proxy to
// cap-app-proxy:3017, and at least one /webhooks/<runtime>/<event-source>
// route, each to <event-source>-eventsource-svc:80.
func legacyRouteProblems(routes []cluster.HTTPRoute, runtime string) []string {
	problems := routeProblem(routes, "/app-proxy", appProxyHost, appProxyPort, "")
	prefix := "/webhooks/" + runtime + "/"
	webhooks := 0
	for _, r := range routes {
		for _, u := range r.URIs {
			if u.Kind != "prefix" || !strings.HasPrefix(u.Value, prefix) {
				continue
			}
			webhooks++
			es := strings.Trim(strings.TrimPrefix(u.Value, prefix), "/")
			want := es + eventSourceSuffix
			for _, d := range r.Destinations {
				if strings.Split(d.Host, ".")[0] != want || (d.Port != 0 && d.Port != internalRouterPort) {
					problems = append(problems, fmt.Sprintf("%s goes to %s:%d (want %s:80)", u.Value, d.Host, d.Port, want))
				}
			}
		}
	}
	if webhooks == 0 {
		problems = append(problems, fmt.Sprintf("no %s<event-source> route (want <event-source>%s:80 for each event source)", prefix, eventSourceSuffix))
	}
	return problems
}
