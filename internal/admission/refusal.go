package admission

import (
	"regexp"
	"strings"
)

// Layer is the part of the API server's admission chain (or its
// authorization) that refused a request.
type Layer string

// Layers, as the API server's messages name them.
const (
	LayerPodSecurity     Layer = "PodSecurity"
	LayerResourceQuota   Layer = "ResourceQuota"
	LayerLimitRanger     Layer = "LimitRanger"
	LayerPolicy          Layer = "ValidatingAdmissionPolicy"
	LayerWebhook         Layer = "webhook"
	LayerWebhookDown     Layer = "webhook unreachable"
	LayerServiceAccount  Layer = "ServiceAccount"
	LayerRBAC            Layer = "RBAC"
	LayerNamespace       Layer = "namespace"
	LayerOther           Layer = "admission"
	LayerNotDryRunnable  Layer = "no dry run"
	LayerKindNotServed   Layer = "kind not served"
	LayerInvalidResource Layer = "invalid"
)

// Refusal is one refusal of the API server, parsed into the layer that
// refused and the policy that decided, from the message the API server
// writes. The messages are those of:
//   - PodSecurity: https://github.com/kubernetes/kubernetes/blob/master/staging/src/k8s.io/pod-security-admission/admission/admission.go
//   - ResourceQuota: https://github.com/kubernetes/kubernetes/blob/master/staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go
//   - LimitRanger: https://github.com/kubernetes/kubernetes/blob/master/plugin/pkg/admission/limitranger/admission.go
//   - ValidatingAdmissionPolicy: https://github.com/kubernetes/kubernetes/tree/master/staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating
//   - the webhook dispatchers: https://github.com/kubernetes/kubernetes/tree/master/staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/errors
//   - the authorizer's Forbidden: https://github.com/kubernetes/kubernetes/blob/master/staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go
//   - the ServiceAccount plugin: https://github.com/kubernetes/kubernetes/blob/master/plugin/pkg/admission/serviceaccount/admission.go
//   - NamespaceLifecycle: https://github.com/kubernetes/kubernetes/blob/master/staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go
//   - Gatekeeper ("[constraint] message", https://open-policy-agent.github.io/gatekeeper/website/docs/)
//     and Kyverno ("blocked due to the following policies", https://kyverno.io/docs/).
//
// It is the one refusal type of the dry runs: the admission dry runs of
// this package and internal/apply's (Helm's patches and applies), which
// also name the object refused.
type Refusal struct {
	// Kind, Namespace and Name name the object refused, when the sender
	// knows it ("" otherwise).
	Kind, Namespace, Name string
	Layer                 Layer
	// Policy names what decided: the PodSecurity level and version
	// ("restricted:latest"), the ResourceQuota, the
	// ValidatingAdmissionPolicy and its binding, the webhook (and for
	// Gatekeeper the constraint, for Kyverno the policy and rule), the
	// ServiceAccount, the missing permission.
	Policy string
	// Detail is what the policy says is wrong (PodSecurity's fields, the
	// quota's resources, the webhook's reason).
	Detail string
	// Webhook is the webhook's name for LayerWebhook and LayerWebhookDown.
	Webhook string
	// Quota and Resources name the ResourceQuota and its resources for
	// LayerResourceQuota.
	Quota     string
	Resources []string
	// Binding is the ValidatingAdmissionPolicyBinding for LayerPolicy.
	Binding string
	// Reason is the API server's message, whole (for internal/apply, as
	// Helm prints it).
	Reason string
}

var (
	podSecurityRe   = regexp.MustCompile(`violates PodSecurity "([^"]+)": (.*)$`)
	exceededQuotaRe = regexp.MustCompile(`exceeded quota: ([^,]+), requested: (.*), used: (.*), limited: (.*)$`)
	failedQuotaRe   = regexp.MustCompile(`failed quota: ([^:]+): must specify (.*)$`)
	policyRe        = regexp.MustCompile(`ValidatingAdmissionPolicy '([^']+)' with binding '([^']+)' denied request: (.*)$`)
	webhookDenyRe   = regexp.MustCompile(`admission webhook "([^"]+)" denied the request(?::\s*(.*))?$`)
	webhookCallRe   = regexp.MustCompile(`failed calling webhook "([^"]+)": (.*)$`)
	webhookDryRe    = regexp.MustCompile(`admission webhook "([^"]+)" does not support dry run`)
	rbacRe          = regexp.MustCompile(`User "([^"]*)" cannot (\w+) resource "([^"]+)" in API group "([^"]*)"(?: in the namespace "([^"]+)")?`)
	saRe            = regexp.MustCompile(`error looking up service account ([^:]+): `)
	limitRangeRe    = regexp.MustCompile(`(?:maximum|minimum) [\w.-]+ usage per (?:Container|Pod|PersistentVolumeClaim)|must be less than or equal to [\w.-]+ limit|limit to request ratio per`)
	gatekeeperRe    = regexp.MustCompile(`^\[([^\]]+)\]\s*(.*)$`)
	kyvernoRe       = regexp.MustCompile(`(?s)blocked due to the following policies\s*([\w.-]+):\s*([\w.-]+):\s*'?(.*?)'?\s*$`)
	nsNotFoundRe    = regexp.MustCompile(`namespaces "([^"]+)" not found`)
	nsTerminatingRe = regexp.MustCompile(`because it is being terminated`)
)

