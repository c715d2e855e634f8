package checks

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestClusterReachable: /version answering, refusing the credentials,
// forbidden to these credentials (the cluster is there) and unreachable, as
// the discovery client reports each.
func TestClusterReachable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want outcome
	}{
		{"answers", nil, outcome{StatusPass, []string{"answered: Kubernetes v1.30.0"}}},
		{"credentials rejected", apierrors.NewUnauthorized("token expired"), outcome{StatusFail, []string{"rejected the credentials (401 Unauthorized)", "refresh your credentials"}}},
		{"version forbidden", apierrors.NewForbidden(schema.GroupResource{Resource: "version"}, "", errors.New("denied")), outcome{StatusPass, []string{"/version is forbidden for these credentials"}}},
		{"connection refused", errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), outcome{StatusFail, []string{"cannot reach", "connection refused", "kubectl config current-context"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKit(t)
			env := k.env()
			if tc.err != nil {
				k.Kube.PrependReactor("get", "version", func(k8sAction) (bool, runtimeObject, error) { return true, nil, tc.err })
			}
			tc.want.expect(t, runThrough(t, ClusterReachable(), env))
		})
	}
}
