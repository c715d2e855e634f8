package cluster

import (
	"context"
	"maps"
	"strings"
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Workload kinds.
const (
	KindDeployment  = "Deployment"
	KindStatefulSet = "StatefulSet"
	KindDaemonSet   = "DaemonSet"
)

// Container is the part of a pod template container the checks read.
type Container struct {
	Name    string
	Image   string
	Command []string
	Args    []string
}

// Workload summarises a Deployment, StatefulSet or DaemonSet.
type Workload struct {
	Kind      string // KindDeployment, KindStatefulSet or KindDaemonSet
	Namespace string
	Name      string
	Labels    map[string]string
	// Annotations are Helm's (meta.helm.sh/release-name and -namespace) and
	// Argo CD's (argocd.argoproj.io/tracking-id and sync-options): the only
	// ones the checks read of a workload.
	Annotations map[string]string
	// PodLabels are the pod template's labels.
	PodLabels map[string]string
	// Containers are the pod template's containers (init containers excluded).
	Containers []Container
	// Desired is spec.replicas (Deployment, StatefulSet; nil means 1) or
	// status.desiredNumberScheduled (DaemonSet).
	Desired int32
	// Available is status.availableReplicas (status.numberAvailable for DaemonSets).
	Available int32
	// Ready is status.readyReplicas (status.numberReady for DaemonSets).
	Ready int32
	// Selector is spec.selector.matchLabels.
	Selector map[string]string
	// ResourceVersion is metadata.resourceVersion (for --fix's conflict guard).
	ResourceVersion string
}

// Images returns the images of the workload's containers.
func (w Workload) Images() []string {
	out := make([]string, 0, len(w.Containers))
	for _, c := range w.Containers {
		out = append(out, c.Image)
	}
	return out
}

func workloadFrom(kind string, m metav1.ObjectMeta, tpl corev1.PodTemplateSpec, sel *metav1.LabelSelector) Workload {
	w := Workload{
		Kind:        kind,
		Namespace:   m.Namespace,
		Name:        m.Name,
		Labels:      copyMap(m.Labels),
		Annotations: helmAnnotations(m.Annotations),
		PodLabels:   copyMap(tpl.Labels),

		ResourceVersion: m.ResourceVersion,
	}
	if sel != nil {
		if maps.Equal(sel.MatchLabels, tpl.Labels) {
			w.Selector = w.PodLabels // the usual case: one map for both
		} else {
			w.Selector = copyMap(sel.MatchLabels)
		}
	}
	for _, c := range tpl.Spec.Containers {
		w.Containers = append(w.Containers, Container{Name: c.Name, Image: c.Image, Command: c.Command, Args: c.Args})
	}
	return w
}

// helmAnnotations returns the meta.helm.sh/ annotations of m and Argo CD's
// argocd.argoproj.io/tracking-id and sync-options (nil: none).
func helmAnnotations(m map[string]string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if strings.HasPrefix(k, "meta.helm.sh/") || k == "argocd.argoproj.io/tracking-id" || k == "argocd.argoproj.io/sync-options" {
			if out == nil {
				out = map[string]string{}
			}
			out[unique.Make(k).Value()] = v
		}
	}
	return out
}

func replicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// DeploymentFrom summarises a Deployment.
func DeploymentFrom(d *appsv1.Deployment) Workload {
	w := workloadFrom(KindDeployment, d.ObjectMeta, d.Spec.Template, d.Spec.Selector)
	w.Desired = replicas(d.Spec.Replicas)
	w.Available = d.Status.AvailableReplicas
	w.Ready = d.Status.ReadyReplicas
	return w
}

// StatefulSetFrom summarises a StatefulSet.
func StatefulSetFrom(s *appsv1.StatefulSet) Workload {
	w := workloadFrom(KindStatefulSet, s.ObjectMeta, s.Spec.Template, s.Spec.Selector)
	w.Desired = replicas(s.Spec.Replicas)
	w.Available = s.Status.AvailableReplicas
	w.Ready = s.Status.ReadyReplicas
	return w
}

// DaemonSetFrom summarises a DaemonSet.
func DaemonSetFrom(d *appsv1.DaemonSet) Workload {
	w := workloadFrom(KindDaemonSet, d.ObjectMeta, d.Spec.Template, d.Spec.Selector)
	w.Desired = d.Status.DesiredNumberScheduled
	w.Available = d.Status.NumberAvailable
	w.Ready = d.Status.NumberReady
	return w
}

// Deployments lists the Deployments of all namespaces once per snapshot.
func (s *Snapshot) Deployments() ([]Workload, error) {
	return s.deployments.get(func() ([]Workload, error) {
		var out []Workload
		err := s.listAllOrFallback("deployments", func() { out = nil }, func(ns string) error {
			items, err := listAllStreamed(s, "deployments", ns, metav1.ListOptions{},
				protoStream(s.clients.Kube.AppsV1().RESTClient(), "deployments", ns, "Deployment", slimDeployment),
				func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					return s.clients.Kube.AppsV1().Deployments(ns).List(ctx, o)
				}, DeploymentFrom)
			out = append(out, items...)
			return err
		})
		return out, err
	})
}

// StatefulSets lists the StatefulSets of all namespaces once per snapshot.
func (s *Snapshot) StatefulSets() ([]Workload, error) {
	return s.statefulSets.get(func() ([]Workload, error) {
		var out []Workload
		err := s.listAllOrFallback("statefulsets", func() { out = nil }, func(ns string) error {
			items, err := listAll(s.ctx, "statefulsets", ns, metav1.ListOptions{},
				func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					return s.clients.Kube.AppsV1().StatefulSets(ns).List(ctx, o)
				}, StatefulSetFrom)
			out = append(out, items...)
			return err
		})
		return out, err
	})
}

// DaemonSets lists the DaemonSets of all namespaces once per snapshot.
func (s *Snapshot) DaemonSets() ([]Workload, error) {
	return s.daemonSets.get(func() ([]Workload, error) {
		var out []Workload
		err := s.listAllOrFallback("daemonsets", func() { out = nil }, func(ns string) error {
			items, err := listAll(s.ctx, "daemonsets", ns, metav1.ListOptions{},
				func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					return s.clients.Kube.AppsV1().DaemonSets(ns).List(ctx, o)
				}, DaemonSetFrom)
			out = append(out, items...)
			return err
		})
		return out, err
	})
}
