package cluster

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SecretExists reports whether a Secret exists, with a metadata-only GET: the
// Secret's data is never transferred.
func (s *Snapshot) SecretExists(namespace, name string) (bool, error) {
	_, found, err := getOne(s, "secret-exists/"+namespace+"/"+name, "secrets", namespace, name,
		func(ctx context.Context, name string, o metav1.GetOptions) (*metav1.PartialObjectMetadata, error) {
			return s.clients.Metadata.Resource(secretsResource).Namespace(namespace).Get(ctx, name, o)
		},
		func(*metav1.PartialObjectMetadata) struct{} { return struct{}{} })
	return found, err
}

// SecretKey returns one key of a Secret (a GET, not memoised: the value is
// kept nowhere in the snapshot), for a check that must send it where the
// chart's own hook sends it (the user token, to the platform). found is
// false when the Secret or the key does not exist. Callers never print it.
func (s *Snapshot) SecretKey(namespace, name, key string) (value []byte, found bool, err error) {
	sec, err := s.clients.Kube.CoreV1().Secrets(namespace).Get(s.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, &ListError{Verb: "get", Resource: "secrets", Namespace: namespace, Err: err}
	}
	v, ok := sec.Data[key]
	return v, ok, nil
}
