// Package webhookmatch decides which admission webhooks the API server
// sends a request to, with the API server's own code: the webhook
// admission plugin of k8s.io/apiserver (generic.Webhook.ShouldCallHook:
// namespaceSelector, objectSelector, rules, matchPolicy Equivalent, then
// the matchConditions, compiled and evaluated by its CEL matcher), and says
// why a webhook matches or not.
//
// What it is given in place of a running API server: the labels of the
// namespaces the requests go to (the namespace predicate's lister), the
// cluster's discovery (the equivalent resources of matchPolicy:
// Equivalent), the cluster's version (the CEL environment), and for each
// request its object and the user that sends it. It has no authorizer: a
// matchCondition that calls `authorizer` cannot be evaluated here, and is
// reported as such.
//
// Sources: https://github.com/kubernetes/kubernetes/blob/master/staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/generic/webhook.go
// (ShouldCallHook), .../webhook/predicates/{rules,namespace,object},
// .../webhook/matchconditions/matcher.go, and
// https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#matching-requests-matchconditions
package webhookmatch

import (
	"context"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/admission"
	celplugin "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/generic"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/namespace"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/object"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/component-base/compatibility"
)

// Options are what the matching reads of the cluster.
type Options struct {
	// Namespaces are the labels of the namespaces the requests go to, by
	// name (a namespace not given is one whose labels are unknown).
	Namespaces map[string]map[string]string
	// Resources is the cluster's discovery: every served version of a
	// group and resource is equivalent to the others (matchPolicy
	// Equivalent).
	Resources []*metav1.APIResourceList
	// ServerVersion is the cluster's version ("v1.30.2"); "" for this
	// library's default.
	ServerVersion string
}

// Matcher decides for each webhook and request.
type Matcher struct {
	plugin   *generic.Webhook
	ns       *namespace.Matcher
	objects  admission.ObjectInterfaces
	compiler celplugin.ConditionCompiler
	// CELVersion is the compatibility version of the CEL environment the
	// matchConditions are compiled in.
	CELVersion string
}

// New builds the API server's webhook admission plugin over opts.
func New(opts Options) (*Matcher, error) {
	plugin, err := generic.NewWebhook(admission.NewHandler(admission.Create, admission.Update, admission.Delete, admission.Connect), nil,
		func(informers.SharedInformerFactory, sets.Set[schema.GroupResource]) generic.Source { return nil },
		func(*webhookutil.ClientManager) generic.Dispatcher { return nil })
	if err != nil {
		return nil, err
	}
	// The namespace predicate reads a lister, then the API server when
	// the lister has no such namespace: here the lister holds the
	// namespaces given, and the client answers NotFound.
	client := namespacesNotFound{}
	factory := informers.NewSharedInformerFactory(client, 0)
	nsInformer := factory.Core().V1().Namespaces()
	for name, labels := range opts.Namespaces {
		if err := nsInformer.Informer().GetIndexer().Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}); err != nil {
			return nil, err
		}
	}
	plugin.SetExternalKubeClientSet(client)
	plugin.SetExternalKubeInformerFactory(factory)

	registry := runtime.NewEquivalentResourceRegistry()
	for _, l := range opts.Resources {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			name, sub, _ := strings.Cut(r.Name, "/")
			kind := gv.WithKind(r.Kind)
			if r.Group != "" || r.Version != "" {
				kind = schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
			}
			registry.RegisterKindFor(gv.WithResource(name), sub, kind)
		}
	}
	// No scheme: an object is never converted here (see versioned).
	scheme := runtime.NewScheme()
	objects := &admission.RuntimeObjectInterfaces{ObjectCreater: scheme, ObjectTyper: scheme, ObjectDefaulter: scheme, ObjectConvertor: scheme, EquivalentResourceMapper: registry}

	celVersion := environment.DefaultCompatibilityVersion()
	if opts.ServerVersion != "" {
		// An API server compiles with the CEL environment of its own
		// minimum compatibility version (environment.DefaultCompatibilityVersion
		// of a server of that version: one minor below its own).
		if v, err := utilversion.ParseGeneric(opts.ServerVersion); err == nil {
			ev := compatibility.NewEffectiveVersionFromString(utilversion.MajorMinor(v.Major(), v.Minor()).String(), "", "")
			celVersion = ev.MinCompatibilityVersion()
		}
	}
	return &Matcher{
		plugin:     plugin,
		ns:         &namespace.Matcher{NamespaceLister: nsInformer.Lister(), Client: client},
		objects:    objects,
		compiler:   celplugin.NewConditionCompiler(environment.MustBaseEnvSet(celVersion)),
		CELVersion: celVersion.String(),
	}, nil
}

