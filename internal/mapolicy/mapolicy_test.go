package mapolicy

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func mustPolicy(t *testing.T, doc string) admissionregistrationv1.MutatingAdmissionPolicy {
	t.Helper()
	var p admissionregistrationv1.MutatingAdmissionPolicy
	if err := yaml.UnmarshalStrict([]byte(doc), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustBinding(t *testing.T, doc string) admissionregistrationv1.MutatingAdmissionPolicyBinding {
	t.Helper()
	var b admissionregistrationv1.MutatingAdmissionPolicyBinding
	if err := yaml.UnmarshalStrict([]byte(doc), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// policyOn is a policy of pods (or rules) with the API server's defaults
// (empty selectors, matchPolicy Equivalent) and the given extra spec.
func policyOn(t *testing.T, name, rules, extra string) admissionregistrationv1.MutatingAdmissionPolicy {
	return mustPolicy(t, `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: `+name+`}
spec:
  matchConstraints:
    matchPolicy: Equivalent
    namespaceSelector: {}
    objectSelector: {}
    resourceRules:
`+rules+`
  reinvocationPolicy: Never
  mutations:
  - patchType: JSONPatch
    jsonPatch: {expression: "[]"}
`+extra)
}

const podRules = `    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}`

func bindingOf(t *testing.T, name, policy, extra string) admissionregistrationv1.MutatingAdmissionPolicyBinding {
	return mustBinding(t, `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: `+name+`}
spec:
  policyName: `+policy+`
`+extra)
}

var podGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func jobPod() *corev1.Pod {
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: "validate-values-", Namespace: "codefresh", Labels: map[string]string{"batch.kubernetes.io/job-name": "validate-values"}},
		Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "validate-values", Image: "x"}}}}
}

func podRequest(pod *corev1.Pod, nsLabels map[string]string) Request {
	return Request{Object: pod, Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Resource: podGVR, Namespace: pod.Namespace,
		NamespaceLabels: nsLabels, User: "ci-installer", Groups: []string{"platform", "system:authenticated"}}
}

