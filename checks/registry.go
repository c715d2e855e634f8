package checks

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// All returns the catalogue in report order (README "Checks"). A new check is one
// line here.
func All() []Check {
	return []Check{
		// Pre-install: cluster
		ClusterReachable(),
		KubernetesVersion(),
		ClusterAdmin(),
		NodeResources(),
		RuntimeSchedulable(),
		// tools
		HelmVersion(),
		// conflicts
		ArgoComponents(),
		SealedSecrets(),
		ArgoCRDsOwnership(),
		HelmOwnership(),
		ExistingRuntime(),
		LeftoverRuntimeToken(),
		// inputs
		RuntimeName(),
		RuntimeNamespace(),
		Values(),
		ChartRenders(),
		ValidationHooks(),
		UserTokenSecret(),
		PlatformUserToken(),
		// admission: what the cluster's admission chain refuses (dry runs)
		AdmissionObjects(),
		AdmissionPods(),
		ResourceQuota(),
		AdmissionWebhooks(),
		// images and egress
		ImagePlan(),
		ImagePullSecrets(),
		ImageRegistry(),
		EgressConfig(),
		NetworkPolicies(),
		ClusterDNS(),
		// access modes: ingress, service-mesh, tunnel, existing Argo CD
		IngressClassCheck(),
		IngressControllerCheck(),
		IngressExternalAddressCheck(),
		IngressTLSCheck(),
		IngressTCPCheck(),
		IngressReportStatusCheck(),
		ALBIngressClassCheck(),
		IngressHostReachableCheck(),
		IngressURLCheck(),
		OSMIngress(),
		PlatformReachableCheck(),
		ArgoCDServerCheck(),
		ArgoCDVersionCheck(),
		ArgoCDAdminAPIKeyCheck(),
		// Post-install (--post)
		ReleaseDeployed(),
		ValidateValuesJob(),
		RuntimeWorkloads(),
		RuntimeIngressStatus(),
		NginxTLSSecret(),
		IstioVirtualService(),
		AlbDNSAlias(),
		RolloutsControllers(),
		RuntimeApplicationCheck(),
		// Upgrade (--upgrade)
		ReleaseUpgradable(),
		ReleaseAPIs(),
		UpgradePath(),
		UpgradeValues(),
		UpgradeDeletes(),
		UpgradeApply(),
	}
}

var idPattern = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// Registry is an ordered, validated set of checks.
type Registry struct {
	checks []Check
	byID   map[string]int
}

// NewRegistry validates checks (unique kebab-case IDs, titles, modes, known
// prerequisites) and indexes them.
func NewRegistry(checks []Check) (*Registry, error) {
	r := &Registry{checks: checks, byID: make(map[string]int, len(checks))}
	for i, c := range checks {
		switch {
		case !idPattern.MatchString(c.ID):
			return nil, fmt.Errorf("check ID %q is not kebab-case", c.ID)
		case c.Title == "":
			return nil, fmt.Errorf("check %s has no title", c.ID)
		case c.Modes == 0:
			return nil, fmt.Errorf("check %s runs in no mode", c.ID)
		case c.Run == nil:
			return nil, fmt.Errorf("check %s has no function", c.ID)
		case c.Severity != SeverityFail && c.Severity != SeverityWarn:
			return nil, fmt.Errorf("check %s has severity %q", c.ID, c.Severity)
		case !c.Impact.known():
			return nil, fmt.Errorf("check %s has impact %q (want one of %v)", c.ID, c.Impact, Impacts)
		case c.Severity == SeverityWarn && c.Impact != ImpactAdvisory:
			return nil, fmt.Errorf("check %s warns at worst, so its impact is %s, not %s", c.ID, ImpactAdvisory, c.Impact)
		case len(c.FixOptions) > 0 && !c.Fixable:
			return nil, fmt.Errorf("check %s has fix options %v but is not fixable", c.ID, c.FixOptions)
		}
		for _, n := range c.Applies.Needs {
			if _, ok := inputs[n]; !ok {
				return nil, fmt.Errorf("check %s needs unknown input %q", c.ID, n)
			}
		}
		if _, dup := r.byID[c.ID]; dup {
			return nil, fmt.Errorf("duplicate check ID %q", c.ID)
		}
		r.byID[c.ID] = i
	}
	for _, c := range checks {
		for _, req := range c.Requires {
			j, ok := r.byID[req]
			if !ok {
				return nil, fmt.Errorf("check %s requires unknown check %q", c.ID, req)
			}
			if j >= r.byID[c.ID] {
				return nil, fmt.Errorf("check %s requires %s, which comes after it", c.ID, req)
			}
		}
	}
	return r, nil
}

// Checks returns every check in catalogue order.
func (r *Registry) Checks() []Check { return r.checks }

// Get returns the check with the given ID.
func (r *Registry) Get(id string) (Check, bool) {
	i, ok := r.byID[id]
	if !ok {
		return Check{}, false
	}
	return r.checks[i], true
}

// IDs returns every check ID in catalogue order.
func (r *Registry) IDs() []string {
	out := make([]string, len(r.checks))
	for i, c := range r.checks {
		out[i] = c.ID
	}
	return out
}

// UnknownIDError is returned by Select for an ID that is not in the catalogue.
type UnknownIDError struct {
	ID    string
	Known []string
}

