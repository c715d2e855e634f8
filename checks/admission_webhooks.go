package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// AdmissionWebhooks passes when every validating and mutating webhook that
// matches an object or pod the install (or upgrade) creates or changes has
// somewhere to be called: its Service has a ready endpoint (EndpointSlices),
// and the dry runs did not fail to call it (a webhook configured by URL is
// judged by those). A webhook the API server cannot call refuses whatever
// it matches when its failurePolicy is Fail: fail, naming the webhook and
// the objects; with Ignore it is skipped: warn (docs/checks/
// admission-webhooks.md). The matching is the API server's: rules
// (operations, API groups and versions, resources, scope), namespaceSelector
// and objectSelector; matchConditions (CEL) are not evaluated, so a webhook
// with them is taken to match.
func AdmissionWebhooks() Check {
	return Check{
		Meta: Meta{
			ID:         "admission-webhooks",
			Impact:     ImpactInstallFails,
			ReadsChart: true,
			Category:   CategoryAdmission,
			Modes:      ModePre | ModeUpgrade,
			Title:      "Every admission webhook that judges the release's objects and pods can be called",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
		},
		Run: runAdmissionWebhooks,
	}
}

// webhook is one webhook of a configuration, as the matching reads it.
type webhook struct {
	Config, Name  string
	Mutating      bool
	FailurePolicy admissionregistrationv1.FailurePolicyType
	Client        admissionregistrationv1.WebhookClientConfig
	Rules         []admissionregistrationv1.RuleWithOperations
	MatchPolicy   admissionregistrationv1.MatchPolicyType
	NamespaceSel  labels.Selector
	ObjectSel     labels.Selector
	Conditions    int
}

