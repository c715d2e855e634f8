package cluster

import (
	"crypto/x509"
	"encoding/pem"

	corev1 "k8s.io/api/core/v1"
)

// ConfigMap is one ConfigMap's data; Exists is false when it is absent.
type ConfigMap struct {
	Exists bool
	Data   map[string]string
}

// ConfigMap gets one ConfigMap by name (a GET), once per snapshot. Only use it
// for small, non-secret configuration such as argocd-cm.
func (s *Snapshot) ConfigMap(namespace, name string) (ConfigMap, error) {
	cm, _, err := getOne(s, "configmap/"+namespace+"/"+name, "configmaps/"+name, namespace, name,
		s.clients.Kube.CoreV1().ConfigMaps(namespace).Get,
		func(cm *corev1.ConfigMap) ConfigMap { return ConfigMap{Exists: true, Data: copyMap(cm.Data)} })
	return cm, err
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
	sec, _, err := getOne(s, "secret/"+namespace+"/"+name, "secrets/"+name, namespace, name,
		s.clients.Kube.CoreV1().Secrets(namespace).Get, secretFrom)
	return sec, err
}

// secretFrom keeps key names, lengths and the certificates of tls.crt.
func secretFrom(sec *corev1.Secret) Secret {
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
	return out
}
