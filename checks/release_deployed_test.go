package checks

import (
	"context"
	"fmt"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	rspb "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// helmRelease returns the Secret Helm's own storage driver writes for
// revision rev of release name in ns with status st.
func helmRelease(t *testing.T, ns, name string, rev int, st rspb.Status, desc string) runtime.Object {
	t.Helper()
	kube := fake.NewClientset()
	d := driver.NewSecrets(kube.CoreV1().Secrets(ns))
	key := fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, rev)
	rls := &rspb.Release{Name: name, Namespace: ns, Version: rev,
		Info:  &rspb.Info{Status: st, Description: desc},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "gitops-runtime", Version: "0.30.0", AppVersion: "0.1.80"}}}
	if err := d.Create(key, rls); err != nil {
		t.Fatal(err)
	}
	sec, err := kube.CoreV1().Secrets(ns).Get(context.Background(), key, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

func TestReleaseDeployed(t *testing.T) {
	post := ModePost
	const rel = DefaultReleaseName
	tests := []struct {
		name string
		objs []runtime.Object
		want outcome
	}{
		{"deployed", []runtime.Object{helmRelease(t, "codefresh", rel, 1, rspb.StatusDeployed, "Install complete")},
			outcome{StatusPass, []string{"release cf-gitops-runtime revision 1 is deployed (chart gitops-runtime-0.30.0, app version 0.1.80)"}}},
		{"latest revision failed", []runtime.Object{
			helmRelease(t, "codefresh", rel, 1, rspb.StatusSuperseded, ""),
			helmRelease(t, "codefresh", rel, 2, rspb.StatusFailed, "post-install hook failed")},
			outcome{StatusFail, []string{"revision 2 is failed", "post-install hook failed", "helm history cf-gitops-runtime -n codefresh"}}},
		{"pending install", []runtime.Object{helmRelease(t, "codefresh", rel, 1, rspb.StatusPendingInstall, "")},
			outcome{StatusFail, []string{"is pending-install", "helm rollback"}}},
		{"in another namespace", []runtime.Object{helmRelease(t, "gitops", rel, 1, rspb.StatusDeployed, "")},
			outcome{StatusFail, []string{"release cf-gitops-runtime is not installed in namespace codefresh (a release cf-gitops-runtime exists in namespace gitops)", "run again with -n gitops"}}},
		{"not installed", nil, outcome{StatusFail, []string{"release cf-gitops-runtime is not installed in namespace codefresh", "helm list -A"}}},
		{"not before install", nil, outcome{StatusSkip, []string{NotApplicable + "runs after the install only"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mode := post
			if tt.name == "not before install" {
				mode = ModePre
			}
			tt.want.expect(t, newKit(t).objects(tt.objs...).inMode(mode).run(ReleaseDeployed()))
		})
	}
}
