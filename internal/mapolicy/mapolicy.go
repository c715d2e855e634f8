// Package mapolicy decides which MutatingAdmissionPolicies, through which
// of their bindings, the API server applies to a request, with the API
// server's own code (k8s.io/apiserver):
//
//   - which policy and binding pairs match a request: the generic policy
//     dispatcher of k8s.io/apiserver/pkg/admission/plugin/policy/generic
//     (policy_dispatcher.go: the policy's matchConstraints, then each
//     binding's matchResources, through policy_matcher.go and
//     k8s.io/apiserver/pkg/admission/plugin/policy/matching: rules,
//     excludeResourceRules, namespaceSelector, objectSelector, matchPolicy
//     Equivalent), with the MutatingAdmissionPolicy plugin's accessors
//     (policy/mutating/accessor.go);
//   - which of those the policy's matchConditions keep: compiled as the
//     plugin compiles them (policy/mutating/compilation.go compilePolicy:
//     the base CEL environment, the policy's variables, the conditions) and
//     evaluated by k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions,
//     as the plugin's dispatcher does (policy/mutating/dispatcher.go).
//
// The plugin itself needs informers, an authorizer and the API server's
// OpenAPI to apply the mutations; the plugin's dry runs see what they do, so
// this package only decides which policies are candidates for a change.
// A policy whose conditions, selectors or params cannot be evaluated here is
// taken to match, with the reason.
//
// Sources (Kubernetes v1.36, k8s.io/apiserver v0.37):
// https://github.com/kubernetes/apiserver/blob/master/pkg/admission/plugin/policy/generic/policy_dispatcher.go,
// https://github.com/kubernetes/apiserver/blob/master/pkg/admission/plugin/policy/matching/matching.go,
// https://github.com/kubernetes/apiserver/blob/master/pkg/admission/plugin/policy/mutating/compilation.go,
// https://kubernetes.io/docs/reference/access-authn-authz/mutating-admission-policy/.
package mapolicy

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	webhookgeneric "k8s.io/apiserver/pkg/admission/plugin/webhook/generic"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/environment"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

type (
	policy  = admissionregistrationv1.MutatingAdmissionPolicy
	binding = admissionregistrationv1.MutatingAdmissionPolicyBinding
)

// Request is one request of the install as the policies see it.
type Request struct {
	// Object is the object sent: typed (its kind set) or unstructured.
	Object runtime.Object
	// OldObject is the live object an update replaces (nil for a create).
	OldObject runtime.Object
	Kind      schema.GroupVersionKind
	Resource  schema.GroupVersionResource
	// Namespace is the object's ("" for a cluster-scoped one); Name is
	// its name ("" for a pod with a generated name).
	Namespace, Name string
	// NamespaceLabels are the labels of Namespace (the ones it will get
	// when it does not exist yet).
	NamespaceLabels map[string]string
	// Update is true for an update, false for a create.
	Update bool
	// User and Groups are who sends it (request.userInfo in CEL).
	User   string
	Groups []string
}

// Match is one policy and binding pair the API server applies to a
// request.
type Match struct {
	Policy, Binding string
	// Unevaluated says why the pair could not be decided here ("" when it
	// was): it is taken to match.
	Unevaluated string
}

func (m Match) String() string {
	return "MutatingAdmissionPolicy " + m.Policy + " (binding " + m.Binding + ")"
}

// Matcher decides for the policies and bindings it was built with.
type Matcher struct {
	pairs      []pair
	namespaces cache.Indexer
	objects    admission.ObjectInterfaces
	dispatcher generic.Dispatcher[generic.PolicyHook[*policy, *binding, evaluator]]
}

// pair is one policy with one of its bindings, compiled.
type pair struct {
	policy  *policy
	binding *binding
	eval    evaluator
}

// evaluator is a policy's compiled matchConditions (nil matcher: none).
type evaluator struct {
	conditions matchconditions.Matcher
	compiler   *plugincel.CompositedCompiler
}

