package checks

import (
	"net/http"
	"testing"
)

// TestAdmissionWebhooks: a webhook the API server calls for the release's
// pods whose Service has no ready endpoint fails when it fails closed,
// naming what it refuses and why it matches, and warns when it fails open;
// one with a ready endpoint, or one whose namespaceSelector or
// matchConditions exclude the release, passes, saying why; a
// matchCondition that cannot be evaluated is said and the webhook taken to
// match; and the dry runs are the truth: a webhook that cannot be called
// did not refuse what a dry run passed through it.
func TestAdmissionWebhooks(t *testing.T) {
	hook := webhookConfigDoc
	inRuntime := "{matchLabels: {kubernetes.io/metadata.name: codefresh}}"
	slice := endpointSliceDoc
	// down is the API server refusing the pods' dry runs as it does when
	// the webhook cannot be called.
	down := &fakeAdmission{answer: func(r dryRunRequest) (int, map[string]any, []string) {
		if podOfRequest(r) == "" {
			return 0, nil, nil
		}
		return http.StatusInternalServerError, refuse(500, "InternalError", `Internal error occurred: failed calling webhook "policy.example.com": failed to call webhook: Post "https://policy-webhook.policy-system.svc:443/validate?timeout=10s": no endpoints available for service "policy-webhook"`), nil
	}}
	cases := []struct {
		name   string
		admit  *fakeAdmission
		docs   []string
		want   outcome
		impact Impact
	}{
		{"no webhook", down, nil, outcome{StatusPass, []string{"no validating or mutating webhook"}}, ""},
		{"ready endpoint", &fakeAdmission{}, []string{hook("Fail", inRuntime, ""), slice("true")},
			outcome{StatusPass, []string{"validating webhook policy.example.com (policy, failurePolicy Fail): Service policy-system/policy-webhook, 1 ready endpoint; it judges the pods of hook Job validate-values", `rule 1 (CREATE ""/v1 pods) matches CREATE v1 pods`}}, ""},
		{"another namespace's webhook", &fakeAdmission{}, []string{hook("Fail", "{matchLabels: {kubernetes.io/metadata.name: elsewhere}}", "")},
			outcome{StatusPass, []string{"no webhook matches", "does not judge the release: its namespaceSelector (kubernetes.io/metadata.name=elsewhere) excludes namespace codefresh"}}, ""},
		{"no ready endpoint, fails closed", down, []string{hook("Fail", inRuntime, ""), slice("false")},
			outcome{StatusFail, []string{"validating webhook policy.example.com (policy, failurePolicy Fail)", "no ready endpoint (1 not ready)", "the pods of hook Job validate-values", "helm's own requests are refused"}}, ImpactInstallFails},
		{"no endpoint, fails open", &fakeAdmission{}, []string{hook("Ignore", inRuntime, "")}, outcome{StatusWarn, []string{"failurePolicy is Ignore", "no ready endpoint"}}, ""},
		{"no endpoint, matchConditions exclude the runtime's namespace", down, []string{hook("Fail", "{}", `  matchConditions:
  - {name: not-the-runtime, expression: "request.namespace != 'codefresh'"}
`)}, outcome{StatusPass, []string{"does not judge the release", `matchCondition "not-the-runtime" is false (the pods of hook Job validate-values (pre-install,pre-upgrade), the pods of Deployment gitops-operator)`}}, ""},
		{"no endpoint, matchConditions include the runtime's namespace", down, []string{hook("Fail", "{}", `  matchConditions:
  - {name: the-runtime, expression: "request.namespace == 'codefresh'"}
  - {name: controllers, expression: "request.userInfo.username.startsWith('system:serviceaccount:kube-system:')"}
`)}, outcome{StatusFail, []string{"no ready endpoint", "and its 2 matchConditions are true", "the pods of hook Job validate-values"}}, ImpactInstallFails},
		{"no endpoint, a matchCondition that cannot be evaluated", down, []string{hook("Fail", "{}", `  matchConditions:
  - {name: annotated, expression: "object.metadata.annotations['team'] == 'x'"}
`)}, outcome{StatusFail, []string{"its matchConditions could not be evaluated here", "no such key: annotations", "the API server refuses the request on such an error (failurePolicy Fail)", "taken to match"}}, ImpactInstallFails},
		{"no endpoint, but the dry runs passed through it", &fakeAdmission{}, []string{hook("Fail", inRuntime, "")},
			outcome{StatusPass, []string{"no ready endpoint", "it judges the pods of hook Job validate-values (pre-install,pre-upgrade), the pods of Deployment gitops-operator", "the dry runs of the pods of hook Job validate-values (pre-install,pre-upgrade), the pods of Deployment gitops-operator passed: it did not refuse them"}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := admissionKit(t, tc.admit, tc.docs...).outcome(AdmissionWebhooks())
			t.Log(o.Result.Message)
			tc.want.expect(t, o.Result)
			if tc.impact != "" && o.Meta.Impact != tc.impact {
				t.Errorf("impact %s, want %s", o.Meta.Impact, tc.impact)
			}
		})
	}
}

// webhookConfigDoc is a ValidatingWebhookConfiguration of pods' creates
// with failurePolicy fp, namespaceSelector nsSelector and the
// matchConditions lines conditions, served by Service
// policy-system/policy-webhook.
func webhookConfigDoc(fp, nsSelector, conditions string) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: policy}
webhooks:
- name: policy.example.com
  failurePolicy: ` + fp + `
  matchPolicy: Equivalent
  sideEffects: None
  admissionReviewVersions: [v1]
  clientConfig:
    service: {namespace: policy-system, name: policy-webhook}
  namespaceSelector: ` + nsSelector + `
  objectSelector: {}
  rules:
  - operations: [CREATE]
    apiGroups: [""]
    apiVersions: [v1]
    resources: [pods]
` + conditions
}

// endpointSliceDoc is the EndpointSlice of Service
// policy-system/policy-webhook with one endpoint, ready or not.
func endpointSliceDoc(ready string) string {
	return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: policy-webhook-abc, namespace: policy-system, labels: {kubernetes.io/service-name: policy-webhook}}
addressType: IPv4
endpoints:
- addresses: [10.0.0.9]
  conditions: {ready: ` + ready + `}
`
}