// ParseRefusal reads the API server's message of a refused request.
func ParseRefusal(msg string) Refusal {
	r := Refusal{Layer: LayerOther, Reason: msg, Detail: msg}
	one := strings.Join(strings.Fields(msg), " ")
	switch {
	case rbacRe.MatchString(one):
		m := rbacRe.FindStringSubmatch(one)
		r.Layer = LayerRBAC
		what := m[3]
		if m[4] != "" {
			what += "." + m[4]
		}
		r.Policy = m[2] + " " + what
		if m[5] != "" {
			r.Policy += " in namespace " + m[5]
		}
		r.Detail = "user " + m[1] + " may not " + r.Policy
	case podSecurityRe.MatchString(one):
		m := podSecurityRe.FindStringSubmatch(one)
		r.Layer, r.Policy, r.Detail = LayerPodSecurity, m[1], m[2]
	case exceededQuotaRe.MatchString(one):
		m := exceededQuotaRe.FindStringSubmatch(one)
		r.Layer, r.Quota, r.Policy = LayerResourceQuota, m[1], m[1]
		r.Detail = "requested " + m[2] + ", used " + m[3] + ", limited to " + m[4]
		for _, kv := range strings.Split(m[2], ",") {
			if k, _, ok := strings.Cut(kv, "="); ok {
				r.Resources = append(r.Resources, strings.TrimSpace(k))
			}
		}
	case failedQuotaRe.MatchString(one):
		m := failedQuotaRe.FindStringSubmatch(one)
		r.Layer, r.Quota, r.Policy = LayerResourceQuota, m[1], m[1]
		r.Detail = "must specify " + m[2]
		for _, part := range strings.Split(m[2], ";") {
			if k, _, ok := strings.Cut(strings.TrimSpace(part), " for:"); ok {
				r.Resources = append(r.Resources, strings.TrimSpace(k))
			}
		}
	case policyRe.MatchString(one):
		m := policyRe.FindStringSubmatch(one)
		r.Layer, r.Policy, r.Binding, r.Detail = LayerPolicy, m[1], m[2], m[3]
	case webhookDryRe.MatchString(one):
		m := webhookDryRe.FindStringSubmatch(one)
		r.Layer, r.Webhook, r.Policy = LayerNotDryRunnable, m[1], m[1]
		r.Detail = "the webhook declares side effects, so the API server does not call it for a dry run: its verdict is unknown"
	case webhookCallRe.MatchString(one):
		m := webhookCallRe.FindStringSubmatch(one)
		r.Layer, r.Webhook, r.Policy, r.Detail = LayerWebhookDown, m[1], m[1], m[2]
	case webhookDenyRe.MatchString(one):
		m := webhookDenyRe.FindStringSubmatch(msg)
		if m == nil {
			m = webhookDenyRe.FindStringSubmatch(one)
		}
		r.Layer, r.Webhook, r.Policy = LayerWebhook, m[1], m[1]
		r.Detail = strings.Join(strings.Fields(m[2]), " ")
		if g := gatekeeperRe.FindStringSubmatch(strings.TrimSpace(m[2])); g != nil && strings.Contains(m[1], "gatekeeper") {
			r.Policy = "Gatekeeper constraint " + g[1] + " (webhook " + m[1] + ")"
			r.Detail = strings.TrimSpace(g[2])
		}
		if k := kyvernoRe.FindStringSubmatch(m[2]); k != nil {
			r.Policy = "Kyverno policy " + k[1] + ", rule " + k[2] + " (webhook " + m[1] + ")"
			r.Detail = strings.Join(strings.Fields(k[3]), " ")
		}
	case saRe.MatchString(one):
		m := saRe.FindStringSubmatch(one)
		r.Layer, r.Policy = LayerServiceAccount, "ServiceAccount "+m[1]
	case nsNotFoundRe.MatchString(one):
		r.Layer, r.Policy = LayerNamespace, "namespace "+nsNotFoundRe.FindStringSubmatch(one)[1]+" does not exist"
	case nsTerminatingRe.MatchString(one):
		r.Layer, r.Policy = LayerNamespace, "the namespace is being terminated"
	case limitRangeRe.MatchString(one):
		r.Layer, r.Policy = LayerLimitRanger, "LimitRange"
		if _, after, ok := strings.Cut(one, "is forbidden: "); ok {
			r.Detail = after
		}
	}
	return r
}

// Short is the refusal in a few words: "PodSecurity restricted:latest",
// "ResourceQuota compute", "ValidatingAdmissionPolicy x (binding y)",
// "webhook x".
func (r Refusal) Short() string {
	switch r.Layer {
	case LayerPodSecurity:
		return "PodSecurity " + r.Policy
	case LayerResourceQuota:
		return "ResourceQuota " + r.Quota
	case LayerPolicy:
		return "ValidatingAdmissionPolicy " + r.Policy + " (binding " + r.Binding + ")"
	case LayerWebhook:
		if strings.HasPrefix(r.Policy, "Gatekeeper") || strings.HasPrefix(r.Policy, "Kyverno") {
			return r.Policy
		}
		return "webhook " + r.Webhook
	case LayerWebhookDown:
		return "webhook " + r.Webhook + " (unreachable)"
	case LayerRBAC:
		return "RBAC: no permission to " + r.Policy
	case LayerServiceAccount, LayerNamespace:
		return r.Policy
	case LayerLimitRanger:
		return "LimitRange"
	}
	return string(r.Layer)
}
