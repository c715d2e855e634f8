package admission

import (
	"strings"
	"testing"
)

// TestParseRefusal reads the API server's messages of each layer.
func TestParseRefusal(t *testing.T) {
	for msg, want := range map[string]string{
		`pods "validate-values-x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "validate-values" must set securityContext.allowPrivilegeEscalation=false)`:                     "PodSecurity restricted:latest",
		`pods "argo-cd-redis-secret-init-abc" is forbidden: failed quota: compute: must specify limits.cpu for: secret-init; limits.memory for: secret-init`:                                                                           "ResourceQuota compute",
		`pods "x" is forbidden: exceeded quota: compute, requested: limits.cpu=2,requests.cpu=1, used: limits.cpu=39, limited: limits.cpu=40`:                                                                                          "ResourceQuota compute",
		`admission webhook "validation.gatekeeper.sh" denied the request: [psp-pods-allowed-user-ranges] Container x is attempting to run as root`:                                                                                     "Gatekeeper constraint psp-pods-allowed-user-ranges (webhook validation.gatekeeper.sh)",
		"admission webhook \"validate.kyverno.svc-fail\" denied the request: \n\nresource Pod/codefresh/x was blocked due to the following policies \n\nrequire-run-as-nonroot:\n  run-as-non-root: 'Running as root is not allowed.'": "Kyverno policy require-run-as-nonroot, rule run-as-non-root (webhook validate.kyverno.svc-fail)",
		`Internal error occurred: failed calling webhook "policy.example": failed to call webhook: Post "https://policy.svc:443/validate": no endpoints available for service "policy"`:                                                "webhook policy.example (unreachable)",
		`pods "x" is forbidden: error looking up service account codefresh/validate-values-sa: serviceaccount "validate-values-sa" not found`:                                                                                          "ServiceAccount codefresh/validate-values-sa",
		`pods "x" is forbidden: maximum cpu usage per Container is 500m, but limit is 1`:                                                                                                                                               "LimitRange",
	} {
		if got := ParseRefusal(msg).Short(); got != want {
			t.Errorf("ParseRefusal(%q).Short() = %q, want %q", msg, got, want)
		}
	}
	r := ParseRefusal(`pods "x" is forbidden: failed quota: compute: must specify limits.cpu for: secret-init; limits.memory for: secret-init`)
	if strings.Join(r.Resources, ",") != "limits.cpu,limits.memory" {
		t.Errorf("quota resources %v", r.Resources)
	}
}

// TestParseRefusalFields: each layer's parts land in their fields, the
// message whole in Reason; an unknown message is LayerOther with the
// message as its Detail.
func TestParseRefusalFields(t *testing.T) {
	cases := []struct {
		msg  string
		want Refusal
	}{
		{`pods "x" is forbidden: violates PodSecurity "baseline:v1.30": host namespaces (hostNetwork=true)`,
			Refusal{Layer: LayerPodSecurity, Policy: "baseline:v1.30", Detail: "host namespaces (hostNetwork=true)"}},
		{`configmaps "c" is forbidden: ValidatingAdmissionPolicy 'no-cm' with binding 'no-cm-b' denied request: no`,
			Refusal{Layer: LayerPolicy, Policy: "no-cm", Binding: "no-cm-b", Detail: "no"}},
		{`configmaps "x" is forbidden: User "ci" cannot create resource "configmaps" in API group "" in the namespace "codefresh"`,
			Refusal{Layer: LayerRBAC, Policy: "create configmaps in namespace codefresh", Detail: "user ci may not create configmaps in namespace codefresh"}},
		{`clusterroles.rbac.authorization.k8s.io "x" is forbidden: User "ci" cannot create resource "clusterroles" in API group "rbac.authorization.k8s.io"`,
			Refusal{Layer: LayerRBAC, Policy: "create clusterroles.rbac.authorization.k8s.io", Detail: "user ci may not create clusterroles.rbac.authorization.k8s.io"}},
		{`admission webhook "side.example" does not support dry run`,
			Refusal{Layer: LayerNotDryRunnable, Webhook: "side.example", Policy: "side.example",
				Detail: "the webhook declares side effects, so the API server does not call it for a dry run: its verdict is unknown"}},
		{`admission webhook "deny.example" denied the request: no pods on Fridays`,
			Refusal{Layer: LayerWebhook, Webhook: "deny.example", Policy: "deny.example", Detail: "no pods on Fridays"}},
		{`pods "x" is forbidden: unable to create new content in namespace codefresh because it is being terminated`,
			Refusal{Layer: LayerNamespace, Policy: "the namespace is being terminated"}},
		{`namespaces "codefresh" not found`, Refusal{Layer: LayerNamespace, Policy: "namespace codefresh does not exist"}},
		{`something else entirely`, Refusal{Layer: LayerOther, Detail: "something else entirely"}},
	}
	for _, tc := range cases {
		got := ParseRefusal(tc.msg)
		if tc.want.Detail == "" {
			tc.want.Detail = tc.msg
		}
		tc.want.Reason = tc.msg
		if got.Layer != tc.want.Layer || got.Policy != tc.want.Policy || got.Detail != tc.want.Detail || got.Webhook != tc.want.Webhook ||
			got.Binding != tc.want.Binding || got.Reason != tc.want.Reason {
			t.Errorf("ParseRefusal(%q) =\n%+v, want\n%+v", tc.msg, got, tc.want)
		}
	}
	if s := (Refusal{Layer: LayerOther}).Short(); s != "admission" {
		t.Errorf("LayerOther's Short() = %q", s)
	}
}
