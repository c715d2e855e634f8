package schedule

import (
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// PodSpec is one kind of pod a release runs: Replicas copies of Spec.
type PodSpec struct {
	// Name is the workload's name (Deployment, StatefulSet or hook Job).
	Name     string
	Replicas int
	Spec     corev1.PodSpec
	// Kind is Deployment, StatefulSet or Job, Namespace the manifest's ("":
	// the release namespace) and Hook the helm.sh/hook annotation ("": not
	// a hook), when read from a manifest.
	Kind, Namespace, Hook string
	// Template is the pod template as rendered; Deployment and StatefulSet
	// are the workload as rendered (for an upgrade: what changes, and how
	// the rollout replaces the pods).
	Template    corev1.PodTemplateSpec
	Deployment  *appsv1.Deployment
	StatefulSet *appsv1.StatefulSet
}

// DefaultPods are the chart's default pods (plan.DefaultRuntimePods, the
// chart 0.30.0 defaults).
func DefaultPods() []PodSpec {
	var out []PodSpec
	for _, p := range plan.DefaultRuntimePods() {
		out = append(out, PodSpec{Name: p.Name, Replicas: p.Replicas, Spec: p.Spec})
	}
	return out
}

// InstallPods are the workloads of all whose pods run at install: hook
// Jobs only for install and upgrade hooks (pre-/post-delete and rollback
// hooks do not run at install,
// https://helm.sh/docs/topics/charts_hooks/#the-available-hooks).
func InstallPods(all []PodSpec) []PodSpec {
	var out []PodSpec
	for _, w := range all {
		if hook := w.Hook; w.Kind == "Job" && hook != "" {
			if !strings.Contains(hook, "install") && !strings.Contains(hook, "upgrade") {
				continue
			}
			if strings.Contains(hook, "delete") && !strings.Contains(hook, "install") {
				continue
			}
		}
		out = append(out, w)
	}
	return out
}

// WorkloadsOf reads every Deployment, StatefulSet and Job of objs (their
// JSON, converted once when they were rendered or read), hooks of every
// kind included: Deployments and StatefulSets × spec.replicas, Jobs ×
// spec.parallelism (1 when unset). Other kinds are left out; an object
// that does not decode is an error.
func WorkloadsOf(objs []chart.Object) ([]PodSpec, error) {
	var out []PodSpec
	for _, o := range objs {
		var spec PodSpec
		switch o.Kind {
		case "Deployment":
			var d appsv1.Deployment
			if err := json.Unmarshal(o.JSON, &d); err != nil {
				return nil, fmt.Errorf("decoding Deployment %s: %w", o.Name, err)
			}
			spec = PodSpec{Name: d.Name, Replicas: replicas(d.Spec.Replicas), Spec: d.Spec.Template.Spec,
				Namespace: d.Namespace, Hook: d.Annotations["helm.sh/hook"], Template: d.Spec.Template, Deployment: &d}
		case "StatefulSet":
			var st appsv1.StatefulSet
			if err := json.Unmarshal(o.JSON, &st); err != nil {
				return nil, fmt.Errorf("decoding StatefulSet %s: %w", o.Name, err)
			}
			spec = PodSpec{Name: st.Name, Replicas: replicas(st.Spec.Replicas), Spec: st.Spec.Template.Spec,
				Namespace: st.Namespace, Hook: st.Annotations["helm.sh/hook"], Template: st.Spec.Template, StatefulSet: &st}
		case "Job":
			var j batchv1.Job
			if err := json.Unmarshal(o.JSON, &j); err != nil {
				return nil, fmt.Errorf("decoding Job %s: %w", o.Name, err)
			}
			spec = PodSpec{Name: j.Name, Replicas: replicas(j.Spec.Parallelism), Spec: j.Spec.Template.Spec,
				Namespace: j.Namespace, Hook: j.Annotations["helm.sh/hook"], Template: j.Spec.Template}
		default:
			continue
		}
		spec.Kind = o.Kind
		out = append(out, spec)
	}
	return out, nil
}

func replicas(r *int32) int {
	if r == nil {
		return 1
	}
	return int(*r)
}

// CountPods is the number of pods of specs (their replicas summed).
func CountPods(specs []PodSpec) int {
	n := 0
	for _, s := range specs {
		n += s.Replicas
	}
	return n
}

// ClusterWorkloads are the Deployments and StatefulSets of specs that are
// not hooks, as the cluster reads workloads (cluster.Workload: kind,
// namespace as rendered, name, labels, pod labels, container images), for
// the checks that compare what a release will run with what runs.
func ClusterWorkloads(specs []PodSpec) []cluster.Workload {
	var out []cluster.Workload
	for _, s := range specs {
		w := cluster.Workload{Kind: s.Kind, Namespace: s.Namespace, Name: s.Name, PodLabels: s.Template.Labels}
		switch {
		case s.Hook != "":
			continue
		case s.Deployment != nil:
			w.Labels = s.Deployment.Labels
		case s.StatefulSet != nil:
			w.Labels = s.StatefulSet.Labels
		default:
			continue
		}
		for _, c := range s.Spec.Containers {
			w.Containers = append(w.Containers, cluster.Container{Name: c.Name, Image: c.Image})
		}
		out = append(out, w)
	}
	return out
}
