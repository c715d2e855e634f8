package apply

import (
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

func TestOwnedWorkloads(t *testing.T) {
	mine := map[string]string{ReleaseNameAnnotation: "cf", ReleaseNamespaceAnnotation: "codefresh"}
	other := map[string]string{ReleaseNameAnnotation: "cf", ReleaseNamespaceAnnotation: "elsewhere"}
	deps := []cluster.Workload{{Kind: "Deployment", Namespace: "codefresh", Name: "argo-server", Annotations: mine}, {Kind: "Deployment", Namespace: "codefresh", Name: "web", Annotations: other}}
	sts := []cluster.Workload{{Kind: "StatefulSet", Namespace: "codefresh", Name: "redis", Annotations: mine}, {Kind: "StatefulSet", Namespace: "codefresh", Name: "db"}}
	got := OwnedWorkloads("cf", "codefresh", deps, sts)
	if len(got) != 2 || !got["Deployment/codefresh/argo-server"] || !got["StatefulSet/codefresh/redis"] {
		t.Errorf("OwnedWorkloads = %v", got)
	}
	if OwnedBy(nil, "", "") != true || OwnedBy(nil, "cf", "codefresh") {
		t.Error("OwnedBy of no annotations: only the empty release matches")
	}
}

func TestOwnerOf(t *testing.T) {
	records := map[string]cluster.HelmRecord{"ns1/rel1": {Namespace: "ns1", Name: "rel1", Status: "deployed"}}
	ann := func(rel, ns string) map[string]string {
		return map[string]string{ReleaseNameAnnotation: rel, ReleaseNamespaceAnnotation: ns}
	}
	if o := OwnerOf(records, nil, "cf", "codefresh"); o.Release != "" || o.Self || o.Record != nil {
		t.Errorf("no annotations: %+v", o)
	}
	if o := OwnerOf(records, ann("cf", "codefresh"), "cf", "codefresh"); !o.Self || o.Record != nil {
		t.Errorf("this release: %+v", o)
	}
	if o := OwnerOf(records, ann("rel1", "ns1"), "cf", "codefresh"); o.Self || o.Record == nil || o.Record.Status != "deployed" {
		t.Errorf("an existing release: %+v", o)
	}
	if o := OwnerOf(records, ann("gone", "ns1"), "cf", "codefresh"); o.Self || o.Record != nil || o.Release != "gone" || o.Namespace != "ns1" {
		t.Errorf("a release that no longer exists: %+v", o)
	}
}

func TestMetadataPatch(t *testing.T) {
	for _, tc := range []struct {
		labels, annotations map[string]string
		want                string
	}{
		{map[string]string{ManagedByLabel: ManagedByHelm}, map[string]string{ReleaseNameAnnotation: "cf"},
			`{"metadata":{"annotations":{"meta.helm.sh/release-name":"cf"},"labels":{"app.kubernetes.io/managed-by":"Helm"},"resourceVersion":"42"}}`},
		{nil, map[string]string{ReleaseNamespaceAnnotation: "codefresh"},
			`{"metadata":{"annotations":{"meta.helm.sh/release-namespace":"codefresh"},"resourceVersion":"42"}}`},
		{nil, nil, `{"metadata":{"resourceVersion":"42"}}`},
	} {
		got, err := MetadataPatch(tc.labels, tc.annotations, "42")
		if err != nil || string(got) != tc.want {
			t.Errorf("MetadataPatch(%v, %v) = %s, %v; want %s", tc.labels, tc.annotations, got, err, tc.want)
		}
	}
}
