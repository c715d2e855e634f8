package checks

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestAdmissionWebhooks: a webhook matching the release's pods whose
// Service has no ready endpoint fails when it fails closed, naming what it
// refuses, and warns when it fails open; one with a ready endpoint, or one
// that matches nothing of the release, passes.
func TestAdmissionWebhooks(t *testing.T) {
	hook := func(fp, nsSelector string) string {
		return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: policy}
webhooks:
- name: policy.example.com
  failurePolicy: ` + fp + `
  sideEffects: None
  admissionReviewVersions: [v1]
  clientConfig:
    service: {namespace: policy-system, name: policy-webhook}
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ` + nsSelector + `}}
  rules:
  - operations: [CREATE]
    apiGroups: [""]
    apiVersions: [v1]
    resources: [pods]
`
	}
	slice := func(ready string) string {
		return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: policy-webhook-abc, namespace: policy-system, labels: {kubernetes.io/service-name: policy-webhook}}
addressType: IPv4
endpoints:
- addresses: [10.0.0.9]
  conditions: {ready: ` + ready + `}
`
	}
	cases := []struct {
		name   string
		docs   []string
		want   outcome
		impact Impact
	}{
		{"no webhook", nil, outcome{StatusPass, []string{"no validating or mutating webhook"}}, ""},
		{"ready endpoint", []string{hook("Fail", "codefresh"), slice("true")}, outcome{StatusPass, []string{"policy.example.com (Service policy-system/policy-webhook, 1 ready endpoint)"}}, ""},
		{"another namespace's webhook", []string{hook("Fail", "elsewhere")}, outcome{StatusPass, []string{"no webhook matches"}}, ""},
		{"no ready endpoint, fails closed", []string{hook("Fail", "codefresh"), slice("false")},
			outcome{StatusFail, []string{"validating webhook policy.example.com (policy, failurePolicy Fail)", "no ready endpoint (1 not ready)", "the pods of hook Job validate-values"}}, ImpactInstallFails},
		{"no endpoint, fails open", []string{hook("Ignore", "codefresh")}, outcome{StatusWarn, []string{"failurePolicy is Ignore", "no ready endpoint"}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := admissionKit(t, &fakeAdmission{}, tc.docs...).outcome(AdmissionWebhooks())
			tc.want.expect(t, o.Result)
			if tc.impact != "" && o.Meta.Impact != tc.impact {
				t.Errorf("impact %s, want %s", o.Meta.Impact, tc.impact)
			}
		})
	}
}

// TestWebhookRuleMatching holds the matching to the API server's rules
// (k8s.io/apiserver's webhook predicates): operations, groups, versions
// (any, with matchPolicy Equivalent), resources and subresources, scope.
func TestWebhookRuleMatching(t *testing.T) {
	ns := admissionregistrationv1.NamespacedScope
	cl := admissionregistrationv1.ClusterScope
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	roles := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	rule := func(ops []admissionregistrationv1.OperationType, groups, versions, resources []string, scope *admissionregistrationv1.ScopeType) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{APIGroups: groups, APIVersions: versions, Resources: resources, Scope: scope}}
	}
	create := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	all := []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}
	for _, c := range []struct {
		rule       admissionregistrationv1.RuleWithOperations
		req        admissionRequest
		equivalent bool
		want       bool
	}{
		{rule(create, []string{""}, []string{"v1"}, []string{"pods"}, nil), admissionRequest{Resource: pods, Operation: "CREATE", Namespace: "x"}, false, true},
		{rule(create, []string{""}, []string{"v1"}, []string{"pods"}, nil), admissionRequest{Resource: pods, Operation: "UPDATE", Namespace: "x"}, false, false},
		{rule(all, []string{"*"}, []string{"*"}, []string{"*"}, nil), admissionRequest{Resource: roles, Operation: "CREATE"}, false, true},
		{rule(all, []string{"*"}, []string{"*"}, []string{"*/status"}, nil), admissionRequest{Resource: roles, Operation: "CREATE"}, false, false},
		{rule(create, []string{""}, []string{"v1beta1"}, []string{"pods"}, nil), admissionRequest{Resource: pods, Operation: "CREATE", Namespace: "x"}, false, false},
		{rule(create, []string{""}, []string{"v1beta1"}, []string{"pods"}, nil), admissionRequest{Resource: pods, Operation: "CREATE", Namespace: "x"}, true, true},
		{rule(create, []string{"*"}, []string{"*"}, []string{"*"}, &ns), admissionRequest{Resource: roles, Operation: "CREATE"}, false, false},
		{rule(create, []string{"*"}, []string{"*"}, []string{"*"}, &cl), admissionRequest{Resource: roles, Operation: "CREATE"}, false, true},
		{rule(create, []string{"*"}, []string{"*"}, []string{"*"}, &cl), admissionRequest{Resource: namespacesGVR, Operation: "CREATE", Namespace: "x"}, false, true},
	} {
		if got := ruleMatches(c.rule, c.req, c.equivalent); got != c.want {
			t.Errorf("rule %+v on %s %s: %v, want %v", c.rule, c.req.Operation, c.req.Resource, got, c.want)
		}
	}
	if !strings.Contains(AdmissionWebhooks().Title, "webhook") {
		t.Error("title")
	}
}
