package checks

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// mapDocs are a MutatingAdmissionPolicy of Job pods (a matchCondition on
// the Job controller's label) with its binding, in apiVersion, and a
// policy of the Deployment's pods whose binding selects another
// namespace.
func mapDocs(apiVersion string) string {
	return `apiVersion: ` + apiVersion + `
kind: MutatingAdmissionPolicy
metadata: {name: add-sleeper}
spec:
  failurePolicy: Fail
  matchConstraints:
    matchPolicy: Equivalent
    namespaceSelector: {}
    objectSelector: {}
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  matchConditions:
  - {name: job-pods, expression: "'batch.kubernetes.io/job-name' in object.metadata.labels"}
  reinvocationPolicy: Never
  mutations:
  - patchType: JSONPatch
    jsonPatch: {expression: "[]"}
---
apiVersion: ` + apiVersion + `
kind: MutatingAdmissionPolicyBinding
metadata: {name: add-sleeper-everywhere}
spec:
  policyName: add-sleeper
---
apiVersion: ` + apiVersion + `
kind: MutatingAdmissionPolicy
metadata: {name: raise-memory}
spec:
  matchConstraints:
    namespaceSelector: {}
    objectSelector: {}
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  reinvocationPolicy: Never
  mutations:
  - patchType: JSONPatch
    jsonPatch: {expression: "[]"}
---
apiVersion: ` + apiVersion + `
kind: MutatingAdmissionPolicyBinding
metadata: {name: raise-memory-elsewhere}
spec:
  policyName: raise-memory
  matchResources:
    namespaceSelector: {matchLabels: {team: payments}}
    objectSelector: {}
`
}

// servesMAP adds the policy kinds of version to the kit's discovery.
func servesMAP(k *kit, version string) *kit {
	return k.serves("admissionregistration.k8s.io/"+version,
		metaResource("mutatingadmissionpolicies", "MutatingAdmissionPolicy", false),
		metaResource("mutatingadmissionpolicybindings", "MutatingAdmissionPolicyBinding", false))
}

// addSleeper answers a Job's pod with a container added (a regular one,
// not a native sidecar), and the Deployment's pod with its memory limit
// raised and a label added.
func addSleeper(r dryRunRequest) (int, map[string]any, []string) {
	name := podOfRequest(r)
	if name == "" {
		return 0, nil, nil
	}
	spec := r.Object["spec"].(map[string]any)
	containers := asList(spec["containers"])
	if strings.HasPrefix(name, "validate-values-") {
		spec["containers"] = append(containers, map[string]any{"name": "sleeper", "image": "busybox",
			"resources": map[string]any{"limits": map[string]any{"memory": "64Mi"}}})
		return 201, r.Object, nil
	}
	c := containers[0].(map[string]any)
	c["resources"].(map[string]any)["limits"].(map[string]any)["memory"] = "1Gi"
	md := r.Object["metadata"].(map[string]any)
	md["labels"].(map[string]any)["mutated"] = "yes"
	return 201, r.Object, nil
}

// TestMutatingAdmissionPolicyNamed: the hook Job's pod to which admission
// adds a regular container never completes: admission-pods fails naming
// the MutatingAdmissionPolicy and binding that match that pod (its
// matchCondition on the Job label passes; the other policy's binding
// selects another namespace, so it is not named), whichever version the
// API server serves; the Deployment's pod that admission changed is one
// line saying what changed. Not served: nothing is listed and the pods
// are judged as before.
func TestMutatingAdmissionPolicyNamed(t *testing.T) {
	for _, version := range []string{"v1", "v1beta1", "v1alpha1"} {
		t.Run(version, func(t *testing.T) {
			k := servesMAP(admissionKit(t, &fakeAdmission{answer: addSleeper}, mapDocs("admissionregistration.k8s.io/"+version)), version)
			o := k.outcome(AdmissionPods())
			outcome{StatusFail, []string{
				"hook Job validate-values (pre-install,pre-upgrade): MutatingAdmissionPolicy add-sleeper (binding add-sleeper-everywhere) matches this pod and admission adds container sleeper, which is not a native sidecar",
				"never completes",
				"Deployment gitops-operator: admission: limits.memory 256Mi → 1Gi of manager, labels mutated added",
				"exclude the release's Jobs from MutatingAdmissionPolicy add-sleeper (binding add-sleeper-everywhere's matchResources",
			}}.expect(t, o.Result)
			if strings.Contains(o.Message, "raise-memory") {
				t.Errorf("a policy whose binding selects another namespace is named:\n%s", o.Message)
			}
			if o.Meta.Impact != ImpactInstallFails {
				t.Errorf("impact %s, want install-fails", o.Meta.Impact)
			}
		})
	}
	t.Run("not served", func(t *testing.T) {
		k := admissionKit(t, &fakeAdmission{answer: addSleeper}, mapDocs("admissionregistration.k8s.io/v1"))
		o := k.outcome(AdmissionPods())
		outcome{StatusFail, []string{"a mutating webhook or MutatingAdmissionPolicy matches this pod and admission adds container sleeper"}}.expect(t, o.Result)
		if strings.Contains(o.Message, "add-sleeper") {
			t.Errorf("a policy of an API the server does not serve is named:\n%s", o.Message)
		}
		for _, a := range k.Kube.Actions() {
			if a.GetResource().Resource == "mutatingadmissionpolicies" {
				t.Errorf("listed %s although not served", a.GetResource())
			}
		}
	})
}

