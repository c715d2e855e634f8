package cluster

import (
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
