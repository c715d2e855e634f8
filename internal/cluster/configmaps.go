package cluster

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConfigMap gets one ConfigMap's data by name (a GET), once per snapshot;
// found is false when it does not exist. Only small, chart-owned ConfigMaps
// (codefresh-cm) are read this way.
func (s *Snapshot) ConfigMap(namespace, name string) (data map[string]string, found bool, err error) {
	type res struct {
		data  map[string]string
		found bool
	}
	r, err := Memo(s, "configmap/"+namespace+"/"+name, func() (res, error) {
		cm, err := s.clients.Kube.CoreV1().ConfigMaps(namespace).Get(s.ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return res{}, nil
		}
		if err != nil {
			return res{}, &ListError{Verb: "get", Resource: "configmaps", Namespace: namespace, Err: err}
		}
		return res{data: cm.Data, found: true}, nil
	})
	return r.data, r.found, err
}
