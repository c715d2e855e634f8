package plan

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Pod is one kind of pod the chart runs: Replicas copies of Spec (its
// containers' requests, init containers and nodeSelector).
type Pod struct {
	// Name is the workload's name (Deployment, StatefulSet or hook Job).
	Name     string
	Replicas int
	Spec     corev1.PodSpec
}

// DefaultRuntimePodsSource says where DefaultRuntimePods come from.
const DefaultRuntimePodsSource = "the gitops-runtime chart 0.30.0 defaults (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/values.yaml)"

// DefaultRuntimePods are the pods the gitops-runtime chart 0.30.0 runs with
// its default values (global.codefresh.accountId, userToken and
// global.runtime.name set, nothing else): its Deployments and StatefulSets ×
// replicas and its pre-install hook Jobs, with their containers' requests,
// init containers and nodeSelectors as the chart renders them (held against
// `helm template` of the chart by the end-to-end tests). A run whose chart
// does not render judges these.
func DefaultRuntimePods() []Pod {
	linux := map[string]string{"kubernetes.io/os": "linux"}
	p := func(name string, replicas int, sel map[string]string, cpu, mem, eph string, init ...string) Pod {
		spec := corev1.PodSpec{NodeSelector: sel, Containers: []corev1.Container{{Name: name, Resources: requests(cpu, mem, eph)}}}
		if len(init) == 2 {
			spec.InitContainers = []corev1.Container{{Name: "init", Resources: requests(init[0], init[1], "")}}
		}
		return Pod{Name: name, Replicas: replicas, Spec: spec}
	}
	return []Pod{
		p("argo-cd-applicationset-controller", 1, linux, "", "", ""),
		p("argo-cd-repo-server", 1, linux, "", "", ""),
		p("argo-cd-server", 1, linux, "", "", ""),
		p("argo-cd-dex-server", 1, linux, "", "", ""),
		p("argo-cd-redis", 1, linux, "", "", ""),
		p("argo-cd-application-controller", 1, linux, "", "", ""),
		p("argo-workflow-controller", 1, linux, "", "", ""),
		p("argo-server", 1, linux, "", "", ""),
		p("sealed-secrets-controller", 1, nil, "200m", "512Mi", ""),
		p(AppProxyName, 1, nil, "100m", "512Mi", "2Gi", "200m", "256Mi"),
		p("argo-gateway", 1, nil, "100m", "128Mi", ""),
		p("cluster-event-reporter", 2, nil, "100m", "128Mi", ""),
		p("runtime-event-reporter", 2, nil, "100m", "128Mi", ""),
		p("gitops-operator", 1, nil, "100m", "128Mi", ""),
		p(InternalRouterName, 1, nil, "200m", "128Mi", ""),
		p("codefresh-tunnel-client", 1, nil, "", "", ""),
		// pre-install hooks
		p("argo-cd-redis-secret-init", 1, linux, "", "", ""),
		p("redis-secret-init", 1, nil, "", "", ""),
		p(ValidateUsageJob, 1, nil, "", "", ""),
		p(ValidateValuesJob, 1, nil, "", "", ""),
	}
}

// requests are the resource requests of a container: cpu, memory and
// ephemeral storage, each left out when "".
func requests(cpu, mem, eph string) corev1.ResourceRequirements {
	r := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem, corev1.ResourceEphemeralStorage: eph} {
		if q != "" {
			r[name] = resource.MustParse(q)
		}
	}
	if len(r) == 0 {
		return corev1.ResourceRequirements{}
	}
	return corev1.ResourceRequirements{Requests: r}
}
