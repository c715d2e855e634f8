package cluster

import (
	"context"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// HelmRecord is the latest revision of one Helm release, from either of
// Helm's storage drivers: Secrets (the default, type helm.sh/release.v1) or
// ConfigMaps (HELM_DRIVER=configmap); both label their objects owner=helm,
// name, status and version (Helm pkg/storage/driver).
type HelmRecord struct {
	Namespace string
	Name      string
	Status    string
	Version   int
	Driver    string // "secret" or "configmap"
}

// HelmReleaseRecords returns the latest revision of every Helm release of
// either driver, keyed by namespace/name, once per snapshot: the Secrets
// through HelmRevisions, and one metadata-only list of ConfigMaps labelled
// owner=helm.
func (s *Snapshot) HelmReleaseRecords() (map[string]HelmRecord, error) {
	return Memo(s, "helm/records", func() (map[string]HelmRecord, error) {
		out := map[string]HelmRecord{}
		add := func(r HelmRecord) {
			k := r.Namespace + "/" + r.Name
			if cur, ok := out[k]; !ok || r.Version > cur.Version {
				out[k] = r
			}
		}
		revs, err := s.HelmRevisions()
		if err != nil {
			return nil, err
		}
		for _, r := range revs {
			add(HelmRecord{Namespace: r.Namespace, Name: r.Name, Status: r.Status, Version: r.Version, Driver: "secret"})
		}
		err = each(s.ctx, "configmaps", "", metav1.ListOptions{LabelSelector: "owner=helm"},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Metadata.Resource(configMapsResource).Namespace(metav1.NamespaceAll).List(ctx, o)
			},
			func(obj runtime.Object) error {
				m, ok := obj.(*metav1.PartialObjectMetadata)
				if !ok {
					return fmt.Errorf("unexpected %T in configmap list", obj)
				}
				v, err := strconv.Atoi(m.Labels["version"])
				if err != nil || m.Labels["name"] == "" {
					return nil
				}
				add(HelmRecord{Namespace: m.Namespace, Name: m.Labels["name"], Status: m.Labels["status"], Version: v, Driver: "configmap"})
				return nil
			})
		if err != nil {
			return nil, err
		}
		return out, nil
	})
}
