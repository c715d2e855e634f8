package checks

import (
	"strings"
	"testing"

	rspb "helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/runtime"
)

// runtimeApp is an Application syncing the runtime into namespace
// codefresh, whose inventory holds codefresh-cm and cap-app-proxy, with
// status (YAML, indented under status:).
func runtimeApp(status string) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {namespace: argocd, name: codefresh-runtime, labels: {codefresh.io/entity: runtime}}
spec:
  destination: {server: https://kubernetes.default.svc, namespace: codefresh}
  source: {repoURL: https://git.example.com/acme/isc.git, path: resources/codefresh/chart, targetRevision: HEAD}
  syncPolicy: {automated: {prune: true, selfHeal: true}}
status:
` + status
}

// liveCM is codefresh-cm as the chart renders it at version v, with Argo
// CD's tracking annotation.
func liveCM(v string) string {
	return `apiVersion: v1
kind: ConfigMap
metadata:
  namespace: codefresh
  name: codefresh-cm
  labels: {helm.sh/chart: gitops-runtime-` + v + `}
  annotations: {argocd.argoproj.io/tracking-id: "argocd_codefresh-runtime:/ConfigMap:codefresh/codefresh-cm"}
`
}

const syncedHealthy = `  sync: {status: Synced, revision: 4f2a9c1}
  health: {status: Healthy}
  resources:
  - {version: v1, kind: ConfigMap, namespace: codefresh, name: codefresh-cm, status: Synced}
  - {group: apps, version: v1, kind: Deployment, namespace: codefresh, name: cap-app-proxy, status: Synced, health: {status: Healthy}}
  operationState: {phase: Succeeded, message: successfully synced (all tasks run)}
`

func TestRuntimeApplication(t *testing.T) {
	tests := []struct {
		name string
		docs []string
		objs []runtime.Object
		app  string
		want outcome
	}{
		{"no Application", nil, nil, "", outcome{StatusSkip, []string{"no Argo CD Application manages the runtime", "helm upgrade"}}},
		{"synced and healthy", []string{runtimeApp(syncedHealthy), liveCM("0.27.6")}, nil, "",
			outcome{StatusPass, []string{"Application argocd/codefresh-runtime", "its inventory (status.resources) holds ConfigMap codefresh/codefresh-cm", "sync policy automated (prune, selfHeal)", "Synced and Healthy at revision 4f2a9c1"}}},
		{"out of sync", []string{runtimeApp(`  sync: {status: OutOfSync}
  health: {status: Healthy}
  resources:
  - {version: v1, kind: ConfigMap, namespace: codefresh, name: codefresh-cm, status: OutOfSync}
  - {group: apps, version: v1, kind: Deployment, namespace: codefresh, name: argo-rollouts, status: OutOfSync, requiresPruning: true}
`)}, nil, "", outcome{StatusFail, []string{"sync status OutOfSync: 2 resources out of sync: Deployment codefresh/argo-rollouts (requires pruning), ConfigMap codefresh/codefresh-cm", "argocd app diff argocd/codefresh-runtime"}}},
		{"degraded", []string{runtimeApp(`  sync: {status: Synced}
  health: {status: Degraded}
  resources:
  - {version: v1, kind: ConfigMap, namespace: codefresh, name: codefresh-cm, status: Synced}
  - {group: apps, version: v1, kind: Deployment, namespace: codefresh, name: cap-app-proxy, status: Synced, health: {status: Degraded, message: Deployment "cap-app-proxy" exceeded its progress deadline}}
`)}, nil, "", outcome{StatusFail, []string{"health Degraded: Deployment codefresh/cap-app-proxy Degraded (Deployment \"cap-app-proxy\" exceeded its progress deadline)", "--only runtime-workloads"}}},
		{"degraded, resource health kept out of the Application (Argo CD 3)", []string{runtimeApp(`  sync: {status: Synced}
  health: {status: Degraded, message: "Caused by autoscaling/HorizontalPodAutoscaler:codefresh/argo-gateway"}
  resourceHealthSource: appTree
  resources:
  - {version: v1, kind: ConfigMap, namespace: codefresh, name: codefresh-cm, status: Synced}
  - {group: autoscaling, version: v2, kind: HorizontalPodAutoscaler, namespace: codefresh, name: argo-gateway, status: Synced}
`)}, nil, "", outcome{StatusFail, []string{"health Degraded: HorizontalPodAutoscaler codefresh/argo-gateway Degraded", "--only runtime-workloads"}}},
		{"failed hook", []string{runtimeApp(`  sync: {status: OutOfSync}
  health: {status: Healthy}
  resources:
  - {version: v1, kind: ConfigMap, namespace: codefresh, name: codefresh-cm, status: Synced}
  operationState:
    phase: Failed
    message: one or more synchronization tasks completed unsuccessfully
    syncResult:
      resources:
      - {group: batch, kind: Job, namespace: codefresh, name: validate-values, hookType: PreSync, hookPhase: Failed, status: Synced, message: Job has reached the specified backoff limit}
  conditions:
  - {type: SyncError, message: "Failed sync attempt to 4f2a9c1: one or more synchronization tasks completed unsuccessfully"}
`)}, nil, "", outcome{StatusFail, []string{"last sync Failed: one or more synchronization tasks completed unsuccessfully", "PreSync hook Job codefresh/validate-values Failed: Job has reached the specified backoff limit", "condition SyncError", "runs as PreSync on every sync"}}},
		{"the automated sync will not try again", []string{runtimeApp(`  sync: {status: OutOfSync, revision: 5b3c}
  health: {status: Healthy}
  operationState: {phase: Failed, message: Operation terminated, operation: {sync: {revision: 4f2a}}}
  conditions:
  - {type: SyncError, message: "Failed last sync attempt to [4f2a]: Operation terminated"}
`)}, nil, "", outcome{StatusFail, []string{"last sync Failed: Operation terminated", "condition SyncError: Failed last sync attempt to [4f2a]", "does not try a failed sync again", "argocd app sync argocd/codefresh-runtime"}}},
		{"a sync running, held by its PreSync hook", []string{runtimeApp(`  sync: {status: OutOfSync}
  health: {status: Missing}
  resources:
  - {version: v1, kind: ConfigMap, namespace: codefresh, name: codefresh-cm, status: OutOfSync, health: {status: Missing}}
  operationState:
    phase: Running
    message: waiting for completion of hook batch/Job/validate-values
    startedAt: "2026-01-02T03:04:05Z"
    operation: {sync: {revision: 9e1b2c3d4e5f60718293a4b5c6d7e8f901234567}}
    syncResult:
      resources:
      - {kind: ServiceAccount, namespace: codefresh, name: validate-values-sa, hookType: PreSync, hookPhase: Running, status: Synced, message: serviceaccount/validate-values-sa created}
      - {group: batch, kind: Job, namespace: codefresh, name: validate-values, hookType: PreSync, hookPhase: Running, status: Synced}
`)}, nil, "", outcome{StatusFail, []string{"a sync is running to revision 9e1b2c3d (started 2026-01-02T03:04:05Z): waiting for completion of hook batch/Job/validate-values; PreSync hook Job codefresh/validate-values Running; PreSync hook ServiceAccount codefresh/validate-values-sa Running",
			"; sync status OutOfSync", "health Missing", "argocd app wait argocd/codefresh-runtime --operation", "argocd app terminate-op argocd/codefresh-runtime"}}},
		{"stale release record", []string{runtimeApp(syncedHealthy), liveCM("0.27.6")}, []runtime.Object{helmRelease(t, "codefresh", DefaultReleaseName, 1, rspb.StatusDeployed, "")}, "",
			outcome{StatusWarn, []string{"is Synced and Healthy", "the Helm release record is stale: release cf-gitops-runtime revision 1 says chart 0.30.0, the live objects run chart 0.27.6", "upgraded by a commit, not helm upgrade"}}},
		{"found by its tracking annotation", []string{runtimeApp(`  sync: {status: Synced}
  health: {status: Healthy}
`), liveCM("0.27.6")}, nil, "", outcome{StatusPass, []string{"ConfigMap codefresh/codefresh-cm carries its tracking annotation"}}},
		{"named and missing", []string{runtimeApp(syncedHealthy)}, nil, "argocd/other", outcome{StatusFail, []string{"Application argocd/other (named by --argocd-app) cannot be read: no such Application"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newKit(t, tt.docs...).objects(tt.objs...).inMode(ModePost).env()
			env.ArgoCDApp = tt.app
			tt.want.expect(t, runThrough(t, RuntimeApplicationCheck(), env))
		})
	}
}

// A long sync message keeps what failed and the API server's reason at its
// end, as Argo CD wrote them for the ApplicationSet CRD's client-side apply.
func TestClipMiddleKeepsTheReason(t *testing.T) {
	msg := `one or more synchronization tasks completed unsuccessfully, reason: error when applying patch: ` +
		strings.Repeat("{\"metadata\":{\"annotations\":{}}} ", 40) +
		`CustomResourceDefinition.apiextensions.k8s.io "applicationsets.argoproj.io" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes`
	got := clipMiddle(msg, 240)
	if n := len([]rune(got)); n != 240 {
		t.Errorf("%d runes, want 240: %q", n, got)
	}
	for _, want := range []string{"one or more synchronization tasks", "Too long: may not be more than 262144 bytes", " … "} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if short := "sync failed:\n  hook  failed"; clipMiddle(short, 240) != "sync failed: hook failed" {
		t.Errorf("short message: %q", clipMiddle(short, 240))
	}
}
