package checks

import "testing"

// TestRuntimeWorkloads: the release's workloads in the runtime namespace,
// their pods' reasons when one is down, and the codefresh-token Secret.
func TestRuntimeWorkloads(t *testing.T) {
	post := Inputs{Post: true}
	proxy := func(available int) string {
		return controllerYAML("Deployment", "codefresh", "cap-app-proxy", "quay.io/codefresh/cap-app-proxy:1.0", nil, nil, available)
	}
	token := "apiVersion: v1\nkind: Secret\nmetadata: {namespace: codefresh, name: codefresh-token}\n"
	crashing := `apiVersion: v1
kind: Pod
metadata: {namespace: codefresh, name: cap-app-proxy-abc, labels: {app: cap-app-proxy}}
spec: {containers: [{name: c, image: x}]}
status:
  phase: Running
  containerStatuses:
  - name: c
    restartCount: 7
    state: {waiting: {reason: CrashLoopBackOff}}
    lastState: {terminated: {exitCode: 1}}
`
	tests := []struct {
		name string
		yaml []string
		want outcome
	}{
		{"all available", []string{proxy(1), token}, outcome{StatusPass, []string{"all 1 runtime workloads in namespace codefresh have their replicas available"}}},
		{"available, no codefresh-token", []string{proxy(1)}, outcome{StatusWarn, []string{"Secret codefresh-token is missing", "kubectl logs deploy/cap-app-proxy -n codefresh"}}},
		{"down, crash looping", []string{proxy(0), token, crashing}, outcome{StatusFail, []string{"1 of 1 runtime workloads not available", "Deployment/cap-app-proxy: 0/1 available", "pod cap-app-proxy-abc", "CrashLoopBackOff"}}},
		{"down, no pods", []string{proxy(0), token}, outcome{StatusFail, []string{"no pods (the controller could not create them"}}},
		{"not installed", []string{controllerYAML("Deployment", "elsewhere", "cap-app-proxy", "x", nil, nil, 1)},
			outcome{StatusFail, []string{"no Deployment or StatefulSet of release cf-gitops-runtime in namespace codefresh"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.expect(t, newKit(t, tt.yaml...).with(post).run(RuntimeWorkloads()))
		})
	}
}
