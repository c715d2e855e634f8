package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/admission"
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

// webhookMatcher is the API server's webhook matching over what the run
// read: the namespaces' labels (the release namespace's as it will be),
// discovery, and the cluster's version; once per run.
func webhookMatcher(env *Env, p *admission.Plan) (*webhookmatch.Matcher, error) {
	return cluster.Memo(env.Cluster, "admission/webhookmatch", func() (*webhookmatch.Matcher, error) {
		api, err := env.Cluster.APIResources()
		if err != nil {
			return nil, err
		}
		opts := webhookmatch.Options{Resources: api.Resources, Namespaces: map[string]map[string]string{p.Namespace: p.NamespaceLabels}}
		for _, ns := range p.RequestNamespaces() {
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

// mutatingWebhooksFor names the mutating webhooks the API server calls
// for the create of w's pod: "mutating webhook x" or "a mutating webhook"
// when they cannot be read.
func mutatingWebhooksFor(ctx context.Context, env *Env, p *admission.Plan, w *admission.Workload, pod *corev1.Pod) string {
	all, err := env.Cluster.WebhookConfigurations()
	if err != nil {
		return "a mutating webhook"
	}
	m, err := webhookMatcher(env, p)
	if err != nil {
		return "a mutating webhook"
	}
	names := admission.MatchingHooks(ctx, m, m.Hooks(nil, all.Mutating), w, pod)
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
func webhookRequests(ctx context.Context, env *Env, p *admission.Plan) ([]admission.Request, map[string]string, error) {
	objs, err := dryRunObjects(ctx, env, p)
	if err != nil {
		return nil, nil, err
	}
	pods, err := dryRunPods(ctx, env, p)
	if err != nil {
		return nil, nil, err
	}
	failedCalls := map[string]string{}
	for _, v := range append(append([]admission.Verdict(nil), objs.Verdicts...), pods.Verdicts...) {
		if v.Refused != nil && v.Refused.Layer == admission.LayerWebhookDown {
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
	return admission.Requests(p, objs, pods, installer), failedCalls, nil
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

func (ws *webhookLines) add(ctx context.Context, env *Env, m *webhookmatch.Matcher, h *webhookmatch.Hook, reqs []admission.Request, failedCalls map[string]string) error {
	j := admission.Judge(ctx, m, h, reqs)
	head := fmt.Sprintf("%s webhook %s (%s, failurePolicy %s)", h.Kind(), h.Name, h.Config, h.FailurePolicy)
	if len(j.Matched) == 0 {
		ws.notJudging = append(ws.notJudging, head+": does not judge the release: "+whyNot(j, len(reqs)))
		return nil
	}
	state, down, err := webhookState(env, h, failedCalls)
	if err != nil {
		return err
	}
	closed := down && h.FailurePolicy == admissionregistrationv1.Fail
	line := fmt.Sprintf("%s: %s; %s", head, state, judgementText(j))
	if closed {
		// The dry runs are the truth: what one of them passed through
		// this configuration, the webhook did not refuse.
		rest, passedDry := j.WithoutPassed()
		if len(passedDry) > 0 {
			if len(rest.Matched) > 0 {
				line = fmt.Sprintf("%s: %s; %s", head, state, judgementText(rest))
			} else {
				ws.reconciled++
			}
			line += fmt.Sprintf("; the dry runs of %s passed: it did not refuse them", summarize(requestLabels(passedDry), 2))
		}
		j = rest
	}
	switch {
	case closed && len(j.Matched) > 0:
		ws.bad = append(ws.bad, line)
		kindName := "ValidatingWebhookConfiguration"
		if h.Mutating {
			kindName = "MutatingWebhookConfiguration"
		}
		ws.refs = append(ws.refs, ObjectRef{Kind: kindName, Name: h.Config})
		ws.helmMeets = ws.helmMeets || j.Helm
	case down && !closed:
		ws.ignored = append(ws.ignored, line)
	default:
		ws.fine = append(ws.fine, line)
	}
	return nil
}

// requestLabel names a request: "ConfigMap x", "the pods of Deployment
// y", "Namespace z (--create-namespace)".
func requestLabel(r admission.Request) string {
	switch {
	case r.Object != nil:
		return objectLabel(*r.Object)
	case r.Workload != nil:
		return "the pods of " + workloadLabel(*r.Workload)
	}
	return "Namespace " + r.Name + " (--create-namespace)"
}

func requestLabels(reqs []admission.Request) []string {
	labels := make([]string, len(reqs))
	for i, r := range reqs {
		labels[i] = requestLabel(r)
	}
	return labels
}

// judgementText is the matched part of a webhook's line: what it judges
// and why.
func judgementText(j admission.Judgement) string {
	s := "it judges " + summarize(requestLabels(j.Matched), 4)
	if j.Why != "" {
		s += " (" + j.Why + ")"
	}
	if j.Unsure != "" {
		s += "; " + j.Unsure + " (" + requestLabel(*j.UnsureOf) + "): taken to match"
	}
	return s
}

// whyNot says why a webhook judges none of the n requests: the exclusion
// met most often after a rule matched, else that no rule matches.
func whyNot(j admission.Judgement, n int) string {
	best := ""
	for why, reqs := range j.Excluded {
		if best == "" || len(reqs) > len(j.Excluded[best]) || len(reqs) == len(j.Excluded[best]) && why < best {
			best = why
		}
	}
	if best == "" {
		return fmt.Sprintf("no rule matches any of its %s", plural(n, "request"))
	}
	s := fmt.Sprintf("%s (%s)", best, summarize(requestLabels(j.Excluded[best]), 2))
	if other := n - j.Ruleless - len(j.Excluded[best]); other > 0 {
		s += fmt.Sprintf("; %s excluded otherwise", plural(other, "more request"))
	}
	return s
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
