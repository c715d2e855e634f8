package checks

import (
	"testing"

	rspb "helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestReleaseUpgradable(t *testing.T) {
	const rel = DefaultReleaseName
	tests := []struct {
		name string
		objs []runtime.Object
		want outcome
	}{
		{"deployed", []runtime.Object{helmRelease(t, "codefresh", rel, 1, rspb.StatusDeployed, "Install complete")},
			outcome{StatusPass, []string{"release cf-gitops-runtime revision 1 is deployed (chart gitops-runtime-0.30.0)"}}},
		{"pending upgrade", []runtime.Object{
			helmRelease(t, "codefresh", rel, 1, rspb.StatusDeployed, ""),
			helmRelease(t, "codefresh", rel, 2, rspb.StatusPendingUpgrade, "Preparing upgrade")},
			outcome{StatusFail, []string{"revision 2 is pending-upgrade", `"another operation (install/upgrade/rollback) is in progress"`, "helm rollback"}}},
		{"pending install", []runtime.Object{helmRelease(t, "codefresh", rel, 1, rspb.StatusPendingInstall, "")},
			outcome{StatusFail, []string{"another operation (install/upgrade/rollback) is in progress"}}},
		{"latest failed, one deployed before", []runtime.Object{
			helmRelease(t, "codefresh", rel, 1, rspb.StatusDeployed, ""),
			helmRelease(t, "codefresh", rel, 2, rspb.StatusFailed, "pre-upgrade hooks failed")},
			outcome{StatusWarn, []string{"revision 2 is failed", "helm upgrade starts from revision 1 (deployed"}}},
		{"only a failed install", []runtime.Object{helmRelease(t, "codefresh", rel, 1, rspb.StatusFailed, "")},
			outcome{StatusWarn, []string{"helm upgrade starts from it"}}},
		{"uninstalled, history kept", []runtime.Object{helmRelease(t, "codefresh", rel, 1, rspb.StatusUninstalled, "")},
			outcome{StatusFail, []string{`has no deployed releases`}}},
		{"in another namespace", []runtime.Object{helmRelease(t, "gitops", rel, 1, rspb.StatusDeployed, "")},
			outcome{StatusFail, []string{`"\"cf-gitops-runtime\" has no deployed releases"`, "run again with -n gitops"}}},
		{"not installed", nil, outcome{StatusFail, []string{"has no revision in namespace codefresh", "helm list -A"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.expect(t, newKit(t).inMode(ModeUpgrade).objects(tt.objs...).run(ReleaseUpgradable()))
		})
	}
}
