package cluster

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var configMapsResource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// ObjectMeta is the metadata of an object listed metadata-only.
type ObjectMeta struct {
	Namespace   string
	Name        string
	Labels      map[string]string
	Annotations map[string]string // without kubectl's last-applied-configuration
	// ResourceVersion is set by Objects (for --fix's conflict guard).
	ResourceVersion string
}

// ConfigMapsNamed lists the ConfigMaps called name in every namespace, once
// per snapshot and name: one metadata-only list with the field selector
// metadata.name=<name> (the API server filters; no ConfigMap data is read).
// The result is sorted by namespace.
func (s *Snapshot) ConfigMapsNamed(name string) ([]ObjectMeta, error) {
	return Memo(s, "configmaps/named/"+name, func() ([]ObjectMeta, error) {
		var out []ObjectMeta
		opts := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
		err := s.eachMeta(configMapsResource, "", opts, func(m *metav1.PartialObjectMetadata) {
			out = append(out, ObjectMeta{Namespace: m.Namespace, Name: m.Name, Labels: copyMap(m.Labels), Annotations: copyMap(m.Annotations)})
		})
		sort.Slice(out, func(i, j int) bool { return out[i].Namespace < out[j].Namespace })
		return out, err
	})
}