// New compiles the policies and pairs each with its bindings (a binding
// names its policy: spec.policyName). resources is the cluster's discovery
// document: matchPolicy Equivalent matches a rule of another version of the
// same group and resource, as the API server's equivalent-resource registry
// does for the versions it serves.
func New(policies []admissionregistrationv1.MutatingAdmissionPolicy, bindings []admissionregistrationv1.MutatingAdmissionPolicyBinding, resources []*metav1.APIResourceList) *Matcher {
	m := &Matcher{namespaces: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})}
	registry := runtime.NewEquivalentResourceRegistry()
	for _, l := range resources {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			name, sub, _ := strings.Cut(r.Name, "/")
			registry.RegisterKindFor(gv.WithResource(name), sub, gv.WithKind(r.Kind))
		}
	}
	m.objects = objectInterfaces{admission.NewObjectInterfacesFromScheme(clientgoscheme.Scheme), registry}
	// The namespace matcher reads the namespace from its lister; every
	// request brings its namespace's labels (Match), so the lister always
	// has it and the client is never called.
	m.dispatcher = generic.NewPolicyDispatcher[*policy, *binding, evaluator](
		failClosedPolicy, mutating.NewMutatingAdmissionPolicyBindingAccessor,
		matching.NewMatcher(corelisters.NewNamespaceLister(m.namespaces), nil),
		m.evaluate)
	byName := map[string]*policy{}
	compiled := map[string]evaluator{}
	for i := range policies {
		p := policies[i].DeepCopy()
		byName[p.Name] = p
		compiled[p.Name] = compile(p)
	}
	for i := range bindings {
		b := bindings[i].DeepCopy()
		p, ok := byName[b.Spec.PolicyName]
		if !ok {
			continue
		}
		if p.Spec.ParamKind != nil && b.Spec.ParamRef != nil {
			// Params are not read here: the conditions see none, and
			// say so if they need them.
			b.Spec.ParamRef = nil
		}
		m.pairs = append(m.pairs, pair{policy: p, binding: b, eval: compiled[p.Name]})
	}
	sort.Slice(m.pairs, func(i, j int) bool {
		if m.pairs[i].policy.Name != m.pairs[j].policy.Name {
			return m.pairs[i].policy.Name < m.pairs[j].policy.Name
		}
		return m.pairs[i].binding.Name < m.pairs[j].binding.Name
	})
	return m
}

// Pairs counts the policy and binding pairs (a policy without a binding
// does nothing).
func (m *Matcher) Pairs() int { return len(m.pairs) }

// compile compiles a policy's matchConditions as the plugin does
// (policy/mutating/compilation.go compilePolicy: the same CEL environment,
// variables and options), except that the failure policy is Fail, so that
// a condition that cannot be evaluated is said rather than skipped.
func compile(p *policy) evaluator {
	if len(p.Spec.MatchConditions) == 0 {
		return evaluator{}
	}
	opts := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return evaluator{conditions: failing{err}}
	}
	var vars []plugincel.NamedExpressionAccessor
	for _, v := range p.Spec.Variables {
		vars = append(vars, &validating.Variable{Name: v.Name, Expression: v.Expression})
	}
	compiler.CompileAndStoreVariables(vars, opts, environment.StoredExpressions)
	conds := make([]plugincel.ExpressionAccessor, len(p.Spec.MatchConditions))
	for i := range p.Spec.MatchConditions {
		conds[i] = (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i])
	}
	fail := admissionregistrationv1.Fail
	return evaluator{
		conditions: matchconditions.NewMatcher(compiler.CompileCondition(conds, opts, environment.StoredExpressions), &fail, "policy", "validate", p.Name),
		compiler:   compiler,
	}
}

// failing is a matcher whose compilation failed.
type failing struct{ err error }

func (f failing) Match(context.Context, *admission.VersionedAttributes, runtime.Object, authorizer.UnconditionalAuthorizer) matchconditions.MatchResult {
	return matchconditions.MatchResult{Error: f.err}
}

// failClosedPolicy is the plugin's policy accessor with failurePolicy Fail:
// the dispatcher then returns, rather than drops, a pair it could not
// decide (an Ignore policy's error is skipped by the API server: it does
// not mutate then, but whether it would is what is asked).
func failClosedPolicy(p *policy) generic.PolicyAccessor {
	return failClosed{mutating.NewMutatingAdmissionPolicyAccessor(p)}
}

type failClosed struct{ generic.PolicyAccessor }

func (failClosed) GetFailurePolicy() *admissionregistrationv1.FailurePolicyType {
	f := admissionregistrationv1.Fail
	return &f
}

// matched is what the dispatcher's delegate (evaluate) hands back through
// the context of one Match call.
type matchedKey struct{}

type matched struct {
	matches []Match
}

