package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestGetOne: the one not-found convention (found false, no error), one GET
// per snapshot and key, and other errors as a "get" ListError.
func TestGetOne(t *testing.T) {
	kube := fake.NewClientset(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web"}})
	gets := 0
	kube.PrependReactor("get", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
		gets++
		if a.(k8stesting.GetAction).GetName() == "denied" {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "denied", errors.New("RBAC"))
		}
		return false, nil, nil
	})
	s := NewSnapshot(context.Background(), &Clients{Kube: kube})
	for range 2 {
		svc, ok, err := s.Service("a", "web")
		if err != nil || !ok || svc.Name != "web" {
			t.Fatalf("Service(a, web) = %+v, %v, %v", svc, ok, err)
		}
	}
	if gets != 1 {
		t.Errorf("%d GETs for one object read twice, want 1", gets)
	}
	svc, ok, err := s.Service("a", "absent")
	if err != nil || ok || svc.Name != "" {
		t.Errorf("absent: %+v, %v, %v; want zero, false, nil", svc, ok, err)
	}
	_, _, err = s.Service("a", "denied")
	var le *ListError
	if !errors.As(err, &le) || le.Verb != "get" || !le.Forbidden() || !strings.Contains(le.Reason(), "services/denied") {
		t.Errorf("denied: %v, want a forbidden get ListError naming services/denied", err)
	}
	ns, err := s.Namespace("nowhere")
	if err != nil || ns.Exists || ns.Name != "nowhere" {
		t.Errorf("Namespace(nowhere) = %+v, %v", ns, err)
	}
}

// TestListAllWrongType: an item of another type is an error naming the list.
func TestListAllWrongType(t *testing.T) {
	_, err := listAll(context.Background(), "services", "", metav1.ListOptions{},
		func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &corev1.PodList{Items: []corev1.Pod{{}}}, nil
		}, ServiceFrom)
	if err == nil || !strings.Contains(err.Error(), "unexpected *v1.Pod in services list") {
		t.Fatalf("listAll = %v, want an unexpected-type error", err)
	}
}

// TestObjectsFromWorkloads: Objects of Deployments and StatefulSets comes
// from the snapshot's own lists of them (no metadata client here: a LIST of
// its own would panic), one namespace's objects, with their labels,
// annotations and resourceVersion.
func TestObjectsFromWorkloads(t *testing.T) {
	meta := func(ns, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "7", Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"},
			Annotations: map[string]string{"meta.helm.sh/release-name": "other"}}
	}
	kube := fake.NewClientset(&appsv1.Deployment{ObjectMeta: meta("cf", "argo-server")}, &appsv1.Deployment{ObjectMeta: meta("x", "web")},
		&appsv1.StatefulSet{ObjectMeta: meta("cf", "redis")})
	s := NewSnapshot(context.Background(), &Clients{Kube: kube})
	deps, err := s.Objects(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "cf")
	if err != nil {
		t.Fatal(err)
	}
	d, ok := deps["cf/argo-server"]
	if len(deps) != 1 || !ok || d.ResourceVersion != "7" || d.Annotations["meta.helm.sh/release-name"] != "other" || d.Labels["app.kubernetes.io/managed-by"] != "Helm" {
		t.Errorf("deployments in cf: %+v", deps)
	}
	sts, err := s.Objects(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, "cf")
	if _, ok := sts["cf/redis"]; err != nil || len(sts) != 1 || !ok {
		t.Errorf("statefulsets in cf: %+v, %v", sts, err)
	}
}

// TestObjectsFromNetworkPolicies: the ownership checks' metadata list of a
// namespace's NetworkPolicies and network-policies' list of their specs are
// one LIST (no metadata client here: a LIST of its own would panic), the
// objects with their labels, annotations and resourceVersion.
func TestObjectsFromNetworkPolicies(t *testing.T) {
	kube := fake.NewClientset(&networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "cf", Name: "argocd-redis", ResourceVersion: "9",
		Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"}, Annotations: map[string]string{"meta.helm.sh/release-name": "cf"}}})
	lists := 0
	kube.PrependReactor("list", "networkpolicies", func(k8stesting.Action) (bool, runtime.Object, error) {
		lists++
		return false, nil, nil
	})
	s := NewSnapshot(context.Background(), &Clients{Kube: kube})
	objs, err := s.Objects(NetworkPolicyResource, "cf")
	if err != nil {
		t.Fatal(err)
	}
	o, ok := objs["cf/argocd-redis"]
	if len(objs) != 1 || !ok || o.ResourceVersion != "9" || o.Labels["app.kubernetes.io/managed-by"] != "Helm" || o.Annotations["meta.helm.sh/release-name"] != "cf" {
		t.Errorf("networkpolicies in cf: %+v", objs)
	}
	if ps, err := s.NetworkPolicies("cf"); err != nil || len(ps) != 1 || ps[0].Name != "argocd-redis" {
		t.Errorf("NetworkPolicies(cf) = %+v, %v", ps, err)
	}
	if lists != 1 {
		t.Errorf("%d LISTs of the NetworkPolicies of cf, want 1", lists)
	}
}

// TestWorkloadSummaryKeepsWhatChecksRead: of a Deployment's annotations
// only Helm's are kept; the selector equal to the pod labels is one map.
func TestWorkloadSummaryKeepsWhatChecksRead(t *testing.T) {
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{
			"meta.helm.sh/release-name": "r", "meta.helm.sh/release-namespace": "n",
			"deployment.kubernetes.io/revision": "3", lastApplied: `{"big":"json"}`,
		}},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}},
	}
	w := DeploymentFrom(d)
	if len(w.Annotations) != 2 || w.Annotations["meta.helm.sh/release-name"] != "r" || w.Annotations["meta.helm.sh/release-namespace"] != "n" {
		t.Errorf("annotations %v, want Helm's two", w.Annotations)
	}
	if w.Selector["app"] != "web" || w.PodLabels["app"] != "web" || len(w.Selector) != 1 {
		t.Errorf("selector %v, pod labels %v", w.Selector, w.PodLabels)
	}
	d.Spec.Selector.MatchLabels = map[string]string{"app": "web", "tier": "x"}
	if w := DeploymentFrom(d); w.Selector["tier"] != "x" || w.PodLabels["tier"] != "" {
		t.Errorf("a selector unlike the pod labels: %v, %v", w.Selector, w.PodLabels)
	}
}
