package testcluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestRegisteredNode(t *testing.T) {
	s := NodeSpec{Name: "ip-10-0-0-7", CPU: "3920m", Memory: "15038088Ki", InternalIP: "10.0.0.7", ProviderID: "aws:///eu-west-1a/i-7", Labels: map[string]string{"topology.kubernetes.io/zone": "eu-west-1a"}}
	n := RegisteredNode(s)
	if got := n.Status.Allocatable.Cpu().MilliValue(); got != 3920 {
		t.Errorf("allocatable cpu = %dm, want 3920m", got)
	}
	if got, want := n.Status.Allocatable.Memory().Value(), int64(15038088*1024); got != want {
		t.Errorf("allocatable memory = %d bytes, want %d", got, want)
	}
	if n.Status.Addresses[0] != (corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.0.7"}) {
		t.Errorf("addresses = %v, want the InternalIP first", n.Status.Addresses)
	}
	ready := func(n *corev1.Node) corev1.ConditionStatus {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status
			}
		}
		return ""
	}
	if ready(n) != corev1.ConditionTrue {
		t.Errorf("Ready = %q, want True", ready(n))
	}
	s.NotReady = true
	if got := ready(RegisteredNode(s)); got != corev1.ConditionFalse {
		t.Errorf("NotReady node: Ready = %q, want False", got)
	}
	if a, b := RegisteredNode(s).Status.NodeInfo.MachineID, RegisteredNode(NodeSpec{Name: "other", CPU: "1", Memory: "1Gi"}).Status.NodeInfo.MachineID; a == b {
		t.Errorf("two nodes share machine ID %s", a)
	}

	kube := fake.NewClientset()
	if err := RegisterNode(t.Context(), kube, NodeSpec{Name: "n1", CPU: "2", Memory: "8Gi"}); err != nil {
		t.Fatal(err)
	}
	got, err := kube.CoreV1().Nodes().Get(t.Context(), "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ready(got) != corev1.ConditionTrue || got.Status.Allocatable.Memory().Value() != 8<<30 {
		t.Errorf("registered node status = %+v", got.Status)
	}
}
