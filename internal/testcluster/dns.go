package testcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// kubeadmCorefile is the Corefile kubeadm's CoreDNS addon writes for the
// cluster domain cluster.local
// (https://github.com/kubernetes/kubernetes/blob/master/cmd/kubeadm/app/phases/addons/dns/manifests.go).
const kubeadmCorefile = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
`

// CreateClusterDNS creates in kube-system the Service kube-dns (labelled
// k8s-app=kube-dns, ports 53 UDP and TCP and 9153) and the ConfigMap
// coredns with its Corefile, as kubeadm's CoreDNS addon does, for a
// throwaway cluster that should look like a kubeadm or kind one to the
// checks that read the cluster's DNS. No DNS server runs behind it (kwok
// runs no container).
func CreateClusterDNS(ctx context.Context, kube kubernetes.Interface) error {
	labels := map[string]string{"k8s-app": "kube-dns", "kubernetes.io/name": "CoreDNS"}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: "kube-system", Labels: labels},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"k8s-app": "kube-dns"}, Ports: []corev1.ServicePort{
			{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
			{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP},
			{Name: "metrics", Port: 9153, Protocol: corev1.ProtocolTCP},
		}},
	}
	if _, err := kube.CoreV1().Services("kube-system").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating Service kube-system/kube-dns: %w", err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system"},
		Data:       map[string]string{"Corefile": kubeadmCorefile},
	}
	if _, err := kube.CoreV1().ConfigMaps("kube-system").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating ConfigMap kube-system/coredns: %w", err)
	}
	return nil
}
