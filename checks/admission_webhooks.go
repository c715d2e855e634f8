package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/webhookmatch"
)

// AdmissionWebhooks passes when every validating and mutating webhook that
// the API server would call for an object or pod the install (or upgrade)
// creates or changes has somewhere to be called: its Service has a ready
// endpoint (EndpointSlices), and the dry runs did not fail to call it (a
// webhook configured by URL is judged by those). A webhook the API server
// cannot call refuses whatever it matches when its failurePolicy is Fail:
// fail, naming the webhook and the objects; with Ignore it is skipped:
// warn (docs/checks/admission-webhooks.md). The matching is the API
// server's own code (internal/webhookmatch over k8s.io/apiserver's webhook
// plugin: rules, scope, matchPolicy, namespaceSelector, objectSelector and
// the matchConditions, evaluated with its CEL matcher), and the message
// says for each webhook why it matches or not. A matchCondition that
// cannot be evaluated here is said, and the webhook taken to match. The
// dry runs are the truth: a webhook that cannot be called does not refuse
// what a dry run passed through.
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

// admissionRequest is one request of the install as a webhook sees it.
type admissionRequest struct {
	webhookmatch.Request
	Label string
	// Helm says whether helm itself sends it (an object; a hook Job's pod
	// counts too: helm waits for it); a runtime pod's is its controller's.
	Helm bool
	// Verdict is what the dry run of this request met (nil when none was
	// sent here: an upgrade's updates are upgrade-apply's).
	Verdict *verdict
}

// passed says whether the request's dry run was sent and admitted.
func (r admissionRequest) passed() bool {
	return r.Verdict != nil && r.Verdict.NotJudged == "" && r.Verdict.Refused == nil
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// webhookMatcher is the API server's webhook matching over what the run
// read: the namespaces' labels (the release namespace's as it will be),
// discovery, and the cluster's version; once per run.
func webhookMatcher(env *Env, p *admissionPlan) (*webhookmatch.Matcher, error) {
	return cluster.Memo(env.Cluster, "admission/webhookmatch", func() (*webhookmatch.Matcher, error) {
		api, err := env.Cluster.APIResources()
		if err != nil {
			return nil, err
		}
		opts := webhookmatch.Options{Resources: api.Resources, Namespaces: map[string]map[string]string{p.Namespace: p.NamespaceLabels}}
		var namespaces []string
		for _, o := range append(append([]plannedObject(nil), p.Objects...), p.Changed...) {
			namespaces = append(namespaces, namespaceIf(o))
		}
		for _, w := range p.Workloads {
			namespaces = append(namespaces, w.Namespace)
		}
		for _, ns := range namespaces {
			if _, ok := opts.Namespaces[ns]; ok || ns == "" {
				continue
			}
			if live, err := env.Cluster.Namespace(ns); err == nil && live.Exists {
				opts.Namespaces[ns] = live.Labels
			}
		}
		if v, err := env.Cluster.ServerVersion(); err == nil {
			opts.ServerVersion = v.GitVersion
		}
		return webhookmatch.New(opts)
	})
}

// controllerUser is who creates a workload's pods: its controller, as
// kube-controller-manager runs it with --use-service-account-credentials
// (kubeadm, EKS, GKE, AKS): the controller's ServiceAccount in kube-system.
func controllerUser(kind string) user.Info {
	name := map[string]string{"Job": "job-controller", "StatefulSet": "statefulset-controller", "DaemonSet": "daemon-set-controller"}[kind]
	if name == "" {
		name = "replicaset-controller"
	}
	return &user.DefaultInfo{Name: "system:serviceaccount:kube-system:" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}}
}

