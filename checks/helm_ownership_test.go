package checks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	rspb "helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	env := newKit(t).with(Inputs{ReleaseName: "rel", Namespace: "ns"}).objects(
		pom(rbac, "ClusterRole", "", "orphan", nil, nil),
		pom(rbac, "ClusterRole", "", "taken", helm, owner("rel-a", "ns-a")),
		pom(rbac, "ClusterRole", "", "gone", helm, owner("old", "ns-old")),
		pom("v1", "ConfigMap", "ns", "mine", helm, owner("rel", "ns")),
		pom(batch, "Job", "ns", "hook-kept", nil, nil),
		pom(batch, "Job", "ns", "hook-recreated", nil, nil),
		// rel-a's release record, ConfigMap driver (HELM_DRIVER=configmap).
		pom("v1", "ConfigMap", "ns-a", "sh.helm.release.v1.rel-a.v1", map[string]string{"owner": "helm", "name": "rel-a", "status": "deployed", "version": "1"}, nil),
	).
		serves("v1", metav1.APIResource{Name: "configmaps", Kind: "ConfigMap", Namespaced: true}, metav1.APIResource{Name: "secrets", Kind: "Secret", Namespaced: true}).
		serves(rbac, metav1.APIResource{Name: "clusterroles", Kind: "ClusterRole"}).
		serves(batch, metav1.APIResource{Name: "jobs", Kind: "Job", Namespaced: true}, metav1.APIResource{Name: "jobs/status", Kind: "Job", Namespaced: true}).
		env()
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

// TestHelmOwnership runs helm-ownership through the kit on a chart rendering
// ClusterRole runtime-reader and ConfigMap codefresh-cm (and, in one case,
// an HTTPRoute): objects that do not exist yet or carry the release's
// ownership pass; one without Helm's metadata, one of another release that
// still exists, and a kind the cluster does not serve fail, each with its
// way out.
func TestHelmOwnership(t *testing.T) {
	templates := map[string]string{
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: codefresh-cm\n",
		"cr.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: runtime-reader\nrules: []\n",
	}
	withRoute := map[string]string{"route.yaml": "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: runtime\n"}
	for k, v := range templates {
		withRoute[k] = v
	}
	const (
		ownCM = `apiVersion: v1
kind: ConfigMap
metadata:
  name: codefresh-cm
  namespace: codefresh
  labels: {app.kubernetes.io/managed-by: Helm}
  annotations: {meta.helm.sh/release-name: cf-gitops-runtime, meta.helm.sh/release-namespace: codefresh}`
		orphanCR = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: runtime-reader}`
		takenCR = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: runtime-reader
  labels: {app.kubernetes.io/managed-by: Helm}
  annotations: {meta.helm.sh/release-name: rel-a, meta.helm.sh/release-namespace: ns-a}`
	)
	for _, tt := range []struct {
		name      string
		templates map[string]string
		live      []string
		want      outcome
	}{
		{"new or the release's own", templates, []string{ownCM},
			outcome{StatusPass, []string{"none of the 2 objects of release " + DefaultReleaseName + " in namespace " + DefaultNamespace + " exists without Helm ownership for it; every kind is served"}}},
		{"a ClusterRole without Helm's metadata", templates, []string{ownCM, orphanCR},
			outcome{StatusFail, []string{`objects helm install cannot adopt ("invalid ownership metadata" or "already exists"): ClusterRole ×1: runtime-reader (no Helm ownership metadata; no owner)`,
				"kubectl gitops-preflight --fix --chart ... --release-name " + DefaultReleaseName + " -n " + DefaultNamespace}}},
		{"a ClusterRole of another release", templates, []string{ownCM, takenCR},
			outcome{StatusFail, []string{"ClusterRole ×1: runtime-reader", "owned by deployed release rel-a in namespace ns-a", "uninstall it or install as that release (rel-a in namespace ns-a)"}}},
		{"a kind not served", withRoute, []string{ownCM},
			outcome{StatusFail, []string{`kinds the cluster does not serve (helm install fails with "no matches for kind"): HTTPRoute (gateway.networking.k8s.io/v1)`, "Gateway API CRDs"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := newKit(t, tt.live...).objects(helmRelease(t, "ns-a", "rel-a", 1, rspb.StatusDeployed, "")).
				helm(3).withChart(targetChart(t, "0.30.0", "", tt.templates)).
				serves("v1", metav1.APIResource{Name: "configmaps", Kind: "ConfigMap", Namespaced: true}, metav1.APIResource{Name: "secrets", Kind: "Secret", Namespaced: true}).
				serves("rbac.authorization.k8s.io/v1", metav1.APIResource{Name: "clusterroles", Kind: "ClusterRole"})
			tt.want.expect(t, k.run(HelmOwnership()))
		})
	}
}
