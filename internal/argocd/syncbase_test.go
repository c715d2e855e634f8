package argocd

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestBaseOf: the release name is helm.releaseName, else the
// Application's name; the namespace is the destination's, else the
// runtime's; the chart's source, its refs, the helm values, the sync
// policy and ServerSideApply=true (any case) are carried over.
func TestBaseOf(t *testing.T) {
	a := &Application{Namespace: "argocd", Name: "rt1", Revision: "abc", Automated: true, Prune: true, SyncOptions: []string{" serverSideApply=TRUE"},
		Source: Source{RepoURL: "https://git.example/org/isc.git", Path: "resources/rt1/chart", Helm: &Helm{ReleaseName: "cf", ValueFiles: []string{"v.yaml"}, SkipCRDs: true,
			Parameters: []HelmParameter{{Name: "a", Value: "1", ForceString: true}}}},
		Refs: map[string]Source{"values": {RepoURL: "https://git.example/org/values.git", TargetRevision: "main"}}}
	b := baseOf(a, "codefresh", "0.29.1", "")
	want := &SyncBase{App: "argocd/rt1", Revision: "abc", ReleaseName: "cf", Namespace: "codefresh", ChartVersion: "0.29.1", TrackingApp: "argocd_rt1",
		Automated: true, Prune: true, ServerSideApply: true, NoPrune: map[string]bool{},
		SourceRepoURL: "https://git.example/org/isc.git", SourcePath: "resources/rt1/chart", Refs: map[string]SyncRef{"values": {RepoURL: "https://git.example/org/values.git", TargetRevision: "main"}},
		ValueFiles: []string{"v.yaml"}, SkipCRDs: true, Parameters: []SyncParameter{{Name: "a", Value: "1", ForceString: true}}}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("baseOf\n got %+v\nwant %+v", b, want)
	}
	a.Source.Helm, a.DestNamespace, a.SyncOptions = nil, "rt-ns", nil
	b = baseOf(a, "codefresh", "", "rt1:/ConfigMap:rt-ns/codefresh-cm")
	if b.ReleaseName != "rt1" || b.Namespace != "rt-ns" || b.ServerSideApply || b.TrackingApp != "rt1" {
		t.Errorf("without helm: %+v", b)
	}
}

// TestTrackingApp: as codefresh-cm's annotation names it, else the name
// alone for an Application in its destination namespace, else
// "<namespace>_<name>".
func TestTrackingApp(t *testing.T) {
	a := &Application{Namespace: "codefresh", Name: "rt1", DestNamespace: "codefresh"}
	if got := trackingApp(a, ""); got != "rt1" {
		t.Errorf("in its destination: %q", got)
	}
	if got := trackingApp(a, "argocd_rt1:/ConfigMap:codefresh/codefresh-cm"); got != "argocd_rt1" {
		t.Errorf("as tracked: %q", got)
	}
	a.Namespace = "argocd"
	if got := trackingApp(a, ""); got != "argocd_rt1" {
		t.Errorf("outside its destination: %q", got)
	}
}

// TestAppliedDoc: the last-applied configuration stands for what was
// applied; without one, the live object without status and server-set
// metadata; the destination namespace is left out.
func TestAppliedDoc(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm", "namespace": "codefresh", "uid": "u", "resourceVersion": "7", "managedFields": []any{}, "labels": map[string]any{"a": "b"}},
		"data":     map[string]any{"k": "live"},
		"status":   map[string]any{"x": "y"},
	}}
	doc, err := appliedDoc(u, "codefresh")
	if err != nil || doc != "apiVersion: v1\ndata:\n  k: live\nkind: ConfigMap\nmetadata:\n  labels:\n    a: b\n  name: cm\n" {
		t.Errorf("live doc %q, %v", doc, err)
	}
	if doc, _ := appliedDoc(u, "other"); !strings.Contains(doc, "namespace: codefresh") {
		t.Errorf("another namespace is kept: %q", doc)
	}
	u.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"codefresh"},"data":{"k":"applied"}}`})
	doc, err = appliedDoc(u, "codefresh")
	if err != nil || doc != "apiVersion: v1\ndata:\n  k: applied\nkind: ConfigMap\nmetadata:\n  name: cm\n" {
		t.Errorf("last-applied doc %q, %v", doc, err)
	}
	u.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{"})
	if _, err := appliedDoc(u, "codefresh"); err == nil {
		t.Error("a last-applied configuration that does not parse is no error")
	}
	if stripNamespace("codefresh", "codefresh") != "" || stripNamespace("kube-system", "codefresh") != "kube-system" {
		t.Error("stripNamespace")
	}
}