// admissionRequest is one request of the install as a webhook sees it.
type admissionRequest struct {
	Resource  schema.GroupVersionResource
	Operation admissionregistrationv1.OperationType
	// Namespace is the object's ("" for a cluster-scoped one; a
	// Namespace's own name for a Namespace).
	Namespace       string
	Labels          map[string]string
	NamespaceLabels map[string]string
	Label           string
	// Helm says whether helm itself sends it (an object; a hook Job's pod
	// counts too: helm waits for it); a runtime pod's is its controller's.
	Helm bool
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

func webhooksOf(w *cluster.Webhooks) []webhook {
	var out []webhook
	sel := func(s *metav1.LabelSelector) labels.Selector {
		if s == nil {
			return labels.Everything()
		}
		l, err := metav1.LabelSelectorAsSelector(s)
		if err != nil {
			return labels.Nothing()
		}
		return l
	}
	fp := func(p *admissionregistrationv1.FailurePolicyType) admissionregistrationv1.FailurePolicyType {
		if p == nil {
			return admissionregistrationv1.Fail
		}
		return *p
	}
	mp := func(p *admissionregistrationv1.MatchPolicyType) admissionregistrationv1.MatchPolicyType {
		if p == nil {
			return admissionregistrationv1.Equivalent
		}
		return *p
	}
	for _, c := range w.Validating {
		for _, h := range c.Webhooks {
			out = append(out, webhook{Config: c.Name, Name: h.Name, FailurePolicy: fp(h.FailurePolicy), Client: h.ClientConfig, Rules: h.Rules,
				MatchPolicy: mp(h.MatchPolicy), NamespaceSel: sel(h.NamespaceSelector), ObjectSel: sel(h.ObjectSelector), Conditions: len(h.MatchConditions)})
		}
	}
	for _, c := range w.Mutating {
		for _, h := range c.Webhooks {
			out = append(out, webhook{Config: c.Name, Name: h.Name, Mutating: true, FailurePolicy: fp(h.FailurePolicy), Client: h.ClientConfig, Rules: h.Rules,
				MatchPolicy: mp(h.MatchPolicy), NamespaceSel: sel(h.NamespaceSelector), ObjectSel: sel(h.ObjectSelector), Conditions: len(h.MatchConditions)})
		}
	}
	return out
}

// matches is the API server's decision to call h for r
// (k8s.io/apiserver webhook predicates: rules, then namespaceSelector,
// then objectSelector). With matchPolicy Equivalent a rule of another
// version of the same group and resource matches too.
func (h webhook) matches(r admissionRequest) bool {
	ruleMatch := false
	for _, rule := range h.Rules {
		if ruleMatches(rule, r, h.MatchPolicy == admissionregistrationv1.Equivalent) {
			ruleMatch = true
			break
		}
	}
	if !ruleMatch {
		return false
	}
	if r.Namespace != "" || r.Resource == namespacesGVR {
		nsLabels := r.NamespaceLabels
		if r.Resource == namespacesGVR {
			nsLabels = r.Labels
		}
		if !h.NamespaceSel.Matches(labels.Set(nsLabels)) {
			return false
		}
	}
	return h.ObjectSel.Matches(labels.Set(r.Labels))
}

func ruleMatches(rule admissionregistrationv1.RuleWithOperations, r admissionRequest, equivalent bool) bool {
	in := func(items []string, s string) bool {
		for _, i := range items {
			if i == "*" || i == s {
				return true
			}
		}
		return false
	}
	opOK := false
	for _, op := range rule.Operations {
		opOK = opOK || op == admissionregistrationv1.OperationAll || op == r.Operation
	}
	if !opOK || !in(rule.APIGroups, r.Resource.Group) {
		return false
	}
	if !in(rule.APIVersions, r.Resource.Version) && !equivalent {
		return false
	}
	resOK := false
	for _, res := range rule.Resources {
		name, sub, _ := strings.Cut(res, "/")
		resOK = resOK || (name == "*" || name == r.Resource.Resource) && (sub == "*" || sub == "")
	}
	if !resOK {
		return false
	}
	if rule.Scope != nil && *rule.Scope != admissionregistrationv1.AllScopes {
		cluster := r.Namespace == "" || r.Resource == namespacesGVR
		if (*rule.Scope == admissionregistrationv1.ClusterScope) != cluster {
			return false
		}
	}
	return true
}

// admissionRequests are the plan's requests as the webhooks see them:
// each created object, the release namespace when helm creates it, each
// workload's pod, and (upgrade) each changed object's update.
func admissionRequests(p *admissionPlan, pods []*podRequest) []admissionRequest {
	var out []admissionRequest
	for k, list := range [][]plannedObject{p.Objects, p.Changed} {
		op := admissionregistrationv1.Create
		if k == 1 {
			op = admissionregistrationv1.Update
		}
		for _, o := range list {
			if !o.Served {
				continue
			}
			out = append(out, admissionRequest{Resource: o.Resource, Operation: op, Namespace: namespaceIf(o), Labels: o.U.GetLabels(),
				NamespaceLabels: p.NamespaceLabels, Label: o.label(), Helm: true})
		}
	}
	if !p.NamespaceExists {
		out = append(out, admissionRequest{Resource: namespacesGVR, Operation: admissionregistrationv1.Create, Namespace: p.Namespace,
			Labels: p.NamespaceLabels, Label: "Namespace " + p.Namespace + " (--create-namespace)", Helm: true})
	}
	for _, pr := range pods {
		out = append(out, admissionRequest{Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Operation: admissionregistrationv1.Create,
			Namespace: pr.Namespace, Labels: pr.Labels, NamespaceLabels: p.NamespaceLabels, Label: "the pods of " + pr.Label, Helm: pr.Hook})
	}
	return out
}

// podRequest is a workload's pod as admissionRequests reads it.
type podRequest struct {
	Namespace, Label string
	Labels           map[string]string
	Hook             bool
}

func podRequests(p *admissionPlan) []*podRequest {
	var out []*podRequest
	for _, w := range p.Workloads {
		pod, _ := podOf(w, p)
		out = append(out, &podRequest{Namespace: w.Namespace, Label: w.label(), Labels: pod.Labels, Hook: w.isHook()})
	}
	return out
}

// mutatingWebhooksFor names the mutating webhooks that match a create of
// resource in namespace ns (labels nsLabels): "mutating webhook x" or "a
// mutating webhook" when they cannot be read.
func mutatingWebhooksFor(env *Env, resource, ns string, nsLabels map[string]string) string {
	w, err := env.Cluster.WebhookConfigurations()
	if err != nil {
		return "a mutating webhook"
	}
	r := admissionRequest{Resource: schema.GroupVersionResource{Version: "v1", Resource: resource}, Operation: admissionregistrationv1.Create, Namespace: ns, NamespaceLabels: nsLabels}
	var names []string
	for _, h := range webhooksOf(w) {
		if h.Mutating && h.matches(r) {
			names = append(names, h.Name)
		}
	}
	if len(names) == 0 {
		return "a mutating webhook"
	}
	return "mutating webhook " + strings.Join(names, ", ")
}

func runAdmissionWebhooks(ctx context.Context, env *Env) (Result, error) {
	p, skip, err := admissionSetup(ctx, env)
	if skip != nil || err != nil {
		return derefResult(skip), err
	}
	all, err := env.Cluster.WebhookConfigurations()
	if err != nil {
		return Result{}, err
	}
	hooks := webhooksOf(all)
	if len(hooks) == 0 {
		return Pass("no validating or mutating webhook is configured"), nil
	}
	// What the dry runs met: a webhook the API server failed to call.
	failedCalls := map[string]string{}
	objs, err := dryRunObjects(ctx, env, p)
	if err != nil {
		return Result{}, err
	}
	pods, err := dryRunPods(ctx, env, p)
	if err != nil {
		return Result{}, err
	}
	for _, v := range append(append([]verdict(nil), objs.verdicts...), pods.verdicts...) {
		if v.Refused != nil && v.Refused.Layer == LayerWebhookDown {
			failedCalls[v.Refused.Webhook] = v.Refused.Detail
		}
	}
	reqs := admissionRequests(p, podRequests(p))
	var bad, ignored, fine []string
	var refs []ObjectRef
	helmMeets := false
	conditions := 0
	for _, h := range hooks {
		var matched []string
		helm := false
		for _, r := range reqs {
			if h.matches(r) {
				matched = append(matched, r.Label)
				helm = helm || r.Helm
			}
		}
		if len(matched) == 0 {
			continue
		}
		if h.Conditions > 0 {
			conditions++
		}
		state, down, err := webhookState(env, h, failedCalls)
		if err != nil {
			return Result{}, err
		}
		kind := "validating"
		if h.Mutating {
			kind = "mutating"
		}
		line := fmt.Sprintf("%s webhook %s (%s, failurePolicy %s): %s; it judges %s", kind, h.Name, h.Config, h.FailurePolicy, state, summarize(matched, 4))
		switch {
		case down && h.FailurePolicy == admissionregistrationv1.Fail:
			bad = append(bad, line)
			kindName := "ValidatingWebhookConfiguration"
			if h.Mutating {
				kindName = "MutatingWebhookConfiguration"
			}
			refs = append(refs, ObjectRef{Kind: kindName, Name: h.Config})
			helmMeets = helmMeets || helm
		case down:
			ignored = append(ignored, line)
		default:
			fine = append(fine, fmt.Sprintf("%s (%s)", h.Name, state))
		}
	}
	note := ""
	if conditions > 0 {
		note = fmt.Sprintf("\n%s with matchConditions (CEL, not evaluated here) taken to match", plural(conditions, "webhook"))
	}
	switch {
	case len(bad) > 0:
		effect := ImpactRuntimeBreaks
		tail := "the workloads' controllers cannot create their pods; helm itself succeeds"
		if helmMeets {
			effect, tail = helmFails(env), "helm's own requests are refused"
		}
		return Fail("%s cannot be called and fail closed: %s:\n%s%s", plural(len(bad), "webhook"), tail, strings.Join(bad, "\n"), note).
			WithHint("bring the webhook's Service endpoints back (kubectl get endpointslices -n <namespace> -l kubernetes.io/service-name=<service>), or delete its configuration if its controller was removed; failurePolicy: Ignore would let the requests through unjudged").
			WithObjects(refs...).WithEffect(effect), nil
	case len(ignored) > 0:
		return Warn("%s cannot be called; their failurePolicy is Ignore, so the API server admits what they judge without them:\n%s%s", plural(len(ignored), "webhook"), strings.Join(ignored, "\n"), note).
			WithHint("the policies these webhooks enforce are not applied to the release while they are down"), nil
	case len(fine) == 0:
		return Pass("no webhook matches the release's objects or pods (%d configured)%s", len(hooks), note), nil
	}
	sort.Strings(fine)
	return Pass("%s judging the release can be called: %s%s", plural(len(fine), "webhook"), strings.Join(first(fine, 6), ", "), note), nil
}

// webhookState describes whether the API server can call h: its Service's
// ready endpoints, or what the dry runs met. down is true when it cannot.
func webhookState(env *Env, h webhook, failedCalls map[string]string) (string, bool, error) {
	var parts []string
	down := false
	if s := h.Client.Service; s != nil {
		ready, notReady, err := env.Cluster.ServiceEndpoints(s.Namespace, s.Name)
		switch {
		case cluster.IsForbidden(err):
			parts = append(parts, fmt.Sprintf("Service %s/%s (its endpoints could not be read)", s.Namespace, s.Name))
		case err != nil:
			return "", false, err
		case ready == 0:
			parts = append(parts, fmt.Sprintf("Service %s/%s has no ready endpoint (%d not ready)", s.Namespace, s.Name, notReady))
			down = true
		default:
			parts = append(parts, fmt.Sprintf("Service %s/%s, %s", s.Namespace, s.Name, plural(ready, "ready endpoint")))
		}
	}
	if detail, ok := failedCalls[h.Name]; ok {
		parts = append(parts, "the dry runs failed to call it: "+detail)
		down = true
	} else if h.Client.Service == nil && h.Client.URL != nil {
		parts = append(parts, "URL "+*h.Client.URL+" answered the dry runs")
	}
	if len(parts) == 0 {
		return "no client configuration", true, nil
	}
	return strings.Join(parts, "; "), down, nil
}

// summarize lists up to n items and counts the rest.
func summarize(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
