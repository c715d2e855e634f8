package admission

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// PodOf is the pod a workload's controller creates from its template: the
// template's labels, annotations and spec, a generated name, the Job
// controller's job-name labels (batch.kubernetes.io/job-name and job-name:
// https://kubernetes.io/docs/reference/labels-annotations-taints/#batchkubernetesiojob-name);
// and, when the release itself creates its ServiceAccount (which does not
// exist before the install), the namespace's default ServiceAccount in its
// place (returned: its name, "" when none was replaced).
func PodOf(w Workload, p *Plan) (*corev1.Pod, string) {
	t := w.Template
	pod := &corev1.Pod{}
	pod.APIVersion, pod.Kind = "v1", "Pod"
	pod.GenerateName = w.Name + "-"
	pod.Namespace = w.Namespace
	pod.Labels = map[string]string{}
	for k, v := range t.Labels {
		pod.Labels[k] = v
	}
	if w.Kind == "Job" {
		pod.Labels["batch.kubernetes.io/job-name"] = w.Name
		pod.Labels["job-name"] = w.Name
	}
	if len(t.Annotations) > 0 {
		pod.Annotations = map[string]string{}
		for k, v := range t.Annotations {
			pod.Annotations[k] = v
		}
	}
	pod.Spec = *t.Spec.DeepCopy()
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = pod.Spec.DeprecatedServiceAccount
	}
	replaced := ""
	if sa != "" && sa != "default" && p.ServiceAccounts[w.Namespace+"/"+sa] {
		pod.Spec.ServiceAccountName, pod.Spec.DeprecatedServiceAccount = "default", ""
		replaced = sa
	}
	return pod, replaced
}

// Pods are the pods of the plan's workloads, in plan order, as PodOf
// builds them.
func (p *Plan) Pods() []*corev1.Pod {
	out := make([]*corev1.Pod, len(p.Workloads))
	for i, w := range p.Workloads {
		out[i], _ = PodOf(w, p)
	}
	return out
}

// AddedContainers returns the containers of got that sent does not have:
// what a mutating webhook or MutatingAdmissionPolicy added. Native
// sidecars (init containers with restartPolicy Always) end with the pod
// and are not returned.
func AddedContainers(sent, got *corev1.Pod) []string {
	have := map[string]bool{}
	for _, c := range sent.Spec.Containers {
		have[c.Name] = true
	}
	var out []string
	for _, c := range got.Spec.Containers {
		if !have[c.Name] {
			out = append(out, c.Name)
		}
	}
	return out
}

// answered is the pod of an answer (nil when it has none or it does not
// convert).
func answered(v Verdict) *corev1.Pod {
	if v.Object == nil {
		return nil
	}
	var pod corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(v.Object.Object, &pod); err != nil {
		return nil
	}
	return &pod
}
