package cluster

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		err = s.eachMeta(configMapsResource, "", metav1.ListOptions{LabelSelector: "owner=helm"}, func(m *metav1.PartialObjectMetadata) {
			if name, v, ok := helmRecordLabels(m); ok {
				add(HelmRecord{Namespace: m.Namespace, Name: name, Status: m.Labels["status"], Version: v, Driver: "configmap"})
			}
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	})
}