func (e *UnknownIDError) Error() string {
	msg := fmt.Sprintf("unknown check ID %q", e.ID)
	if s := closest(e.ID, e.Known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg + "; see --list-checks"
}

// Select returns the checks of mode, in catalogue order, restricted to only
// (when non-empty) and without skip. Fatal checks (cluster-reachable) are
// always selected: every other check needs the cluster, so asking to skip one
// is an error. An ID of the other mode given to --only is an error too, since
// it would silently select nothing.
func (r *Registry) Select(mode Mode, only, skip []string) ([]Check, error) {
	onlySet := map[string]bool{}
	for _, id := range only {
		c, ok := r.Get(id)
		if !ok {
			return nil, &UnknownIDError{ID: id, Known: r.IDs()}
		}
		if !c.Modes.Has(mode) {
			return nil, fmt.Errorf("check %q runs only in %s mode", id, modeName(c.Modes))
		}
		onlySet[id] = true
	}
	skipSet := map[string]bool{}
	for _, id := range skip {
		c, ok := r.Get(id)
		if !ok {
			return nil, &UnknownIDError{ID: id, Known: r.IDs()}
		}
		if c.Fatal {
			return nil, fmt.Errorf("check %q cannot be skipped: every other check needs the cluster", id)
		}
		skipSet[id] = true
	}
	var out []Check
	for _, c := range r.checks {
		if !c.Modes.Has(mode) || skipSet[c.ID] {
			continue
		}
		if len(onlySet) > 0 && !onlySet[c.ID] && !c.Fatal {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// InClusterChecks adapts selected for a run from a pod of the cluster
// (--in-cluster: the gate Job of deploy/gate), and returns the checks it
// leaves out, each with why:
//   - helm-version is left out: it judges the workstation's Helm client,
//     and in the gate Helm is the one running the hook;
//   - cluster-admin is left out unless the installer is named
//     (installer): the pod's ServiceAccount is not the identity that
//     installs;
//   - platform-reachable probes from the pod network, which is what the
//     runtime's pods (and the chart's validate-values hook, which calls
//     the platform) will have: a failure there is a fail whose impact is
//     install-fails, not the workstation's advisory warn.
//
// The checks that read the chart stay: with no --chart they skip, saying
// no chart was given.
func InClusterChecks(selected []Check, installer bool) (kept []Check, left map[string]string) {
	left = map[string]string{}
	for _, c := range selected {
		switch c.ID {
		case "helm-version":
			left[c.ID] = "judges the workstation's Helm client; in the cluster Helm is the one running the gate"
			continue
		case "cluster-admin":
			if !installer {
				left[c.ID] = "judges the runner's identity, the gate's ServiceAccount, not the installer's: name the installer with --installer"
				continue
			}
		case "platform-reachable":
			c.Severity, c.Impact = SeverityFail, ImpactInstallFails
		}
		kept = append(kept, c)
	}
	return kept, left
}

func modeName(m Mode) string {
	if m.Has(ModePost) && !m.Has(ModePre) {
		return "post-install (--post)"
	}
	return "pre-install"
}

// closest returns the known ID nearest to id (edit distance ≤ 3), or "".
func closest(id string, known []string) string {
	best, bestD := "", 4
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	for _, k := range sorted {
		if d := distance(strings.ToLower(id), k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// scopedRun wraps a check that reads cluster-wide lists of resources: when
// the snapshot had to read the runtime namespace alone (cluster-wide LIST
// forbidden, --post; cluster.Snapshot.SetNamespaceFallback), the message says
// so, since what it found, or did not find, is about that namespace only.
func scopedRun(run func(context.Context, *Env) (Result, error), resources ...string) func(context.Context, *Env) (Result, error) {
	return func(ctx context.Context, env *Env) (Result, error) {
		r, err := run(ctx, env)
		if err != nil || env.Cluster == nil {
			return r, err
		}
		var narrowed []string
		ns := ""
		for _, res := range resources {
			if n, ok := env.Cluster.Scoped(res); ok {
				narrowed, ns = append(narrowed, res), n
			}
		}
		if len(narrowed) > 0 {
			r.Message += fmt.Sprintf(" (read namespace %s only: no permission to list %s in all namespaces)", ns, strings.Join(narrowed, ", "))
		}
		return r, nil
	}
}

// Format1Catalogue are the IDs of the checks of mode m when the plugin
// wrote bundles of format 1 (their manifests recorded the command line): a
// replay of such a bundle runs those the recorded run selected, never a
// check added since, which would judge answers the bundle does not hold.
// Frozen: format 1 is no longer written.
func Format1Catalogue(m Mode) []string {
	return format1Catalogue[m.Phase()]
}

var format1Catalogue = map[string][]string{
	ModePre.Phase(): {"cluster-reachable", "kubernetes-version", "cluster-admin", "node-resources", "runtime-schedulable", "helm-version",
		"argo-components", "sealed-secrets", "argo-crds-ownership", "helm-ownership", "existing-runtime", "leftover-runtime-token", "runtime-name",
		"runtime-namespace", "values", "chart-renders", "validation-hooks", "user-token-secret", "platform-user-token", "ingress-class",
		"ingress-controller", "ingress-external-address", "ingress-tls", "ingress-tcp", "ingress-report-status", "alb-ingress-class",
		"ingress-host-reachable", "ingress-url", "osm-ingress", "platform-reachable", "argocd-server", "argocd-version", "argocd-admin-apikey"},
	ModePost.Phase(): {"cluster-reachable", "osm-ingress", "release-deployed", "validate-values-job", "runtime-workloads",
		"runtime-ingress-status", "nginx-tls-secret", "istio-virtualservice", "alb-dns-alias", "rollouts-controllers"},
	ModeUpgrade.Phase(): {"cluster-reachable", "kubernetes-version", "cluster-admin", "node-resources", "runtime-schedulable", "helm-version",
		"argo-components", "sealed-secrets", "argo-crds-ownership", "helm-ownership", "existing-runtime", "chart-renders", "release-upgradable",
		"release-apis", "upgrade-path", "upgrade-values", "upgrade-deletes", "upgrade-apply"},
}
