package checks

import (
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// fixFor says what fixes a refusal of the workloads or objects names (as
// the chart renders them): the chart value that changes what the API server
// refused, where the chart has one, "chart X has no value for this" where
// it does not (its hooks), and the cluster-side choices (the namespace's
// PodSecurity label, a LimitRange, the policy's own exclusions,
// Gatekeeper's excluded namespaces, a Kyverno PolicyException). level is
// the strictest Pod Security Standard all the planned pods meet ("" unknown).
func fixFor(r Refusal, names []string, isPod bool, p *admissionPlan, ns, level string) string {
	chartName := "chart " + p.Chart
	var parts, without, removable []string
	// value names the chart's values for what (set: what to set there).
	value := func(pick func(plan.WorkloadValues) string, what, set string) {
		for _, name := range names {
			vals, known := plan.ChartWorkloadValues(name)
			switch v := pick(vals); {
			case known && v != "":
				parts = append(parts, fmt.Sprintf("set %s for %s in the values (%s)", set, name, v))
			case known:
				without = append(without, name)
			}
			if known && vals.Remove != "" {
				removable = append(removable, fmt.Sprintf("--set %s leaves %s out (%s)", vals.Remove, name, vals.RemoveCost))
			}
		}
		if len(without) > 0 {
			parts = append(parts, fmt.Sprintf("%s has no value for the %s of %s", chartName, what, strings.Join(without, ", ")))
		}
		parts = append(parts, removable...)
	}
	switch r.Layer {
	case LayerPodSecurity:
		value(func(v plan.WorkloadValues) string {
			return strings.Trim(v.PodSecurityContext+", "+v.ContainerSecurityContext, ", ")
		}, "securityContext", "a securityContext that meets "+r.Policy)
		switch level {
		case "baseline", "privileged":
			parts = append(parts, fmt.Sprintf("let namespace %s enforce a level every pod of the release meets: kubectl label namespace %s pod-security.kubernetes.io/enforce=%s --overwrite", ns, ns, level))
		}
		parts = append(parts, "exempt the namespace in the API server's PodSecurity admission configuration (exemptions.namespaces)")
	case LayerResourceQuota:
		if strings.Contains(r.Detail, "must specify") {
			value(func(v plan.WorkloadValues) string { return v.Resources }, "resources", "requests and limits")
			parts = append(parts, fmt.Sprintf("give namespace %s a LimitRange whose default and defaultRequest cover %s (kubectl apply -n %s -f a LimitRange with spec.limits[].type: Container)", ns, strings.Join(r.Resources, ", "), ns))
		} else {
			parts = append(parts, fmt.Sprintf("raise ResourceQuota %s (kubectl edit resourcequota %s -n %s) or lower the release's replicas and requests", r.Quota, r.Quota, ns))
		}
	case LayerLimitRanger:
		parts = append(parts, fmt.Sprintf("set the requests and limits of %s within namespace %s's LimitRange (kubectl describe limitrange -n %s)", strings.Join(names, ", "), ns, ns))
	case LayerPolicy, LayerWebhook:
		if !isPod {
			for _, name := range names {
				if v, cost, ok := plan.ChartObjectRemoval(name); ok {
					parts = append(parts, fmt.Sprintf("%s has no value that changes %s; --set %s leaves it out (%s)", chartName, name, v, cost))
				}
			}
		}
		switch {
		case r.Layer == LayerPolicy:
			parts = append(parts, fmt.Sprintf("exclude the release from binding %s (its matchResources: namespaceSelector, objectSelector or excludeResourceRules), or set its validationActions to [Warn, Audit]", r.Binding))
		case strings.HasPrefix(r.Policy, "Gatekeeper"):
			parts = append(parts, fmt.Sprintf("exclude namespace %s for the constraint (spec.match.excludedNamespaces) or in Gatekeeper's Config (spec.match[].excludedNamespaces, processes [webhook])", ns))
		case strings.HasPrefix(r.Policy, "Kyverno"):
			parts = append(parts, fmt.Sprintf("add a Kyverno PolicyException for the policy and rule, matching namespace %s", ns))
		default:
			parts = append(parts, fmt.Sprintf("ask the owner of webhook %s to admit the release, or exclude namespace %s with its namespaceSelector", r.Webhook, ns))
		}
	case LayerWebhookDown:
		parts = append(parts, fmt.Sprintf("webhook %s cannot be called: bring its service's endpoints back (see admission-webhooks), or delete its configuration if its controller is gone", r.Webhook))
	case LayerServiceAccount:
		parts = append(parts, "create the ServiceAccount, or set the chart's serviceAccount.create for it")
	case LayerNamespace:
		parts = append(parts, fmt.Sprintf("create namespace %s (kubectl create namespace %s), or wait until it is deleted", ns, ns))
	}
	if len(parts) == 0 {
		return ""
	}
	return r.Short() + ": " + strings.Join(parts, "; or ")
}

// refusalGroups gathers refusals by layer and policy, keeping the names
// each refused, in first-seen order.
type refusalGroups struct {
	order []string
	by    map[string]*refusalGroup
}

type refusalGroup struct {
	r     Refusal
	names []string
}

func (g *refusalGroups) add(r Refusal, name string) {
	if g.by == nil {
		g.by = map[string]*refusalGroup{}
	}
	k := r.Short()
	if _, ok := g.by[k]; !ok {
		g.order = append(g.order, k)
		g.by[k] = &refusalGroup{r: r}
	}
	g.by[k].names = append(g.by[k].names, name)
}

// hints is one fixFor per group, joined.
func (g *refusalGroups) hints(isPod bool, p *admissionPlan, ns, level string) string {
	var out []string
	for _, k := range g.order {
		out = appendUnique(out, fixFor(g.by[k].r, g.by[k].names, isPod, p, ns, level))
	}
	return strings.Join(out, " | ")
}