// admissionRequests are the plan's requests as the webhooks see them:
// each created object, the release namespace when helm creates it, each
// workload's pod, and (upgrade) each changed object's update; helm's are
// sent as installer (nil: unknown), the pods as their controllers.
func admissionRequests(p *admissionPlan, objs *objectRuns, pods *podRuns, installer user.Info) []admissionRequest {
	var out []admissionRequest
	for k, list := range [][]plannedObject{p.Objects, p.Changed} {
		op := admission.Create
		if k == 1 {
			op = admission.Update
		}
		for i, o := range list {
			if !o.Served {
				continue
			}
			r := admissionRequest{Request: webhookmatch.Request{Resource: o.Resource, Kind: o.U.GroupVersionKind(), Operation: op, Namespace: namespaceIf(o), Name: o.Obj.Name,
				Object: o.U, User: installer}, Label: o.label(), Helm: true}
			if k == 0 && objs != nil {
				r.Verdict = &objs.verdicts[i]
			}
			out = append(out, r)
		}
	}
	if !p.NamespaceExists {
		nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": p.Namespace}}}
		nsObj.SetLabels(p.NamespaceLabels)
		r := admissionRequest{Request: webhookmatch.Request{Resource: namespacesGVR, Kind: nsObj.GroupVersionKind(), Operation: admission.Create, Namespace: p.Namespace, Name: p.Namespace,
			Object: nsObj, User: installer}, Label: "Namespace " + p.Namespace + " (--create-namespace)", Helm: true}
		if objs != nil {
			r.Verdict = objs.namespace
		}
		out = append(out, r)
	}
	for i, w := range p.Workloads {
		var pod *corev1.Pod
		if pods != nil {
			pod = pods.pods[i]
		} else {
			pod, _ = podOf(w, p)
		}
		r := podAdmissionRequest(w, pod)
		if pods != nil {
			r.Verdict = &pods.verdicts[i]
		}
		out = append(out, r)
	}
	return out
}

// podAdmissionRequest is the create of a workload's pod by its controller.
func podAdmissionRequest(w plannedWorkload, pod *corev1.Pod) admissionRequest {
	return admissionRequest{Request: webhookmatch.Request{Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: corev1.SchemeGroupVersion.WithKind("Pod"),
		Operation: admission.Create, Namespace: w.Namespace, Object: pod, User: controllerUser(w.Spec.Kind)}, Label: "the pods of " + w.label(), Helm: w.isHook()}
}

