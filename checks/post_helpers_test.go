package checks

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcert"
)

// postEnv builds an Env with the kit holding objs and metaObjs (objects the
// snapshot reads through the metadata client: Secrets, CRDs).
func postEnv(t *testing.T, in Inputs, objs []runtime.Object, metaObjs ...runtime.Object) (*Env, *fake.Clientset) {
	t.Helper()
	k := newKit(t).objects(objs...).objects(metaObjs...).with(in)
	return k.env(), k.Kube
}

// secretMeta is the metadata-only form of a Secret for the metadata fake.
func secretMeta(ns, name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
	}
}

// testKeyMarker is the PEM header of private keys: it must never appear in any output.
const testKeyMarker = "PRIVATE KEY"

// tlsSecret returns a kubernetes.io/tls Secret whose self-signed certificate
// covers dnsNames.
func tlsSecret(t *testing.T, ns, name string, typ corev1.SecretType, dnsNames ...string) *corev1.Secret {
	t.Helper()
	cert, key := testcert.SelfSigned(t, dnsNames...)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       typ,
		Data:       map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key},
	}
}

func ingress(ns, name, class, host string, tls []networkingv1.IngressTLS, lb ...networkingv1.IngressLoadBalancerIngress) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "42"},
		Spec: networkingv1.IngressSpec{
			IngressClassName: &class,
			Rules:            []networkingv1.IngressRule{{Host: host}},
			TLS:              tls,
		},
		Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: lb}},
	}
}

func ingressClass(name, controller string) *networkingv1.IngressClass {
	return &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.IngressClassSpec{Controller: controller}}
}
