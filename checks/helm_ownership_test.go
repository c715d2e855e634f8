package checks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

func TestOwnershipFieldsIsHelmsRule(t *testing.T) {
	owned := map[string]string{HelmReleaseNameAnnotation: "rel", HelmReleaseNamespaceAnnotation: "ns"}
	if f := ownershipFields(map[string]string{HelmManagedByLabel: "Helm"}, owned, "rel", "ns"); len(f) != 0 {
		t.Errorf("owned object: %v", f)
	}
	if f := ownershipFields(nil, owned, "rel", "ns"); len(f) != 1 || f[0].Field != "metadata.labels["+HelmManagedByLabel+"]" {
		t.Errorf("label missing: %v", f)
	}
	f := ownershipFields(nil, nil, "rel", "ns")
	if len(f) != 3 || ownershipWhy(f) != "no Helm ownership metadata" {
		t.Errorf("orphan: %v %q", f, ownershipWhy(f))
	}
	f = ownershipFields(map[string]string{HelmManagedByLabel: "Helm"}, map[string]string{HelmReleaseNameAnnotation: "other", HelmReleaseNamespaceAnnotation: "ns"}, "rel", "ns")
	if len(f) != 1 || f[0].Old != "other" || f[0].New != "rel" {
		t.Errorf("other release: %v", f)
	}
}