// TestMutatingAdmissionPolicyForbidden: no right to list the policies:
// the pods are still judged, and the message says the policies were not
// read and why.
func TestMutatingAdmissionPolicyForbidden(t *testing.T) {
	k := servesMAP(admissionKit(t, &fakeAdmission{}, mapDocs("admissionregistration.k8s.io/v1")), "v1")
	env := k.env()
	k.Kube.PrependReactor("list", "mutatingadmissionpolicies", func(a k8sAction) (bool, runtimeObject, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicies"}, "", nil)
	})
	r := runThrough(t, AdmissionPods(), env)
	outcome{StatusPass, []string{"admits the pods of all 2 workloads", "MutatingAdmissionPolicies not read (no permission to list mutatingadmissionpolicies.admissionregistration.k8s.io)"}}.expect(t, r)
}

// TestResourceQuotaNamesMutation: the quota counts the limits the pods'
// dry runs came back with, and says which pod admission changed and which
// policy matches it.
func TestResourceQuotaNamesMutation(t *testing.T) {
	quota := "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: codefresh}\nspec:\n  hard: {limits.memory: 1Gi}\nstatus:\n  hard: {limits.memory: 1Gi}\n  used: {limits.memory: \"0\"}\n"
	k := servesMAP(admissionKit(t, &fakeAdmission{answer: addSleeper}, mapDocs("admissionregistration.k8s.io/v1"), quota), "v1")
	o := k.outcome(ResourceQuota())
	outcome{StatusFail, []string{
		"ResourceQuota compute: the release's pods needs limits.memory 2Gi, room 1Gi",
		"counted as admission changed them:",
		"Deployment gitops-operator: admission: limits.memory 256Mi → 1Gi of manager",
		"hook Job validate-values (pre-install,pre-upgrade): MutatingAdmissionPolicy add-sleeper (binding add-sleeper-everywhere) matches this pod; admission: added container sleeper (limits.memory 64Mi)",
	}}.expect(t, o.Result)
}

// labelConfigMaps is a MutatingAdmissionPolicy of ConfigMaps with its
// binding.
const labelConfigMaps = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: label-configmaps}
spec:
  matchConstraints:
    namespaceSelector: {}
    objectSelector: {}
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: "Object{}"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: label-configmaps-everywhere}
spec:
  policyName: label-configmaps
`

// labelTeam answers a ConfigMap's dry run with a label added.
func labelTeam(r dryRunRequest) (int, map[string]any, []string) {
	if !strings.HasSuffix(r.Path, "/configmaps") {
		return 0, nil, nil
	}
	md := r.Object["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	labels["team"] = "platform"
	md["labels"] = labels
	return 201, r.Object, nil
}

// TestMutatingAdmissionPolicyOfObjects: admission-objects passes, and
// says which of the release's objects admission changed (the labels it
// added, keys only) and the MutatingAdmissionPolicy and binding that
// match their create; no line for an object it left alone.
func TestMutatingAdmissionPolicyOfObjects(t *testing.T) {
	k := servesMAP(admissionKit(t, &fakeAdmission{answer: labelTeam}, labelConfigMaps), "v1")
	o := k.outcome(AdmissionObjects())
	outcome{StatusPass, []string{
		"admission changes",
		"MutatingAdmissionPolicy label-configmaps (binding label-configmaps-everywhere) matches its create; admission: labels team added",
	}}.expect(t, o.Result)
	for _, line := range strings.Split(o.Message, "\n") {
		if strings.Contains(line, "admission:") && !strings.HasPrefix(line, "ConfigMap ") {
			t.Errorf("an object admission left alone has a line: %s", line)
		}
	}
}
