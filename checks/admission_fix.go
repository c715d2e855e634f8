package checks

import (
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// fixFor says what fixes one refusal: the chart value that changes what the
// API server refused, where the chart has one, "chart X has no value for
// this" where it does not (its hooks), and the cluster-side choices (the
// namespace's PodSecurity label, a LimitRange, the policy's own exclusions,
// Gatekeeper's excluded namespaces, a Kyverno PolicyException). name is the
// refused workload or object as the chart renders it; level is the
// strictest Pod Security Standard all the planned pods meet ("" unknown).
func fixFor(r Refusal, name string, isPod bool, p *admissionPlan, ns, level string) string {
	vals, known := plan.ChartWorkloadValues(name)
	chartName := "chart " + p.Chart
	var parts []string
	switch r.Layer {
	case LayerPodSecurity:
		switch {
		case known && (vals.PodSecurityContext != "" || vals.ContainerSecurityContext != ""):
			parts = append(parts, fmt.Sprintf("give %s a securityContext that meets %s in the values (%s)", name, r.Policy, strings.Trim(vals.PodSecurityContext+", "+vals.ContainerSecurityContext, ", ")))
		case known:
			parts = append(parts, fmt.Sprintf("%s has no value for the securityContext of %s", chartName, name))
		}
		if known && vals.Remove != "" {
			parts = append(parts, fmt.Sprintf("or leave %s out with --set %s (%s)", name, vals.Remove, vals.RemoveCost))
		}
		switch level {
		case "baseline", "privileged":
			parts = append(parts, fmt.Sprintf("or let namespace %s enforce a level every pod of the release meets: kubectl label namespace %s pod-security.kubernetes.io/enforce=%s --overwrite", ns, ns, level))
		}
		parts = append(parts, "or exempt the namespace in the API server's PodSecurity admission configuration (exemptions.namespaces)")
	case LayerResourceQuota:
		if strings.Contains(r.Detail, "must specify") {
			if known && vals.Resources != "" {
				parts = append(parts, fmt.Sprintf("set requests and limits for %s in the values (%s)", name, vals.Resources))
			} else if known {
				parts = append(parts, fmt.Sprintf("%s has no value for the resources of %s", chartName, name))
			}
			parts = append(parts, fmt.Sprintf("or give namespace %s a LimitRange whose default and defaultRequest cover %s (kubectl apply -n %s -f a LimitRange with spec.limits[].type: Container)", ns, strings.Join(r.Resources, ", "), ns))
		} else {
			parts = append(parts, fmt.Sprintf("raise ResourceQuota %s (kubectl edit resourcequota %s -n %s) or lower the release's replicas and requests", r.Quota, r.Quota, ns))
		}
	case LayerLimitRanger:
		parts = append(parts, fmt.Sprintf("set %s's requests and limits within namespace %s's LimitRange (kubectl describe limitrange -n %s)", name, ns, ns))
	case LayerPolicy:
		if v, cost, ok := plan.ChartObjectRemoval(name); ok {
			parts = append(parts, fmt.Sprintf("%s has no value that changes %s; --set %s leaves it out (%s)", chartName, name, v, cost))
		}
		parts = append(parts, fmt.Sprintf("or exclude the release from binding %s (its matchResources: namespaceSelector, objectSelector or excludeResourceRules), or set its validationActions to [Warn, Audit]", r.Binding))
	case LayerWebhook:
		if v, cost, ok := plan.ChartObjectRemoval(name); ok && !isPod {
			parts = append(parts, fmt.Sprintf("--set %s leaves %s out (%s)", v, name, cost))
		}
		switch {
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
	return strings.Join(parts, "; ")
}
