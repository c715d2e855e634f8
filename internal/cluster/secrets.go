package cluster

import (
	"context"

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
