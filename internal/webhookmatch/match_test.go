package webhookmatch

import (
	"context"
	"regexp"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/yaml"
)

// discovery serves pods (v1), deployments (apps/v1 and apps/v1beta2:
// equivalent), clusterroles and namespaces.
var discovery = []*metav1.APIResourceList{
	{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods", Kind: "Pod", Namespaced: true}, {Name: "namespaces", Kind: "Namespace"}, {Name: "configmaps", Kind: "ConfigMap", Namespaced: true}}},
	{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{Name: "deployments", Kind: "Deployment", Namespaced: true}}},
	{GroupVersion: "apps/v1beta2", APIResources: []metav1.APIResource{{Name: "deployments", Kind: "Deployment", Namespaced: true}}},
	{GroupVersion: "rbac.authorization.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "clusterroles", Kind: "ClusterRole"}}},
}

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestMatch holds the decision to the API server's (ShouldCallHook) on
// real admissionregistration/v1 webhooks: rules and scope, matchPolicy
// Exact and Equivalent, namespaceSelector (the namespace's labels, and a
// Namespace's own), objectSelector, matchConditions true, false and in
// error, and a condition that reads the request's user.
func TestMatch(t *testing.T) {
	m, err := New(Options{
		Namespaces: map[string]map[string]string{
			"codefresh": {"kubernetes.io/metadata.name": "codefresh", "team": "gitops"},
			"other":     {"kubernetes.io/metadata.name": "other"},
		},
		Resources:     discovery,
		ServerVersion: "v1.33.1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.CELVersion != "1.32" {
		t.Errorf("CEL environment %s for a 1.33 server, want its minimum compatibility version 1.32", m.CELVersion)
	}
	pod := func(ns string, labels string) Request {
		return Request{Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Operation: admission.Create, Namespace: ns,
			Object: obj(t, "apiVersion: v1\nkind: Pod\nmetadata: {generateName: web-, namespace: "+ns+", labels: "+labels+"}\nspec: {containers: [{name: c, image: nginx}]}"),
			User:   &user.DefaultInfo{Name: "system:serviceaccount:kube-system:replicaset-controller", Groups: []string{"system:serviceaccounts", "system:authenticated"}}}
	}
	deployment := Request{Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Operation: admission.Create, Namespace: "codefresh", Name: "web",
		Object: obj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: codefresh}\nspec: {replicas: 1}"),
		User:   &user.DefaultInfo{Name: "ci-installer", Groups: []string{"platform", "system:authenticated"}}}
	clusterRole := Request{Resource: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, Kind: schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
		Operation: admission.Create, Name: "validate-values-cr",
		Object: obj(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: validate-values-cr}")}
	newNamespace := Request{Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Kind: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"},
		Operation: admission.Create, Namespace: "fresh", Name: "fresh",
		Object: obj(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: fresh, labels: {name: fresh, kubernetes.io/metadata.name: fresh}}")}
	unknownNS := pod("nowhere", "{}")

	const podRule = `
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]`
	cases := []struct {
		name    string
		webhook string
		req     Request
		matches bool
		why     []string
		unsure  string
	}{
		{"rule matches", podRule, pod("codefresh", "{}"), true, []string{`rule 1 (CREATE ""/v1 pods) matches CREATE v1 pods`}, ""},
		{"operation differs", `
  rules: [{operations: [UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]`, pod("codefresh", "{}"), false, []string{"no rule matches CREATE v1 pods"}, ""},
		{"subresource only", `
  rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*/status"]}]`, pod("codefresh", "{}"), false, []string{"no rule matches"}, ""},
		{"Exact: another version does not match", `
  matchPolicy: Exact
  rules: [{operations: [CREATE], apiGroups: [apps], apiVersions: [v1beta2], resources: [deployments]}]`, deployment, false, []string{"no rule matches CREATE apps/v1 deployments"}, ""},
		{"Equivalent: another served version matches", `
  matchPolicy: Equivalent
  rules: [{operations: [CREATE], apiGroups: [apps], apiVersions: [v1beta2], resources: [deployments]}]`, deployment, true,
			[]string{"rule 1 (CREATE apps/v1beta2 deployments) matches CREATE apps/v1 deployments as apps/v1beta2 deployments (matchPolicy Equivalent)"}, ""},
		{"Equivalent with matchConditions: the object is not converted here", `
  matchPolicy: Equivalent
  matchConditions: [{name: one-replica, expression: "object.spec.replicas == 1"}]
  rules: [{operations: [CREATE], apiGroups: [apps], apiVersions: [v1beta2], resources: [deployments]}]`, deployment, true,
			[]string{"as apps/v1beta2 deployments"}, "convert the object from apps/v1 to apps/v1beta2"},
		{"scope Namespaced excludes a cluster-scoped object", `
  rules: [{operations: [CREATE], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], scope: Namespaced}]`, clusterRole, false, []string{"no rule matches"}, ""},
		{"scope Cluster matches a cluster-scoped object", `
  rules: [{operations: [CREATE], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], scope: Cluster}]`, clusterRole, true, []string{"scope Cluster"}, ""},
		{"scope Cluster matches a Namespace", `
  rules: [{operations: [CREATE], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], scope: Cluster}]`, newNamespace, true, []string{"matches CREATE v1 namespaces"}, ""},
		{"namespaceSelector matches the namespace's labels", `
  namespaceSelector: {matchLabels: {team: gitops}}` + podRule, pod("codefresh", "{}"), true, []string{"rule 1"}, ""},
		{"namespaceSelector excludes the namespace", `
  namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [codefresh]}]}` + podRule, pod("codefresh", "{}"), false,
			[]string{"its namespaceSelector (kubernetes.io/metadata.name notin (codefresh)) excludes namespace codefresh"}, ""},
		{"namespaceSelector of a Namespace's create reads its own labels", `
  namespaceSelector: {matchLabels: {name: fresh}}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [namespaces]}]`, newNamespace, true, []string{"rule 1"}, ""},
		{"namespaceSelector does not apply to a cluster-scoped object", `
  namespaceSelector: {matchLabels: {team: nobody}}
  rules: [{operations: [CREATE], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]`, clusterRole, true, []string{"rule 1"}, ""},
		{"namespace whose labels are unknown", `
  namespaceSelector: {matchLabels: {team: gitops}}` + podRule, unknownNS, true, nil, "labels of namespace nowhere are not known"},
		{"objectSelector matches", `
  objectSelector: {matchLabels: {app: web}}` + podRule, pod("codefresh", "{app: web}"), true, []string{"rule 1"}, ""},
		{"objectSelector excludes", `
  objectSelector: {matchLabels: {app: web}}` + podRule, pod("codefresh", "{app: db}"), false, []string{"its objectSelector (app=web) excludes"}, ""},
		{"matchConditions true", `
  matchConditions:
  - {name: not-kube-system, expression: "request.namespace != 'kube-system'"}
  - {name: has-containers, expression: "size(object.spec.containers) > 0"}` + podRule, pod("codefresh", "{}"), true, []string{"and its 2 matchConditions are true"}, ""},
		{"matchCondition false excludes the runtime namespace", `
  matchConditions:
  - {name: not-the-runtime, expression: "request.namespace != 'codefresh'"}` + podRule, pod("codefresh", "{}"), false,
			[]string{`matches CREATE v1 pods, but matchCondition "not-the-runtime" is false`}, ""},
		{"matchCondition on the request's user", `
  matchConditions:
  - {name: not-controllers, expression: "!request.userInfo.username.startsWith('system:serviceaccount:kube-system:')"}` + podRule, pod("codefresh", "{}"), false,
			[]string{`matchCondition "not-controllers" is false`}, ""},
		{"matchCondition error, failurePolicy Fail", `
  failurePolicy: Fail
  matchConditions:
  - {name: missing-field, expression: "object.metadata.annotations['absent'] == 'x'"}` + podRule, pod("codefresh", "{}"), true,
			[]string{"rule 1"}, "could not be evaluated here \\(.*refuses the request on such an error \\(failurePolicy Fail\\)"},
		{"matchCondition error, failurePolicy Ignore: reported, not silently skipped", `
  failurePolicy: Ignore
  matchConditions:
  - {name: missing-field, expression: "object.metadata.annotations['absent'] == 'x'"}` + podRule, pod("codefresh", "{}"), true,
			[]string{"rule 1"}, "skips the webhook on such an error \\(failurePolicy Ignore\\)"},
		{"matchCondition that does not compile", `
  matchConditions:
  - {name: broken, expression: "object.spec.containers.exists("}` + podRule, pod("codefresh", "{}"), true, []string{"rule 1"}, "could not be evaluated here"},
		{"matchCondition using the authorizer, which the run has not", `
  matchConditions:
  - {name: authz, expression: "authorizer.group('').resource('pods').namespace('codefresh').check('create').allowed()"}` + podRule, pod("codefresh", "{}"), true, []string{"rule 1"}, "could not be evaluated here"},
		{"a webhook configuration is never sent to webhooks", `
  rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]`,
			Request{Resource: schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"},
				Kind: schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}, Operation: admission.Create, Name: "x",
				Object: obj(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: x}")}, false, []string{"sends no webhook configuration"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, mutating := range []bool{false, true} {
				kind := "ValidatingWebhookConfiguration"
				if mutating {
					kind = "MutatingWebhookConfiguration"
				}
				y := "apiVersion: admissionregistration.k8s.io/v1\nkind: " + kind + "\nmetadata: {name: policy}\nwebhooks:\n- name: policy.example.com\n  sideEffects: None\n  admissionReviewVersions: [v1]\n  clientConfig: {service: {namespace: policy-system, name: policy}}" + defaulted(tc.webhook)
				var hooks []*Hook
				if mutating {
					var c admissionregistrationv1.MutatingWebhookConfiguration
					if err := yaml.UnmarshalStrict([]byte(y), &c); err != nil {
						t.Fatal(err)
					}
					hooks = m.Hooks(nil, []admissionregistrationv1.MutatingWebhookConfiguration{c})
				} else {
					var c admissionregistrationv1.ValidatingWebhookConfiguration
					if err := yaml.UnmarshalStrict([]byte(y), &c); err != nil {
						t.Fatal(err)
					}
					hooks = m.Hooks([]admissionregistrationv1.ValidatingWebhookConfiguration{c}, nil)
				}
				if len(hooks) != 1 || hooks[0].Mutating != mutating {
					t.Fatalf("hooks %+v", hooks)
				}
				d := m.Match(context.Background(), hooks[0], tc.req)
				t.Logf("%s: %+v", kind, d)
				if d.Matches != tc.matches {
					t.Errorf("%s: matches %v, want %v (%+v)", kind, d.Matches, tc.matches, d)
				}
				for _, w := range tc.why {
					if !strings.Contains(d.Why, w) {
						t.Errorf("%s: why %q, want it to say %q", kind, d.Why, w)
					}
				}
				if tc.unsure == "" && d.Unsure != "" {
					t.Errorf("%s: unsure %q, want none", kind, d.Unsure)
				}
				if tc.unsure != "" && !matchRe(t, tc.unsure, d.Unsure) {
					t.Errorf("%s: unsure %q, want %q", kind, d.Unsure, tc.unsure)
				}
			}
		})
	}
}

// TestDefaultCELVersion: without the cluster's version, the library's
// default environment (as an API server built from it).
func TestDefaultCELVersion(t *testing.T) {
	m, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.CELVersion == "" || m.CELVersion == "1.32" {
		t.Errorf("default CEL version %q", m.CELVersion)
	}
}

// defaulted adds what the API server's defaulting gives a webhook that
// does not set it (a configuration is read back with them): every
// namespace and object, matchPolicy Equivalent, failurePolicy Fail.
func defaulted(w string) string {
	for _, d := range []string{"namespaceSelector: {}", "objectSelector: {}", "matchPolicy: Equivalent", "failurePolicy: Fail"} {
		key, _, _ := strings.Cut(d, ":")
		if !strings.Contains(w, key+":") {
			w = "\n  " + d + w
		}
	}
	return w
}

func matchRe(t *testing.T, re, s string) bool {
	t.Helper()
	return regexp.MustCompile(re).MatchString(s)
}
