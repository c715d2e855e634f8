package checks

import (
	"strings"
	"testing"
)

// TestAdmissionPods: the pod of each workload (the hook Job's included) is
// dry-run once, never once per replica; PodSecurity refusing the hook's pod
// fails, impact install-fails, naming the hook, the level and the label a
// hint can give; a refused runtime pod alone is runtime-breaks when the run
// does not know whether Helm waits (TestAdmissionPodsFollowHelmWait); a mutating
// webhook adding a container to the hook Job's pod fails (the Job never
// completes) while a native sidecar does not; warnings warn.
func TestAdmissionPods(t *testing.T) {
	psa := `pods "validate-values-x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "validate-values" must set securityContext.allowPrivilegeEscalation=false), runAsNonRoot != true (pod or container "validate-values" must set securityContext.runAsNonRoot=true)`
	withContainer := func(r dryRunRequest, init bool) map[string]any {
		spec := r.Object["spec"].(map[string]any)
		c := map[string]any{"name": "istio-proxy", "image": "istio/proxyv2"}
		if init {
			c["restartPolicy"] = "Always"
			spec["initContainers"] = append(asList(spec["initContainers"]), c)
		} else {
			spec["containers"] = append(asList(spec["containers"]), c)
		}
		return r.Object
	}
	cases := []struct {
		name   string
		answer func(r dryRunRequest) (int, map[string]any, []string)
		want   outcome
		impact Impact
	}{
		{"admitted", nil, outcome{StatusPass, []string{"admits the pods of all 2 workloads", "ServiceAccount default"}}, ""},
		{"PodSecurity refuses the hook's pod", func(r dryRunRequest) (int, map[string]any, []string) {
			if strings.HasPrefix(podOfRequest(r), "validate-values-") {
				return 403, refuse(403, "Forbidden", psa), nil
			}
			return 0, nil, nil
		}, outcome{StatusFail, []string{"hook Job validate-values (pre-install,pre-upgrade): PodSecurity restricted:latest", "allowPrivilegeEscalation",
			"helm waits for the hook Jobs until --timeout", "installer.skipValidation=true"}}, ImpactInstallFails},
		{"a runtime pod refused", func(r dryRunRequest) (int, map[string]any, []string) {
			if strings.HasPrefix(podOfRequest(r), "gitops-operator-") {
				return 403, refuse(403, "Forbidden", `pods "gitops-operator-x" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=10, limited: pods=10`), nil
			}
			return 0, nil, nil
		}, outcome{StatusFail, []string{"Deployment gitops-operator: ResourceQuota compute", "without --wait Helm reports success and these workloads have no pods", "with --wait the install fails"}}, ImpactRuntimeBreaks},
		{"a mutating webhook adds a container to the Job's pod", func(r dryRunRequest) (int, map[string]any, []string) {
			if podOfRequest(r) != "" {
				return 201, withContainer(r, false), nil
			}
			return 0, nil, nil
		}, outcome{StatusFail, []string{"hook Job validate-values", "adds container istio-proxy", "never completes", "native sidecar"}}, ImpactInstallFails},
		{"a native sidecar ends with the pod", func(r dryRunRequest) (int, map[string]any, []string) {
			if podOfRequest(r) != "" {
				return 201, withContainer(r, true), nil
			}
			return 0, nil, nil
		}, outcome{StatusPass, []string{"admits the pods"}}, ""},
		{"PodSecurity warns", func(r dryRunRequest) (int, map[string]any, []string) {
			if podOfRequest(r) != "" {
				return 201, r.Object, []string{`would violate PodSecurity "restricted:latest": runAsNonRoot != true`}
			}
			return 0, nil, nil
		}, outcome{StatusWarn, []string{`would violate PodSecurity "restricted:latest"`, "every pod of the release meets baseline"}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeAdmission{answer: tc.answer}
			o := admissionKit(t, f).outcome(AdmissionPods())
			tc.want.expect(t, o.Result)
			if tc.impact != "" && o.Meta.Impact != tc.impact {
				t.Errorf("impact %s, want %s", o.Meta.Impact, tc.impact)
			}
			pods := 0
			for _, r := range f.requests {
				if podOfRequest(r) != "" {
					pods++
				}
			}
			if pods != 2 {
				t.Errorf("%d pods sent, want 2 (one per workload, never one per replica)", pods)
			}
		})
	}
}