// Hook is one webhook of a configuration.
type Hook struct {
	Config, Name  string
	Mutating      bool
	FailurePolicy admissionregistrationv1.FailurePolicyType
	ClientConfig  admissionregistrationv1.WebhookClientConfig
	Conditions    int
	// selectors is the webhook without its matchConditions (which of the
	// selectors and rules decides); conditions is the webhook with them,
	// its failurePolicy Fail so that an error of a condition is returned
	// rather than turned into "not called" as failurePolicy Ignore does.
	selectors, conditions webhook.WebhookAccessor
}

// Kind is "validating" or "mutating".
func (h *Hook) Kind() string {
	if h.Mutating {
		return "mutating"
	}
	return "validating"
}

// Hooks are the webhooks of the configurations, in their order, their
// matchConditions compiled in the matcher's CEL environment.
func (m *Matcher) Hooks(validating []admissionregistrationv1.ValidatingWebhookConfiguration, mutating []admissionregistrationv1.MutatingWebhookConfiguration) []*Hook {
	var out []*Hook
	fail := admissionregistrationv1.Fail
	for _, c := range validating {
		for i := range c.Webhooks {
			h := c.Webhooks[i].DeepCopy()
			uid := fmt.Sprintf("%s/%s/%d", c.Name, h.Name, i)
			bare := h.DeepCopy()
			bare.MatchConditions = nil
			cond := h.DeepCopy()
			cond.FailurePolicy = &fail
			out = append(out, m.hook(&Hook{Config: c.Name, Name: h.Name, FailurePolicy: policy(h.FailurePolicy), ClientConfig: h.ClientConfig, Conditions: len(h.MatchConditions),
				selectors: webhook.NewValidatingWebhookAccessor(uid, c.Name, bare), conditions: webhook.NewValidatingWebhookAccessor(uid, c.Name, cond)}))
		}
	}
	for _, c := range mutating {
		for i := range c.Webhooks {
			h := c.Webhooks[i].DeepCopy()
			uid := fmt.Sprintf("%s/%s/%d", c.Name, h.Name, i)
			bare := h.DeepCopy()
			bare.MatchConditions = nil
			cond := h.DeepCopy()
			cond.FailurePolicy = &fail
			out = append(out, m.hook(&Hook{Config: c.Name, Name: h.Name, Mutating: true, FailurePolicy: policy(h.FailurePolicy), ClientConfig: h.ClientConfig, Conditions: len(h.MatchConditions),
				selectors: webhook.NewMutatingWebhookAccessor(uid, c.Name, bare), conditions: webhook.NewMutatingWebhookAccessor(uid, c.Name, cond)}))
		}
	}
	return out
}

// hook compiles h's matchConditions once, with the matcher's compiler: the
// accessor keeps the first compilation (GetCompiledMatcher), which
// ShouldCallHook then uses in place of the plugin's default environment.
func (m *Matcher) hook(h *Hook) *Hook {
	h.conditions.GetCompiledMatcher(m.compiler)
	return h
}

func policy(p *admissionregistrationv1.FailurePolicyType) admissionregistrationv1.FailurePolicyType {
	if p == nil {
		return admissionregistrationv1.Fail
	}
	return *p
}

// Request is one request as the API server's admission sees it.
type Request struct {
	Resource  schema.GroupVersionResource
	Kind      schema.GroupVersionKind
	Operation admission.Operation
	// Namespace is the object's ("" for a cluster-scoped one; a
	// Namespace's own name for a Namespace); Name is "" for a generated
	// name.
	Namespace, Name string
	// Object is the object sent (an UPDATE's new one); OldObject the
	// stored one of an UPDATE (nil when unknown).
	Object, OldObject runtime.Object
	// User sends it (nil: unknown).
	User user.Info
}

