package cluster

import (
	"context"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestReadObjectLists: the lists read at once are the ones Objects then
// answers from, each listed once; a done context starts none.
func TestReadObjectLists(t *testing.T) {
	kube := fake.NewClientset(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "cf", Name: "argo-server"}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "cf", Name: "redis"}})
	var lists atomic.Int32
	kube.PrependReactor("list", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		lists.Add(1)
		return false, nil, nil
	})
	deps := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	sts := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	want := []ObjectList{{Resource: deps, Namespace: "cf"}, {Resource: sts, Namespace: "cf"}}

	done, cancel := context.WithCancel(context.Background())
	cancel()
	s := NewSnapshot(context.Background(), &Clients{Kube: kube})
	s.ReadObjectLists(done, want)
	if n := lists.Load(); n != 0 {
		t.Errorf("%d LISTs after a done context, want none", n)
	}

	s.ReadObjectLists(context.Background(), want)
	read := lists.Load()
	if read == 0 {
		t.Fatal("no LIST sent")
	}
	if d, err := s.Objects(deps, "cf"); err != nil || len(d) != 1 {
		t.Errorf("deployments in cf: %v, %v", d, err)
	}
	if o, err := s.Objects(sts, "cf"); err != nil || len(o) != 1 {
		t.Errorf("statefulsets in cf: %v, %v", o, err)
	}
	if n := lists.Load(); n != read {
		t.Errorf("Objects listed again (%d LISTs, %d before): the lists read at once are not the ones it answers from", n, read)
	}
}