// TestMatch: the API server's matching decides, through each binding: the
// policy's rules and the binding's selectors, exclusions, matchConditions
// (true, false, and one that cannot be evaluated, taken to match), a
// binding of another policy, a policy without a binding, and matchPolicy
// Equivalent across versions of one resource.
func TestMatch(t *testing.T) {
	jobCond := `  matchConditions:
  - name: job-pods
    expression: "has(object.metadata.labels) && 'batch.kubernetes.io/job-name' in object.metadata.labels"
`
	policies := []admissionregistrationv1.MutatingAdmissionPolicy{
		policyOn(t, "sidecar-all", podRules, ""),
		policyOn(t, "sidecar-jobs", podRules, jobCond),
		policyOn(t, "not-jobs", podRules, `  matchConditions:
  - {name: no-jobs, expression: "!('batch.kubernetes.io/job-name' in object.metadata.labels)"}
`),
		policyOn(t, "by-user", podRules, `  matchConditions:
  - {name: ci, expression: "request.userInfo.username == 'ci-installer'"}
`),
		policyOn(t, "broken", podRules, `  matchConditions:
  - {name: bad, expression: "object.spec.nosuchfield == 'x'"}
`),
		policyOn(t, "deployments", `    - {apiGroups: [apps], apiVersions: [v1beta2], operations: [CREATE], resources: [deployments]}`, ""),
		policyOn(t, "no-binding", podRules, ""),
	}
	bindings := []admissionregistrationv1.MutatingAdmissionPolicyBinding{
		bindingOf(t, "all", "sidecar-all", ""),
		bindingOf(t, "team-only", "sidecar-all", `  matchResources:
    namespaceSelector: {matchLabels: {team: payments}}
    objectSelector: {}
`),
		bindingOf(t, "excluded", "sidecar-all", `  matchResources:
    namespaceSelector: {}
    objectSelector: {}
    excludeResourceRules:
    - {apiGroups: [""], apiVersions: ["*"], operations: ["*"], resources: [pods]}
`),
		bindingOf(t, "jobs", "sidecar-jobs", ""),
		bindingOf(t, "not-jobs", "not-jobs", ""),
		bindingOf(t, "by-user", "by-user", ""),
		bindingOf(t, "broken", "broken", ""),
		bindingOf(t, "deployments", "deployments", ""),
		bindingOf(t, "orphan", "gone", ""),
	}
	discovery := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods", Kind: "Pod", Namespaced: true}}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{Name: "deployments", Kind: "Deployment", Namespaced: true}}},
		{GroupVersion: "apps/v1beta2", APIResources: []metav1.APIResource{{Name: "deployments", Kind: "Deployment", Namespaced: true}}},
	}
	m := New(policies, bindings, discovery)
	if m.Pairs() != 8 {
		t.Errorf("%d pairs, want 8 (the orphan binding and the policy without one make none)", m.Pairs())
	}
	got, err := m.Match(context.Background(), podRequest(jobPod(), map[string]string{"kubernetes.io/metadata.name": "codefresh"}))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range got {
		names = append(names, g.Policy+"/"+g.Binding)
		if g.Policy == "broken" && !strings.Contains(g.Unevaluated, "could not be evaluated") {
			t.Errorf("broken: Unevaluated %q, want the reason", g.Unevaluated)
		}
		if g.Policy != "broken" && g.Unevaluated != "" {
			t.Errorf("%s: Unevaluated %q", g.Policy, g.Unevaluated)
		}
	}
	want := "broken/broken by-user/by-user sidecar-all/all sidecar-jobs/jobs"
	if strings.Join(names, " ") != want {
		t.Errorf("matches %v, want %s", names, want)
	}

	// The namespace's labels select the team binding.
	got, _ = m.Match(context.Background(), podRequest(jobPod(), map[string]string{"team": "payments"}))
	if !has(got, "sidecar-all", "team-only") {
		t.Errorf("team-only does not match in a payments namespace: %v", got)
	}

	// matchPolicy Equivalent: a rule of apps/v1beta2 matches an apps/v1
	// Deployment.
	dep := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "gitops-operator", "namespace": "codefresh"}}}
	got, err = m.Match(context.Background(), Request{Object: dep, Kind: dep.GroupVersionKind(), Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Namespace: "codefresh", Name: "gitops-operator"})
	if err != nil {
		t.Fatal(err)
	}
	if !has(got, "deployments", "deployments") || has(got, "sidecar-all", "all") {
		t.Errorf("deployment matches %v, want deployments/deployments only", got)
	}
	if d := Describe(got); d != "MutatingAdmissionPolicy deployments (binding deployments)" {
		t.Errorf("Describe %q", d)
	}
}

func has(ms []Match, policy, binding string) bool {
	for _, m := range ms {
		if m.Policy == policy && m.Binding == binding {
			return true
		}
	}
	return false
}

// TestMatchParams: a policy with params is matched without them: its
// conditions that need them cannot be evaluated, and it is taken to match.
func TestMatchParams(t *testing.T) {
	p := policyOn(t, "with-params", podRules, `  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConditions:
  - {name: p, expression: "params.data.enabled == 'true'"}
`)
	b := bindingOf(t, "with-params", "with-params", `  paramRef: {name: cfg, namespace: default, parameterNotFoundAction: Deny}
`)
	got, err := New([]admissionregistrationv1.MutatingAdmissionPolicy{p}, []admissionregistrationv1.MutatingAdmissionPolicyBinding{b}, nil).
		Match(context.Background(), podRequest(jobPod(), nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Unevaluated == "" {
		t.Fatalf("got %+v, want one match taken to match with the reason", got)
	}
	if !strings.Contains(Describe(got), "taken to match") {
		t.Errorf("Describe %q", Describe(got))
	}
}