func TestDescribeOwnerAndAdoption(t *testing.T) {
	records := map[string]cluster.HelmRecord{"codefresh/cf-gitops-runtime": {Namespace: "codefresh", Name: "cf-gitops-runtime", Status: "deployed"}}
	ann := func(rel, ns string) map[string]string {
		return map[string]string{HelmReleaseNameAnnotation: rel, HelmReleaseNamespaceAnnotation: ns}
	}
	cases := []struct {
		ann       map[string]string
		want      string
		adoptable bool
	}{
		{nil, "no owner", true},
		{ann("cf-gitops-runtime", "codefresh"), "owned by deployed release cf-gitops-runtime in namespace codefresh", false},
		{ann("old", "gone"), "owner release old in namespace gone no longer exists", true},
		{ann("rel2", "cf2"), "this release", true},
	}
	for _, c := range cases {
		owner, rec := describeOwner(records, c.ann, "rel2", "cf2")
		if owner != c.want {
			t.Errorf("owner %q, want %q", owner, c.want)
		}
		conf := OwnershipConflict{Object: ObjectRef{Kind: "ClusterRole", Name: "x"}, Owner: owner, OwnerRelease: rec, ResourceVersion: "42",
			Fields: ownershipFields(nil, c.ann, "rel2", "cf2")}
		ch, err := adoptionChange(conf)
		if err != nil {
			t.Fatal(err)
		}
		if c.adoptable != (ch.Refused == "") {
			t.Errorf("%s: refused %q, want adoptable=%v", owner, ch.Refused, c.adoptable)
		}
		if !c.adoptable {
			if !strings.Contains(ch.Refused, "uninstall it or install as that release") || ch.Patch != nil {
				t.Errorf("refusal %+v", ch)
			}
			continue
		}
		var patch struct {
			Metadata struct {
				ResourceVersion string            `json:"resourceVersion"`
				Labels          map[string]string `json:"labels"`
				Annotations     map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(ch.Patch, &patch); err != nil {
			t.Fatal(err)
		}
		if patch.Metadata.ResourceVersion != "42" || patch.Metadata.Labels[HelmManagedByLabel] != "Helm" || (patch.Metadata.Annotations[HelmReleaseNameAnnotation] != "rel2" && c.ann[HelmReleaseNameAnnotation] != "rel2") {
			t.Errorf("patch %s", ch.Patch)
		}
	}
	hook := OwnershipConflict{Hook: true, Why: "hook already exists"}
	if ch, _ := adoptionChange(hook); ch.Refused == "" {
		t.Error("an existing hook object is adopted; Helm would still fail to create it")
	}
}

func TestChartChecksSkipWithoutChart(t *testing.T) {
	env, _ := fakeEnv(t, "v1.30.0")
	for _, c := range []Check{ChartRenders(), HelmOwnership()} {
		res, err := c.Run(context.Background(), env)
		if err != nil || res.Status != StatusSkip || !strings.Contains(res.Message, "--chart") {
			t.Errorf("%s without a chart: %+v %v", c.ID, res, err)
		}
	}
}

func TestChartRendersReportsTheChartsMessage(t *testing.T) {
	env, _ := fakeEnv(t, "v1.30.0")
	l := chart.NewLoader(chart.Source{Ref: "./does/not/exist"})
	env.Chart = chart.Start(context.Background(), l, "rel", "ns", nil, func() (chart.Capabilities, error) {
		return chart.Capabilities{}, errors.New("unused")
	})
	res, err := runChartRenders(context.Background(), env)
	if err != nil || res.Status != StatusSkip || !strings.Contains(res.Message, "./does/not/exist") {
		t.Errorf("missing chart: %+v %v", res, err)
	}
	msg := (&chart.RenderError{Raw: `template: gitops-runtime/templates/x.yaml:3:4: executing "gitops-runtime/templates/x.yaml" at <fail "global.runtime.name is required for tunnel based runtime">: error calling fail: global.runtime.name is required for tunnel based runtime`}).Message()
	if msg != "global.runtime.name is required for tunnel based runtime" {
		t.Errorf("cleaned message %q", msg)
	}
	if h := renderHint(msg); !strings.Contains(h, "--set global.runtime.name=") {
		t.Errorf("hint %q does not name the value", h)
	}
}

func TestHelmOwnershipConflictsOnAFakeCluster(t *testing.T) {
	pom := func(apiVersion, kind, ns, name string, labels, ann map[string]string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: kind},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: ann, ResourceVersion: "7"}}
	}
	owner := func(rel, ns string) map[string]string {
		return map[string]string{HelmReleaseNameAnnotation: rel, HelmReleaseNamespaceAnnotation: ns}
	}
	helm := map[string]string{HelmManagedByLabel: HelmManagedByValue}
	rbac, batch := "rbac.authorization.k8s.io/v1", "batch/v1"
	env, _ := postEnv(t, Inputs{ReleaseName: "rel", Namespace: "ns"}, nil,
		pom(rbac, "ClusterRole", "", "orphan", nil, nil),
		pom(rbac, "ClusterRole", "", "taken", helm, owner("rel-a", "ns-a")),
		pom(rbac, "ClusterRole", "", "gone", helm, owner("old", "ns-old")),
		pom("v1", "ConfigMap", "ns", "mine", helm, owner("rel", "ns")),
		pom(batch, "Job", "ns", "hook-kept", nil, nil),
		pom(batch, "Job", "ns", "hook-recreated", nil, nil),
		// rel-a's release record, ConfigMap driver (HELM_DRIVER=configmap).
		pom("v1", "ConfigMap", "ns-a", "sh.helm.release.v1.rel-a.v1", map[string]string{"owner": "helm", "name": "rel-a", "status": "deployed", "version": "1"}, nil),
	)
	disc := fakediscovery.FakeDiscovery{Fake: &k8stesting.Fake{}}
	disc.Resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "configmaps", Kind: "ConfigMap", Namespaced: true}, {Name: "secrets", Kind: "Secret", Namespaced: true}}},
		{GroupVersion: rbac, APIResources: []metav1.APIResource{{Name: "clusterroles", Kind: "ClusterRole"}}},
		{GroupVersion: batch, APIResources: []metav1.APIResource{{Name: "jobs", Kind: "Job", Namespaced: true}, {Name: "jobs/status", Kind: "Job", Namespaced: true}}},
	}
	clients := env.Cluster.Clients()
	clients.Discovery = &disc
	env.Cluster = cluster.NewSnapshot(context.Background(), clients)

	r := &chart.Rendering{
		Objects: []chart.Object{
			{APIVersion: rbac, Kind: "ClusterRole", Name: "orphan"},
			{APIVersion: rbac, Kind: "ClusterRole", Name: "taken"},
			{APIVersion: rbac, Kind: "ClusterRole", Name: "gone"},
			{APIVersion: rbac, Kind: "ClusterRole", Name: "new"},
			{APIVersion: "v1", Kind: "ConfigMap", Name: "mine"},
			{APIVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute", Name: "route"},
			{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "applications.argoproj.io"},
		},
		Hooks: []chart.Object{
			{APIVersion: batch, Kind: "Job", Name: "hook-kept", Hook: true, DeletePolicies: []string{"hook-succeeded"}},
			{APIVersion: batch, Kind: "Job", Name: "hook-recreated", Hook: true, DeletePolicies: []string{"before-hook-creation", "hook-succeeded"}},
		},
	}
	conflicts, checked, err := HelmOwnershipConflicts(context.Background(), env, r)
	if err != nil {
		t.Fatal(err)
	}
	if checked != 8 {
		t.Errorf("checked %d objects, want 8 (the argoproj.io CRD is argo-crds-ownership's)", checked)
	}
	got := map[string]OwnershipConflict{}
	for _, c := range conflicts {
		got[c.Object.Kind+"/"+c.Object.Name] = c
	}
	if len(got) != 5 {
		t.Errorf("conflicts %v", got)
	}
	if c := got["ClusterRole/orphan"]; c.Owner != "no owner" || !c.Adoptable() || c.ResourceVersion != "7" {
		t.Errorf("orphan: %+v", c)
	}
	if c := got["ClusterRole/taken"]; c.OwnerRelease == nil || c.Adoptable() || c.Owner != "owned by deployed release rel-a in namespace ns-a" {
		t.Errorf("taken: %+v", c)
	}
	if c := got["ClusterRole/gone"]; !c.Adoptable() || !strings.Contains(c.Owner, "no longer exists") {
		t.Errorf("gone: %+v", c)
	}
	if c := got["HTTPRoute/route"]; !c.Missing || c.Adoptable() {
		t.Errorf("route: %+v", c)
	}
	if c := got["Job/hook-kept"]; !c.Hook || c.Object.Namespace != "ns" || c.Adoptable() {
		t.Errorf("hook: %+v", c)
	}
}