// TestAdmissionPodsNamespaceToCome: the namespace does not exist yet, so no
// pod is sent: PodSecurity is evaluated here for the labels it will get,
// and the message says what could not be judged.
func TestAdmissionPodsNamespaceToCome(t *testing.T) {
	f := &fakeAdmission{}
	k := newKit(t).withChart(admissionChart(t)).withREST(f.serve(t))
	k.serves("v1", metaResource("pods", "Pod", true), metaResource("namespaces", "Namespace", false))
	k.serves("batch/v1", metaResource("jobs", "Job", true))
	k.serves("apps/v1", metaResource("deployments", "Deployment", true))
	r := k.run(AdmissionPods())
	outcome{StatusPass, []string{"evaluated here with k8s.io/pod-security-admission", "kubectl create namespace codefresh first", "invisible to a client"}}.expect(t, r)
	for _, req := range f.requests {
		if podOfRequest(req) != "" {
			t.Errorf("a pod was sent to a namespace that does not exist: %s", req.Path)
		}
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// TestAdmissionPodsFollowHelmWait: a refused runtime pod's impact follows
// whether Helm waits (--helm-wait): with --wait the install fails after its
// --timeout (install-fails), without it Helm reports success
// (runtime-breaks), and not told the message says both, runtime-breaks. A
// refused hook pod fails the install whatever --wait says.
func TestAdmissionPodsFollowHelmWait(t *testing.T) {
	refuse403 := func(prefix, msg string) func(r dryRunRequest) (int, map[string]any, []string) {
		return func(r dryRunRequest) (int, map[string]any, []string) {
			if strings.HasPrefix(podOfRequest(r), prefix) {
				return 403, refuse(403, "Forbidden", msg), nil
			}
			return 0, nil, nil
		}
	}
	limit := refuse403("gitops-operator-", `pods "gitops-operator-x" is forbidden: maximum memory usage per Container is 768Mi, but limit is 1Gi`)
	hook := refuse403("validate-values-", `pods "validate-values-x" is forbidden: maximum memory usage per Container is 768Mi, but limit is 1Gi`)
	cases := []struct {
		name    string
		wait    HelmWait
		answer  func(r dryRunRequest) (int, map[string]any, []string)
		want    []string
		notWant []string
		impact  Impact
	}{
		{"--helm-wait=true", HelmWaitOn, limit,
			[]string{"Deployment gitops-operator", "helm install --wait fails after its --timeout", "the refused pods are never created", "FailedCreate"},
			[]string{"reports success"}, ImpactInstallFails},
		{"--helm-wait=false", HelmWaitOff, limit,
			[]string{"Deployment gitops-operator", "helm reports success and these workloads have no pods", "FailedCreate"},
			[]string{"--timeout"}, ImpactRuntimeBreaks},
		{"not told", HelmWaitUnknown, limit,
			[]string{"without --wait Helm reports success and these workloads have no pods", "with --wait the install fails after its --timeout", "--helm-wait"},
			nil, ImpactRuntimeBreaks},
		{"a hook's pod, without --wait", HelmWaitOff, hook,
			[]string{"hook Job validate-values", "helm waits for the hook Jobs until --timeout and fails"},
			[]string{"reports success"}, ImpactInstallFails},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := admissionKit(t, &fakeAdmission{answer: tc.answer}).waits(tc.wait).outcome(AdmissionPods())
			outcome{StatusFail, tc.want}.expect(t, o.Result)
			for _, w := range tc.notWant {
				if strings.Contains(o.Message, w) {
					t.Errorf("the message says %q:\n%s", w, o.Message)
				}
			}
			if o.Meta.Impact != tc.impact {
				t.Errorf("impact %s, want %s", o.Meta.Impact, tc.impact)
			}
		})
	}
}

// TestPodless: refused runtime pods before an upgrade follow --wait as
// before an install, with upgrade-fails and the upgrade named.
func TestPodless(t *testing.T) {
	for _, tc := range []struct {
		mode   Mode
		wait   HelmWait
		impact Impact
		want   string
	}{
		{ModePre, HelmWaitOn, ImpactInstallFails, "helm install --wait fails after its --timeout"},
		{ModeUpgrade, HelmWaitOn, ImpactUpgradeFails, "helm upgrade --wait fails after its --timeout"},
		{ModeUpgrade, HelmWaitOff, ImpactRuntimeBreaks, "helm reports success and X ("},
		{ModeUpgrade, HelmWaitUnknown, ImpactRuntimeBreaks, "without --wait Helm reports success and X (their controllers' FailedCreate events repeat the refusal); with --wait the upgrade fails after its --timeout"},
		{ModePre, HelmWaitUnknown, ImpactRuntimeBreaks, "with --wait the install fails after its --timeout"},
	} {
		impact, msg := podless(&Env{Mode: tc.mode, HelmWait: tc.wait}, "X")
		if impact != tc.impact || !strings.Contains(msg, tc.want) {
			t.Errorf("%s, wait %d: %s %q, want %s and %q", tc.mode.Phase(), tc.wait, impact, msg, tc.impact, tc.want)
		}
	}
}
