package apply

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"
)

func TestRefusalsNameTheObjects(t *testing.T) {
	got := refusals(`cannot patch "cap-app-proxy" with kind Deployment: Deployment.apps "cap-app-proxy" is invalid: spec.selector: Invalid value: field is immutable && cannot patch "redis" with kind StatefulSet: forbidden`)
	if len(got) != 2 || got[0].Name != "cap-app-proxy" || got[0].Kind != "Deployment" || got[1].Name != "redis" || got[1].Kind != "StatefulSet" {
		t.Errorf("refusals = %+v", got)
	}
}

// TestGroupResourcesAsRestmapper: the REST mapper's input built from the
// run's discovery document is client-go's own assembly of the same
// document (restmapper.GetAPIGroupResources).
func TestGroupResourcesAsRestmapper(t *testing.T) {
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "configmaps", Kind: "ConfigMap", Namespaced: true}, {Name: "namespaces", Kind: "Namespace"}}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{Name: "deployments", Kind: "Deployment", Namespaced: true}}},
		{GroupVersion: "argoproj.io/v1alpha1", APIResources: []metav1.APIResource{{Name: "applications", Kind: "Application", Namespaced: true}}},
	}}}
	groups, resources, err := disc.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	want, err := restmapper.GetAPIGroupResources(disc)
	if err != nil {
		t.Fatal(err)
	}
	got := groupResources(groups, resources)
	byName := func(l []*restmapper.APIGroupResources) map[string]restmapper.APIGroupResources {
		m := map[string]restmapper.APIGroupResources{}
		for _, g := range l {
			m[g.Group.Name] = *g
		}
		return m
	}
	if len(got) != 3 || !reflect.DeepEqual(byName(got), byName(want)) {
		t.Errorf("groupResources = %+v, want %+v", byName(got), byName(want))
	}
	m := restmapper.NewDiscoveryRESTMapper(got)
	mapping, err := m.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "v1")
	if err != nil || mapping.Resource.Resource != "deployments" || mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		t.Errorf("mapping %+v, %v", mapping, err)
	}
}
