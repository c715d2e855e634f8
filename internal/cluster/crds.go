package cluster

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CRDResource is the CustomResourceDefinition resource, read metadata-only.
var CRDResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRD is the metadata of a CustomResourceDefinition. CRDs are listed
// metadata-only (PartialObjectMetadata): their OpenAPI schemas are large and
// no check reads them.
type CRD struct {
	// Name is <plural>.<group>, e.g. "applications.argoproj.io".
	Name            string
	Labels          map[string]string
	Annotations     map[string]string // without kubectl's last-applied-configuration
	ResourceVersion string
}

// Group is the API group of the CRD, the part of its name after the first dot.
func (c CRD) Group() string {
	_, g, _ := strings.Cut(c.Name, ".")
	return g
}

// Plural is the CRD's plural resource name, the part of its name before the first dot.
func (c CRD) Plural() string {
	p, _, _ := strings.Cut(c.Name, ".")
	return p
}

// CRDs lists CustomResourceDefinitions (metadata only) once per snapshot.
func (s *Snapshot) CRDs() ([]CRD, error) {
	return s.crds.get(func() ([]CRD, error) {
		var out []CRD
		err := s.eachMeta(CRDResource, "", metav1.ListOptions{}, func(m *metav1.PartialObjectMetadata) {
			out = append(out, CRD{
				Name:            m.Name,
				Labels:          copyMap(m.Labels),
				Annotations:     copyMap(m.Annotations),
				ResourceVersion: m.ResourceVersion,
			})
		})
		return out, err
	})
}