// Decision is whether the API server calls a webhook for a request.
type Decision struct {
	Matches bool
	// Why is one phrase: which rule matched what, or what excluded it.
	Why string
	// Unsure says why the run could not decide as the API server does
	// (a matchCondition that could not be evaluated here, a namespace
	// whose labels are unknown): the webhook is then taken to match.
	Unsure string
}

// Match decides whether the API server calls h for r: ShouldCallHook
// decides; the predicates are asked again only to say why.
func (m *Matcher) Match(ctx context.Context, h *Hook, r Request) Decision {
	attr := admission.NewAttributesRecord(r.Object, r.OldObject, r.Kind, r.Namespace, r.Name, r.Resource, "", r.Operation, options(r.Operation), false, r.User)
	if rules.IsExemptAdmissionConfigurationResource(attr) {
		return Decision{Why: "the API server sends no webhook configuration or admission policy to webhooks"}
	}
	inv, serr := m.plugin.ShouldCallHook(ctx, h.selectors, attr, m.objects, &versioned{attr: attr, objects: m.objects})
	if serr != nil {
		if apierrors.IsNotFound(serr) {
			return Decision{Matches: true, Unsure: fmt.Sprintf("the labels of namespace %s are not known here, so its namespaceSelector was not evaluated", r.Namespace)}
		}
		return Decision{Matches: true, Unsure: firstLine(serr.Error())}
	}
	if inv == nil {
		return Decision{Why: m.excluded(h, attr)}
	}
	why := m.ruleWhy(h, attr, inv)
	if h.Conditions == 0 {
		return Decision{Matches: true, Why: why}
	}
	v := &versioned{attr: attr, objects: m.objects}
	inv, serr = m.plugin.ShouldCallHook(ctx, h.conditions, attr, m.objects, v)
	switch {
	case serr != nil && v.err != nil:
		return Decision{Matches: true, Why: why, Unsure: "its matchConditions were not evaluated: " + v.err.Error()}
	case serr != nil:
		// ShouldCallHook's Forbidden: "<resource> is forbidden: <cause>".
		_, cause, ok := strings.Cut(firstLine(serr.Error()), "forbidden: ")
		if !ok {
			cause = firstLine(serr.Error())
		}
		if strings.Contains(cause, "authorizer") {
			cause += "; this run has no authorizer"
		}
		return Decision{Matches: true, Why: why, Unsure: "its matchConditions could not be evaluated here (" + cause + "); the API server " + onError(h.FailurePolicy)}
	case inv == nil:
		return Decision{Why: fmt.Sprintf("%s, but matchCondition %q is false", why, m.falseCondition(ctx, h, attr))}
	}
	return Decision{Matches: true, Why: why + fmt.Sprintf(", and its %d matchConditions are true", h.Conditions)}
}

// onError is what the API server does when a matchCondition cannot be
// evaluated (matchconditions.matcher.Match, generic.ShouldCallHook).
func onError(p admissionregistrationv1.FailurePolicyType) string {
	if p == admissionregistrationv1.Ignore {
		return "skips the webhook on such an error (failurePolicy Ignore)"
	}
	return "refuses the request on such an error (failurePolicy Fail)"
}

// falseCondition names the condition that is false (the compiled matcher
// of the accessor ShouldCallHook just used).
func (m *Matcher) falseCondition(ctx context.Context, h *Hook, attr admission.Attributes) string {
	inv, _ := m.plugin.ShouldCallHook(ctx, h.selectors, attr, m.objects, &versioned{attr: attr, objects: m.objects})
	if inv == nil {
		return "?"
	}
	va, err := (&versioned{attr: attr, objects: m.objects}).VersionedAttribute(inv.Kind)
	if err != nil {
		return "?"
	}
	return h.conditions.GetCompiledMatcher(m.compiler).Match(ctx, va, nil, nil).FailedConditionName
}

// excluded says which predicate excluded the request, in ShouldCallHook's
// order: namespaceSelector, objectSelector, rules.
func (m *Matcher) excluded(h *Hook, attr admission.Attributes) string {
	if ok, _ := m.ns.MatchNamespaceSelector(h.selectors, attr); !ok {
		sel, _ := h.selectors.GetParsedNamespaceSelector()
		return fmt.Sprintf("its namespaceSelector (%s) excludes namespace %s", sel, attr.GetNamespace())
	}
	if ok, _ := (&object.Matcher{}).MatchObjectSelector(h.selectors, attr); !ok {
		sel, _ := h.selectors.GetParsedObjectSelector()
		return fmt.Sprintf("its objectSelector (%s) excludes the object's labels", sel)
	}
	return fmt.Sprintf("no rule matches %s %s", attr.GetOperation(), resourceText(attr.GetResource()))
}

