package checks

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestReleaseAPIs runs release-apis through the kit on the manifest of the
// deployed revision: kinds the cluster serves pass; an API version it no
// longer serves (extensions/v1beta1 Ingress, removed in Kubernetes 1.22)
// fails naming the object and helm-mapkubeapis; a manifest that does not
// parse fails; no release to upgrade skips.
func TestReleaseAPIs(t *testing.T) {
	ing := "---\n# Source: gitops-runtime/templates/ingress.yaml\napiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: runtime\n"
	deploy := "---\n# Source: gitops-runtime/templates/app.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n  namespace: codefresh\n"
	for _, tt := range []struct {
		name     string
		manifest string
		want     outcome
	}{
		{"served", configMapManifest + deploy, outcome{StatusPass, []string{"the 2 objects of release " + DefaultReleaseName + " revision 1 use API versions the cluster serves"}}},
		{"removed API", configMapManifest + ing, outcome{StatusFail, []string{
			"release " + DefaultReleaseName + " revision 1 holds extensions/v1beta1 Ingress, which the cluster no longer serves",
			"current release manifest contains removed kubernetes api(s)", "helm mapkubeapis " + DefaultReleaseName + " -n " + DefaultNamespace}}},
		{"manifest does not parse", "---\napiVersion: v1\nkind: ConfigMap\nmetadata: [1\n", outcome{StatusFail, []string{"the manifest of release " + DefaultReleaseName + " revision 1 does not parse"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := newKit(t).objects(deployed{Version: "0.30.0", Manifest: tt.manifest}.record(t)).inMode(ModeUpgrade).
				serves("v1", metav1.APIResource{Name: "configmaps", Kind: "ConfigMap", Namespaced: true}).
				serves("apps/v1", metav1.APIResource{Name: "deployments", Kind: "Deployment", Namespaced: true}).
				serves("networking.k8s.io/v1", metav1.APIResource{Name: "ingresses", Kind: "Ingress", Namespaced: true})
			r := k.run(ReleaseAPIs())
			tt.want.expect(t, r)
			if tt.name == "removed API" && (len(r.Objects) != 1 || r.Objects[0] != (ObjectRef{Kind: "Ingress", Namespace: DefaultNamespace, Name: "runtime"})) {
				t.Errorf("objects %+v, want the Ingress in the release namespace", r.Objects)
			}
		})
	}
	t.Run("no release", func(t *testing.T) {
		outcome{StatusSkip, []string{"release " + DefaultReleaseName + " has no revision in namespace " + DefaultNamespace}}.
			expect(t, newKit(t).inMode(ModeUpgrade).run(ReleaseAPIs()))
	})
}
