package checks

import (
	"strings"
	"testing"
)

// TestAdmissionObjects: every object of the chart (the hooks included) is
// sent as a dry-run create as the identity that installs; a
// ValidatingAdmissionPolicy refusing the hook's ClusterRole fails naming
// the policy, its binding and the value that leaves the hook out; its
// warnings in Warn mode warn; a refusal for lack of rights alone skips,
// naming the permission.
func TestAdmissionObjects(t *testing.T) {
	vap := "clusterroles.rbac.authorization.k8s.io \"validate-values-cr\" is forbidden: ValidatingAdmissionPolicy 'restrict-wildcard-verbs' with binding 'restrict-wildcard-verbs-binding' denied request: Use of a wildcard ('*') in verbs is forbidden"
	cases := []struct {
		name   string
		answer func(r dryRunRequest) (int, map[string]any, []string)
		want   outcome
		impact Impact
	}{
		{"admitted", nil, outcome{StatusPass, []string{"admits all", "user ci-installer (groups platform)"}}, ""},
		{"a policy refuses the hook's ClusterRole", func(r dryRunRequest) (int, map[string]any, []string) {
			if strings.HasSuffix(r.Path, "/clusterroles") {
				return 403, refuse(403, "Forbidden", vap), nil
			}
			return 0, nil, nil
		}, outcome{StatusFail, []string{"ClusterRole validate-values-cr (hook pre-install,pre-upgrade)", "ValidatingAdmissionPolicy restrict-wildcard-verbs (binding restrict-wildcard-verbs-binding)",
			"installer.skipValidation=true", "validationActions"}}, ImpactInstallFails},
		{"a policy in Warn mode", func(r dryRunRequest) (int, map[string]any, []string) {
			if strings.HasSuffix(r.Path, "/clusterroles") {
				return 201, r.Object, []string{"Validation failed for ValidatingAdmissionPolicy 'restrict-wildcard-verbs' with binding 'b': wildcard verbs"}
			}
			return 0, nil, nil
		}, outcome{StatusWarn, []string{"ClusterRole validate-values-cr", "Validation failed for ValidatingAdmissionPolicy"}}, ""},
		{"no right to create", func(r dryRunRequest) (int, map[string]any, []string) {
			return 403, refuse(403, "Forbidden", `configmaps "x" is forbidden: User "ci-installer" cannot create resource "configmaps" in API group "" in the namespace "codefresh"`), nil
		}, outcome{StatusSkip, []string{"no permission to create configmaps in namespace codefresh", "authorized like the writes"}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeAdmission{answer: tc.answer}
			o := admissionKit(t, f).outcome(AdmissionObjects())
			tc.want.expect(t, o.Result)
			if tc.impact != "" && o.Meta.Impact != tc.impact {
				t.Errorf("impact %s, want %s", o.Meta.Impact, tc.impact)
			}
			for _, r := range f.requests {
				if r.Method != "GET" && r.DryRun != "All" && !strings.Contains(r.Path, "selfsubjectreviews") {
					t.Errorf("%s %s without dryRun=All", r.Method, r.Path)
				}
			}
		})
	}
	// Every object once, the hooks' too; the release's carry Helm's
	// ownership metadata.
	f := &fakeAdmission{}
	admissionKit(t, f).run(AdmissionObjects())
	seen := map[string]int{}
	for _, r := range f.requests {
		md, _ := r.Object["metadata"].(map[string]any)
		if name, _ := md["name"].(string); name != "" {
			seen[r.Path+"/"+name]++
			if ann, _ := md["annotations"].(map[string]any); name == "gitops-operator-config" && ann["meta.helm.sh/release-name"] != DefaultReleaseName {
				t.Errorf("ConfigMap sent without Helm's ownership annotations: %v", md)
			}
		}
	}
	for _, want := range []string{"/apis/rbac.authorization.k8s.io/v1/clusterroles/validate-values-cr", "/apis/batch/v1/namespaces/codefresh/jobs/validate-values",
		"/apis/apps/v1/namespaces/codefresh/deployments/gitops-operator", "/api/v1/namespaces/codefresh/configmaps/gitops-operator-config"} {
		if seen[want] != 1 {
			t.Errorf("%s sent %d times, want once (sent: %v)", want, seen[want], seen)
		}
	}
}

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

// TestAdmissionObjectsLeavesExistingObjects: an object of the release that
// already exists is not sent (Helm creates no object that exists:
// helm-ownership judges it) and is named as not judged; a hook whose name
// exists is still sent (Helm creates hooks whatever exists).
func TestAdmissionObjectsLeavesExistingObjects(t *testing.T) {
	f := &fakeAdmission{}
	existing := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gitops-operator-config\n  namespace: codefresh\n---\n" +
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: validate-values-cr\n"
	o := admissionKit(t, f, strings.Split(existing, "---\n")...).outcome(AdmissionObjects())
	outcome{StatusPass, []string{"not judged: ConfigMap gitops-operator-config", "exists already"}}.expect(t, o.Result)
	sent := map[string]bool{}
	for _, r := range f.requests {
		md, _ := r.Object["metadata"].(map[string]any)
		if name, _ := md["name"].(string); name != "" {
			sent[r.Path+"/"+name] = true
		}
	}
	if sent["/api/v1/namespaces/codefresh/configmaps/gitops-operator-config"] {
		t.Error("the existing ConfigMap was sent as a dry-run create")
	}
	for _, want := range []string{"/apis/rbac.authorization.k8s.io/v1/clusterroles/validate-values-cr", "/apis/apps/v1/namespaces/codefresh/deployments/gitops-operator"} {
		if !sent[want] {
			t.Errorf("%s not sent (sent: %v)", want, sent)
		}
	}
}
