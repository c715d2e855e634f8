package cluster

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SecretExists reports whether a Secret exists, with a metadata-only GET: the
// Secret's data is never transferred.
func (s *Snapshot) SecretExists(namespace, name string) (bool, error) {
	return Memo(s, "secret-exists/"+namespace+"/"+name, func() (bool, error) {
		_, err := s.clients.Metadata.Resource(secretsResource).Namespace(namespace).Get(s.ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, &ListError{Verb: "get", Resource: "secrets", Namespace: namespace, Err: err}
		}
		return true, nil
	})
}

// TLSSecret is what the checks know of a Secret meant for Ingress TLS: its
// type and the public certificate in tls.crt. The private key is never kept.
type TLSSecret struct {
	Namespace, Name string
	Found           bool
	Type            corev1.SecretType
	// Cert is the first certificate of tls.crt (the leaf); nil when tls.crt is
	// missing or CertErr says why it did not parse.
	Cert    *x509.Certificate
	CertErr error
}

// CoversHost reports whether the leaf certificate is valid for host (SAN
// DNS names and IPs, wildcards as crypto/x509 matches them) and, if not,
// why.
func (t TLSSecret) CoversHost(host string) error {
	if t.Cert == nil {
		if t.CertErr != nil {
			return t.CertErr
		}
		return fmt.Errorf("secret %s/%s has no certificate", t.Namespace, t.Name)
	}
	return t.Cert.VerifyHostname(host)
}

// Expired reports whether the leaf certificate's NotAfter is before now.
func (t TLSSecret) Expired(now time.Time) bool {
	return t.Cert != nil && now.After(t.Cert.NotAfter)
}

// ReadTLSSecret gets one Secret (a GET, once per snapshot and name) and keeps
// only its type and parsed tls.crt leaf certificate; tls.key is dropped
// immediately and never logged or returned.
func (s *Snapshot) ReadTLSSecret(namespace, name string) (TLSSecret, error) {
	return Memo(s, "tls-secret/"+namespace+"/"+name, func() (TLSSecret, error) {
		sec, err := s.clients.Kube.CoreV1().Secrets(namespace).Get(s.ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return TLSSecret{Namespace: namespace, Name: name}, nil
		}
		if err != nil {
			return TLSSecret{}, &ListError{Verb: "get", Resource: "secrets", Namespace: namespace, Err: err}
		}
		return TLSSecretFrom(sec), nil
	})
}

// TLSSecretFrom summarises a Secret as a TLSSecret (Found true).
func TLSSecretFrom(sec *corev1.Secret) TLSSecret {
	out := TLSSecret{Namespace: sec.Namespace, Name: sec.Name, Found: true, Type: sec.Type}
	out.Cert, out.CertErr = LeafCertificate(sec.Data[corev1.TLSCertKey])
	return out
}

// LeafCertificate parses the first CERTIFICATE block of PEM data.
func LeafCertificate(pemData []byte) (*x509.Certificate, error) {
	if len(pemData) == 0 {
		return nil, fmt.Errorf("no %s", corev1.TLSCertKey)
	}
	rest := pemData
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, fmt.Errorf("%s holds no PEM certificate", corev1.TLSCertKey)
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", corev1.TLSCertKey, err)
		}
		return c, nil
	}
}