// ruleWhy names the first rule that matched the invocation's resource.
func (m *Matcher) ruleWhy(h *Hook, attr admission.Attributes, inv *generic.WebhookInvocation) string {
	over := &resourceOverride{Attributes: attr, resource: inv.Resource}
	for i, r := range h.selectors.GetRules() {
		if (&rules.Matcher{Rule: r, Attr: over}).Matches() {
			s := fmt.Sprintf("rule %d (%s) matches %s %s", i+1, ruleText(r), attr.GetOperation(), resourceText(attr.GetResource()))
			if inv.Resource != attr.GetResource() {
				s += fmt.Sprintf(" as %s (matchPolicy Equivalent)", resourceText(inv.Resource))
			}
			return s
		}
	}
	return "a rule matches " + resourceText(attr.GetResource())
}

// resourceOverride is the request as the rule of an equivalent resource
// sees it (as ShouldCallHook's own override does).
type resourceOverride struct {
	admission.Attributes
	resource schema.GroupVersionResource
}

func (a *resourceOverride) GetResource() schema.GroupVersionResource { return a.resource }

func resourceText(r schema.GroupVersionResource) string {
	if r.Group == "" {
		return r.Version + " " + r.Resource
	}
	return r.Group + "/" + r.Version + " " + r.Resource
}

func ruleText(r admissionregistrationv1.RuleWithOperations) string {
	ops := make([]string, len(r.Operations))
	for i, o := range r.Operations {
		ops[i] = string(o)
	}
	groups := make([]string, len(r.APIGroups))
	for i, g := range r.APIGroups {
		groups[i] = g
		if g == "" {
			groups[i] = `""`
		}
	}
	s := fmt.Sprintf("%s %s/%s %s", strings.Join(ops, ","), strings.Join(groups, ","), strings.Join(r.APIVersions, ","), strings.Join(r.Resources, ","))
	if r.Scope != nil && *r.Scope != admissionregistrationv1.AllScopes {
		s += ", scope " + string(*r.Scope)
	}
	return s
}

// options are the request's operation options (the API server's
// CreateOptions or UpdateOptions, here with no field manager).
func options(op admission.Operation) runtime.Object {
	if op == admission.Update {
		return &metav1.UpdateOptions{}
	}
	return &metav1.CreateOptions{}
}

// versioned is the request as the webhook's version sees it (the
// dispatchers' versionedAttributeAccessor). An object of another version
// than the webhook's is not converted: the API server converts it with its
// scheme or the CRD's conversion, which this run does not have.
type versioned struct {
	attr    admission.Attributes
	objects admission.ObjectInterfaces
	// err is the conversion that was not done.
	err *conversionError
}

type conversionError struct{ from, to schema.GroupVersionKind }

func (e *conversionError) Error() string {
	return fmt.Sprintf("the API server would convert the object from %s to %s first, which is not done here", e.from.GroupVersion(), e.to.GroupVersion())
}

func (v *versioned) VersionedAttribute(gvk schema.GroupVersionKind) (*admission.VersionedAttributes, error) {
	for _, o := range []runtime.Object{v.attr.GetObject(), v.attr.GetOldObject()} {
		if o != nil && o.GetObjectKind().GroupVersionKind() != gvk {
			v.err = &conversionError{from: o.GetObjectKind().GroupVersionKind(), to: gvk}
			return nil, v.err
		}
	}
	return admission.NewVersionedAttributes(v.attr, gvk, v.objects)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// namespacesNotFound is the namespace predicate's client: every namespace
// the lister does not hold is not found.
type namespacesNotFound struct{ kubernetes.Interface }

func (namespacesNotFound) CoreV1() corev1client.CoreV1Interface { return coreNotFound{} }

type coreNotFound struct{ corev1client.CoreV1Interface }

func (coreNotFound) Namespaces() corev1client.NamespaceInterface { return nsNotFound{} }

type nsNotFound struct {
	corev1client.NamespaceInterface
}

func (nsNotFound) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Namespace, error) {
	return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
}