// mutatingWebhooksFor names the mutating webhooks the API server calls
// for the create of w's pod: "mutating webhook x" or "a mutating webhook"
// when they cannot be read.
func mutatingWebhooksFor(ctx context.Context, env *Env, p *admissionPlan, w plannedWorkload, pod *corev1.Pod) string {
	all, err := env.Cluster.WebhookConfigurations()
	if err != nil {
		return "a mutating webhook"
	}
	m, err := webhookMatcher(env, p)
	if err != nil {
		return "a mutating webhook"
	}
	r := podAdmissionRequest(w, pod)
	var names []string
	for _, h := range m.Hooks(nil, all.Mutating) {
		if m.Match(ctx, h, r.Request).Matches {
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
	if len(all.Validating)+len(all.Mutating) == 0 {
		return Pass("no validating or mutating webhook is configured"), nil
	}
	reqs, failedCalls, err := webhookRequests(ctx, env, p)
	if err != nil {
		return Result{}, err
	}
	m, err := webhookMatcher(env, p)
	if err != nil {
		return Result{}, err
	}
	hooks := m.Hooks(all.Validating, all.Mutating)
	var ws webhookLines
	for _, h := range hooks {
		if err := ws.add(ctx, env, m, h, reqs, failedCalls); err != nil {
			return Result{}, err
		}
	}
	sort.Strings(ws.notJudging)
	rest := ""
	if lines := append(append([]string(nil), ws.fine...), ws.notJudging...); len(lines) > 0 {
		rest = "\n" + strings.Join(first(lines, 8), "\n")
		if len(lines) > 8 {
			rest += fmt.Sprintf("\nand %d more webhooks", len(lines)-8)
		}
	}
	switch {
	case len(ws.bad) > 0:
		effect := ImpactRuntimeBreaks
		tail := "the workloads' controllers cannot create their pods; helm itself succeeds"
		if ws.helmMeets {
			effect, tail = helmFails(env), "helm's own requests are refused"
		}
		return Fail("%s cannot be called and fail closed: %s:\n%s%s", plural(len(ws.bad), "webhook"), tail, strings.Join(ws.bad, "\n"), rest).
			WithHint("bring the webhook's Service endpoints back (kubectl get endpointslices -n <namespace> -l kubernetes.io/service-name=<service>), or delete its configuration if its controller was removed; failurePolicy: Ignore would let the requests through unjudged").
			WithObjects(ws.refs...).WithEffect(effect), nil
	case len(ws.ignored) > 0:
		return Warn("%s cannot be called; their failurePolicy is Ignore, so the API server admits what they judge without them:\n%s%s", plural(len(ws.ignored), "webhook"), strings.Join(ws.ignored, "\n"), rest).
			WithHint("the policies these webhooks enforce are not applied to the release while they are down"), nil
	case len(ws.fine) == 0:
		return Pass("no webhook matches the release's objects or pods (%d configured)%s", len(hooks), rest), nil
	case ws.reconciled > 0:
		return Pass("%s judging the release can be called or passed its dry runs%s", plural(len(ws.fine), "webhook"), rest), nil
	}
	return Pass("%s judging the release can be called%s", plural(len(ws.fine), "webhook"), rest), nil
}

// webhookRequests are the release's requests as the webhooks see them,
// each with its dry run's verdict, and the webhooks the dry runs failed to
// call (name: the API server's words).
func webhookRequests(ctx context.Context, env *Env, p *admissionPlan) ([]admissionRequest, map[string]string, error) {
	objs, err := dryRunObjects(ctx, env, p)
	if err != nil {
		return nil, nil, err
	}
	pods, err := dryRunPods(ctx, env, p)
	if err != nil {
		return nil, nil, err
	}
	failedCalls := map[string]string{}
	for _, v := range append(append([]verdict(nil), objs.verdicts...), pods.verdicts...) {
		if v.Refused != nil && v.Refused.Layer == LayerWebhookDown {
			failedCalls[v.Refused.Webhook] = v.Refused.Detail
		}
	}
	e, err := dryRunEngine(ctx, env)
	if err != nil {
		return nil, nil, err
	}
	var installer user.Info
	if who := e.Identity(ctx); who.User != "" {
		installer = &user.DefaultInfo{Name: who.User, Groups: who.Groups}
	}
	return admissionRequests(p, objs, pods, installer), failedCalls, nil
}

// webhookLines are the check's lines, one per webhook, by outcome.
type webhookLines struct {
	bad, ignored, fine, notJudging []string
	refs                           []ObjectRef
	// helmMeets is whether a webhook that refuses judges a request of
	// Helm's; reconciled counts the webhooks that cannot be called whose
	// every match a dry run passed.
	helmMeets  bool
	reconciled int
}

func (ws *webhookLines) add(ctx context.Context, env *Env, m *webhookmatch.Matcher, h *webhookmatch.Hook, reqs []admissionRequest, failedCalls map[string]string) error {
	j := judge(ctx, m, h, reqs)
	head := fmt.Sprintf("%s webhook %s (%s, failurePolicy %s)", h.Kind(), h.Name, h.Config, h.FailurePolicy)
	if len(j.matched) == 0 {
		ws.notJudging = append(ws.notJudging, head+": does not judge the release: "+j.whyNot(len(reqs)))
		return nil
	}
	state, down, err := webhookState(env, h, failedCalls)
	if err != nil {
		return err
	}
	closed := down && h.FailurePolicy == admissionregistrationv1.Fail
	line := fmt.Sprintf("%s: %s; %s", head, state, j.text())
	if closed {
		// The dry runs are the truth: what one of them passed through
		// this configuration, the webhook did not refuse.
		rest, passedDry := j.withoutPassed()
		if len(passedDry) > 0 {
			if len(rest.matched) > 0 {
				line = fmt.Sprintf("%s: %s; %s", head, state, rest.text())
			} else {
				ws.reconciled++
			}
			line += fmt.Sprintf("; the dry runs of %s passed: it did not refuse them", summarize(passedDry, 2))
		}
		j = rest
	}
	switch {
	case closed && len(j.matched) > 0:
		ws.bad = append(ws.bad, line)
		kindName := "ValidatingWebhookConfiguration"
		if h.Mutating {
			kindName = "MutatingWebhookConfiguration"
		}
		ws.refs = append(ws.refs, ObjectRef{Kind: kindName, Name: h.Config})
		ws.helmMeets = ws.helmMeets || j.helm
	case down && !closed:
		ws.ignored = append(ws.ignored, line)
	default:
		ws.fine = append(ws.fine, line)
	}
	return nil
}

// judgement is what one webhook judges of the release's requests.
type judgement struct {
	matched []admissionRequest
	// why is why the first matched request matches; unsure the first
	// reason one was taken to match without the API server's certainty.
	why, unsure string
	helm        bool
	// excluded counts the requests a rule matched but a selector or a
	// matchCondition excluded, by reason; ruleless those no rule matched.
	excluded map[string][]string
	ruleless int
}

func judge(ctx context.Context, m *webhookmatch.Matcher, h *webhookmatch.Hook, reqs []admissionRequest) judgement {
	j := judgement{excluded: map[string][]string{}}
	for _, r := range reqs {
		d := m.Match(ctx, h, r.Request)
		switch {
		case d.Matches:
			j.matched = append(j.matched, r)
			j.helm = j.helm || r.Helm
			if j.why == "" {
				j.why = d.Why
			}
			if j.unsure == "" && d.Unsure != "" {
				j.unsure = d.Unsure + " (" + r.Label + "): taken to match"
			}
		case strings.HasPrefix(d.Why, "no rule matches"), strings.HasPrefix(d.Why, "the API server sends no"):
			j.ruleless++
		default:
			j.excluded[d.Why] = append(j.excluded[d.Why], r.Label)
		}
	}
	return j
}

// text is the matched part of a webhook's line: what it judges and why.
func (j judgement) text() string {
	labels := make([]string, len(j.matched))
	for i, r := range j.matched {
		labels[i] = r.Label
	}
	s := "it judges " + summarize(labels, 4)
	if j.why != "" {
		s += " (" + j.why + ")"
	}
	if j.unsure != "" {
		s += "; " + j.unsure
	}
	return s
}

// whyNot says why a webhook judges none of the n requests: the exclusion
// met most often after a rule matched, else that no rule matches.
func (j judgement) whyNot(n int) string {
	best := ""
	for why, labels := range j.excluded {
		if best == "" || len(labels) > len(j.excluded[best]) || len(labels) == len(j.excluded[best]) && why < best {
			best = why
		}
	}
	if best == "" {
		return fmt.Sprintf("no rule matches any of its %s", plural(n, "request"))
	}
	s := fmt.Sprintf("%s (%s)", best, summarize(j.excluded[best], 2))
	if other := n - j.ruleless - len(j.excluded[best]); other > 0 {
		s += fmt.Sprintf("; %s excluded otherwise", plural(other, "more request"))
	}
	return s
}

// withoutPassed removes the requests whose dry run passed and returns
// their labels.
func (j judgement) withoutPassed() (judgement, []string) {
	var kept []admissionRequest
	var passed []string
	j.helm = false
	for _, r := range j.matched {
		if r.passed() {
			passed = append(passed, r.Label)
			continue
		}
		kept = append(kept, r)
		j.helm = j.helm || r.Helm
	}
	j.matched = kept
	return j, passed
}

// webhookState describes whether the API server can call h: its Service's
// ready endpoints, or what the dry runs met. down is true when it cannot.
func webhookState(env *Env, h *webhookmatch.Hook, failedCalls map[string]string) (string, bool, error) {
	var parts []string
	down := false
	if s := h.ClientConfig.Service; s != nil {
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
	} else if h.ClientConfig.Service == nil && h.ClientConfig.URL != nil {
		parts = append(parts, "URL "+*h.ClientConfig.URL+" answered the dry runs")
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
