package plan

import "sort"

// WorkloadValues are the values of the gitops-runtime chart that shape one
// workload's pods: where its containers' resources and its pod and
// container securityContext are set, and the value that removes it (a hook
// the chart lets users skip). A path is "" when the chart has no value for
// it: its template writes nothing there whatever the values.
type WorkloadValues struct {
	Resources                string
	PodSecurityContext       string
	ContainerSecurityContext string
	// Remove is "key=value" that stops the chart rendering the workload
	// (and what only it needs), with what that costs.
	Remove, RemoveCost string
}

// chartWorkloadValues are the values of the workloads an admission policy
// judges first: the chart 0.30 hook Jobs
// (https://github.com/codefresh-io/gitops-runtime-helm/tree/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/hooks/pre-install),
// which run before anything else, and the Argo CD subchart's (argo-cd's
// values, https://github.com/argoproj/argo-helm/blob/main/charts/argo-cd/values.yaml),
// each held against the rendered chart by a test.
var chartWorkloadValues = map[string]WorkloadValues{
	"validate-values": {Remove: "installer.skipValidation=true",
		RemoveCost: "the chart's pre-install validation of the values against the platform then does not run"},
	"validate-usage": {Remove: "installer.skipUsageValidation=true",
		RemoveCost: "the chart's pre-install check of the account's runtime quota then does not run"},
	"redis-secret-init": {},
	"argo-cd-redis-secret-init": {
		Resources:                "argo-cd.redisSecretInit.resources",
		PodSecurityContext:       "argo-cd.redisSecretInit.securityContext",
		ContainerSecurityContext: "argo-cd.redisSecretInit.containerSecurityContext",
	},
	"argo-cd-server":                    {Resources: "argo-cd.server.resources", ContainerSecurityContext: "argo-cd.server.containerSecurityContext"},
	"argo-cd-repo-server":               {Resources: "argo-cd.repoServer.resources", ContainerSecurityContext: "argo-cd.repoServer.containerSecurityContext"},
	"argo-cd-application-controller":    {Resources: "argo-cd.controller.resources", ContainerSecurityContext: "argo-cd.controller.containerSecurityContext"},
	"argo-cd-applicationset-controller": {Resources: "argo-cd.applicationSet.resources", ContainerSecurityContext: "argo-cd.applicationSet.containerSecurityContext"},
	"argo-cd-redis":                     {Resources: "argo-cd.redis.resources", ContainerSecurityContext: "argo-cd.redis.containerSecurityContext"},
}

// hookObjectSwitches are the hook objects (other than Jobs) the chart
// renders only for a validation hook, by name: the value that removes them
// is the hook's.
var hookObjectSwitches = map[string]string{
	"validate-values-cr": "validate-values", "validate-values-crb": "validate-values", "validate-values-sa": "validate-values",
	"validate-usage-cr": "validate-usage", "validate-usage-crb": "validate-usage", "validate-usage-sa": "validate-usage",
}

// ChartWorkloadValues returns the values of the chart's workload name (a
// Deployment, StatefulSet or hook Job as rendered), and whether the chart's
// values for it are known.
func ChartWorkloadValues(name string) (WorkloadValues, bool) {
	v, ok := chartWorkloadValues[name]
	return v, ok
}

// ChartObjectRemoval returns, for an object the chart renders only for one
// of its hooks (the validate-values ClusterRole, say), the value that
// removes it and what that costs.
func ChartObjectRemoval(name string) (value, cost string, ok bool) {
	if hook, found := hookObjectSwitches[name]; found {
		name = hook
	}
	v, found := chartWorkloadValues[name]
	if !found || v.Remove == "" {
		return "", "", false
	}
	return v.Remove, v.RemoveCost, true
}

// ChartWorkloadNames are the workloads ChartWorkloadValues knows, sorted.
func ChartWorkloadNames() []string {
	out := make([]string, 0, len(chartWorkloadValues))
	for n := range chartWorkloadValues {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