// evaluate is the dispatcher's delegate: it receives the pairs whose
// policy and binding match the request and keeps those whose
// matchConditions pass, as the plugin's dispatcher does before it mutates.
func (m *Matcher) evaluate(ctx context.Context, _ admission.Attributes, _ admission.ObjectInterfaces,
	versioned webhookgeneric.VersionedAttributeAccessor,
	invocations []generic.PolicyInvocation[*policy, *binding, evaluator]) ([]generic.PolicyError, *apierrors.StatusError) {
	out, _ := ctx.Value(matchedKey{}).(*matched)
	for _, inv := range invocations {
		match := Match{Policy: inv.Policy.Name, Binding: inv.Binding.Name}
		if inv.Evaluator.conditions != nil {
			va, err := versioned.VersionedAttribute(inv.Kind)
			if err != nil {
				match.Unevaluated = "its matchConditions could not be evaluated: " + err.Error()
				out.matches = append(out.matches, match)
				continue
			}
			cctx := ctx
			if inv.Evaluator.compiler != nil {
				cctx = inv.Evaluator.compiler.CreateContext(ctx)
			}
			res := inv.Evaluator.conditions.Match(cctx, va, inv.Param, nil)
			switch {
			case res.Error != nil:
				match.Unevaluated = "its matchConditions could not be evaluated here: " + firstLine(res.Error.Error())
			case !res.Matches:
				continue
			}
		}
		out.matches = append(out.matches, match)
	}
	return nil, nil
}

// Match returns the pairs that apply to r, in policy and binding order.
func (m *Matcher) Match(ctx context.Context, r Request) ([]Match, error) {
	if len(m.pairs) == 0 {
		return nil, nil
	}
	if r.Namespace != "" {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.Namespace, Labels: r.NamespaceLabels}}
		if err := m.namespaces.Update(ns); err != nil {
			return nil, err
		}
	}
	op := admission.Create
	if r.Update {
		op = admission.Update
	}
	obj := r.Object
	if obj != nil && obj.GetObjectKind().GroupVersionKind().Empty() {
		obj = obj.DeepCopyObject()
		obj.GetObjectKind().SetGroupVersionKind(r.Kind)
	}
	attrs := admission.NewAttributesRecord(obj, r.OldObject, r.Kind, r.Namespace, r.Name, r.Resource, "", op, nil, true,
		&user.DefaultInfo{Name: r.User, Groups: r.Groups})
	var out []Match
	for _, pr := range m.pairs {
		got := &matched{}
		hook := generic.PolicyHook[*policy, *binding, evaluator]{Policy: pr.policy, Bindings: []*binding{pr.binding}, Evaluator: pr.eval}
		err := m.dispatcher.Dispatch(context.WithValue(ctx, matchedKey{}, got), attrs, m.objects, []generic.PolicyHook[*policy, *binding, evaluator]{hook})
		if err != nil {
			var se *apierrors.StatusError
			if !errors.As(err, &se) {
				return nil, err
			}
			got.matches = append(got.matches, Match{Policy: pr.policy.Name, Binding: pr.binding.Name,
				Unevaluated: "it could not be matched here: " + firstLine(se.ErrStatus.Message)})
		}
		out = append(out, got.matches...)
	}
	return out, nil
}

// objectInterfaces are client-go's scheme with the equivalent-resource
// registry of the cluster's discovery. An object is converted to another
// version of its kind only for the matchConditions of a policy that matched
// it through matchPolicy Equivalent; the API server converts with its
// conversion functions, which a client does not have: an unstructured
// object is handed over as it is, under the other apiVersion (the same
// fields, as between the versions of most kinds).
type objectInterfaces struct {
	admission.ObjectInterfaces
	registry runtime.EquivalentResourceMapper
}

func (o objectInterfaces) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper {
	return o.registry
}

func (o objectInterfaces) GetObjectCreater() runtime.ObjectCreater { return unstructuredCreater{} }

func (o objectInterfaces) GetObjectConvertor() runtime.ObjectConvertor {
	return unstructuredConvertor{o.ObjectInterfaces.GetObjectConvertor()}
}

type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

type unstructuredConvertor struct{ runtime.ObjectConvertor }

func (c unstructuredConvertor) Convert(in, out, context any) error {
	u, ok := out.(*unstructured.Unstructured)
	if !ok {
		return c.ObjectConvertor.Convert(in, out, context)
	}
	gvk := u.GroupVersionKind()
	obj, ok := in.(runtime.Object)
	if !ok {
		return fmt.Errorf("cannot convert %T", in)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u.Object = runtime.DeepCopyJSON(content)
	u.SetGroupVersionKind(gvk)
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// Describe lists matches in a few words: "MutatingAdmissionPolicy a
// (binding b), MutatingAdmissionPolicy c (binding d; its matchConditions
// could not be evaluated here: ...)".
func Describe(ms []Match) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
		if m.Unevaluated != "" {
			parts[i] = fmt.Sprintf("MutatingAdmissionPolicy %s (binding %s; %s, taken to match)", m.Policy, m.Binding, m.Unevaluated)
		}
	}
	return strings.Join(parts, ", ")
}
