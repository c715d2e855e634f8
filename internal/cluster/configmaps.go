package cluster

import (
	"crypto/x509"
	"encoding/pem"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConfigMap is one ConfigMap's data; Exists is false when it is absent.
type ConfigMap struct {
	Exists bool
	Data   map[string]string
}

// ConfigMap gets one ConfigMap by name (a GET), once per snapshot. Only use it
// for small, non-secret configuration such as argocd-cm.
func (s *Snapshot) ConfigMap(namespace, name string) (ConfigMap, error) {
	return Memo(s, "configmap/"+namespace+"/"+name, func() (ConfigMap, error) {
		cm, err := s.clients.Kube.CoreV1().ConfigMaps(namespace).Get(s.ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return ConfigMap{}, nil
		}
		if err != nil {
			return ConfigMap{}, &ListError{Verb: "get", Resource: "configmaps/" + name, Namespace: namespace, Err: err}
		}
		return ConfigMap{Exists: true, Data: copyMap(cm.Data)}, nil
	})
}

// Secret is what the checks may know of a Secret: never a value. KeyLengths
// gives each data key's length in bytes (0 means present but empty); Certs
// are the certificates parsed from the public tls.crt key, if any.
type Secret struct {
	Exists     bool
	Type       string
	KeyLengths map[string]int
	Certs      []*x509.Certificate
}

// Secret gets one Secret by name (a GET), once per snapshot, and keeps only
// key names, lengths and the parsed public certificate of tls.crt; the
// values are dropped before this returns.
func (s *Snapshot) Secret(namespace, name string) (Secret, error) {
	return Memo(s, "secret/"+namespace+"/"+name, func() (Secret, error) {
		sec, err := s.clients.Kube.CoreV1().Secrets(namespace).Get(s.ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return Secret{}, nil
		}
		if err != nil {
			return Secret{}, &ListError{Verb: "get", Resource: "secrets/" + name, Namespace: namespace, Err: err}
		}
		out := Secret{Exists: true, Type: string(sec.Type), KeyLengths: map[string]int{}}
		for k, v := range sec.Data {
			out.KeyLengths[k] = len(v)
		}
		for k, v := range sec.StringData {
			out.KeyLengths[k] = len(v)
		}
		rest := sec.Data["tls.crt"]
		for {
			var b *pem.Block
			b, rest = pem.Decode(rest)
			if b == nil {
				break
			}
			if b.Type != "CERTIFICATE" {
				continue
			}
			if c, err := x509.ParseCertificate(b.Bytes); err == nil {
				out.Certs = append(out.Certs, c)
			}
		}
		return out, nil
	})
}
