package cluster

import (
	"context"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	rspb "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestDecodeHelmReleaseRoundTrip writes a release with Helm's own Secrets
// driver and decodes the stored Secret with DecodeHelmRelease.
func TestDecodeHelmReleaseRoundTrip(t *testing.T) {
	kube := fake.NewClientset()
	d := driver.NewSecrets(kube.CoreV1().Secrets("codefresh"))
	in := &rspb.Release{
		Name: "cf-gitops-runtime", Namespace: "codefresh", Version: 3,
		Info:  &rspb.Info{Status: rspb.StatusFailed, Description: "post-install hook failed"},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "gitops-runtime", Version: "0.29.3", AppVersion: "0.1.73"}},
	}
	if err := d.Create("sh.helm.release.v1.cf-gitops-runtime.v3", in); err != nil {
		t.Fatal(err)
	}
	sec, err := kube.CoreV1().Secrets("codefresh").Get(context.Background(), "sh.helm.release.v1.cf-gitops-runtime.v3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Labels["owner"] != "helm" || sec.Labels["status"] != "failed" || sec.Labels["version"] != "3" {
		t.Fatalf("unexpected labels from Helm's driver: %v", sec.Labels)
	}
	got, err := DecodeHelmRelease(sec)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != in.Name || got.Version != 3 || got.Info.Status != rspb.StatusFailed ||
		got.Chart.Metadata.Name != "gitops-runtime" || got.Chart.Metadata.Version != "0.29.3" || got.Info.Description != in.Info.Description {
		t.Fatalf("DecodeHelmRelease = %+v, want %+v", got, in)
	}
}

func TestDecodeHelmReleaseErrors(t *testing.T) {
	for name, data := range map[string]string{"not base64": "!!!", "not json": "bm90IGpzb24="} {
		t.Run(name, func(t *testing.T) {
			sec := secretWith(map[string][]byte{"release": []byte(data)})
			if _, err := DecodeHelmRelease(sec); err == nil {
				t.Fatalf("DecodeHelmRelease(%q) = nil error", data)
			}
		})
	}
	if _, err := DecodeHelmRelease(secretWith(nil)); err == nil {
		t.Fatal("secret without release data decoded")
	}
}

func TestLatestHelmRevisions(t *testing.T) {
	revs := []HelmRevision{
		{Namespace: "a", Name: "x", Version: 1}, {Namespace: "a", Name: "x", Version: 3}, {Namespace: "a", Name: "x", Version: 2},
		{Namespace: "b", Name: "x", Version: 1},
	}
	got := LatestHelmRevisions(revs)
	if len(got) != 2 || got[0].Version != 3 || got[1].Namespace != "b" {
		t.Fatalf("LatestHelmRevisions = %+v", got)
	}
}

func secretWith(data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}, Data: data}
}
