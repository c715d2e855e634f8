package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// The admission scenarios of the real gitops-runtime chart 0.30.0 on a
// live cluster (scheduler, controllers, kwok; the API server's own
// PodSecurity, ResourceQuota, LimitRanger and ValidatingAdmissionPolicy
// plugins and its webhook dispatchers): each layer refusing, the plugin's
// admission checks (replayed from their bundle) against real `helm
// install` with its hooks, `--wait` and a short `--timeout`, with the
// FailedCreate events read back; then every layer in the form that lets
// Helm install; then `helm upgrade` under PodSecurity. Helm 3 and Helm 4
// each have a cluster of their own and run at once: the refusal scenarios
// are shared out between them (each install takes a minute of the two
// cores, and which client sends a create does not change what admission
// answers), and both run the last two, the install that goes through and
// the upgrade (upgrade verdicts are held against Helm 3 and 4). The audit
// log shows that every write of the plugin was a dry run.

// admissionTimeout bounds a helm install or upgrade the plugin expects to
// fail: the hook Job whose pod is refused never completes.
const admissionTimeout = "20s"

func TestAdmissionAgreesWithHelm(t *testing.T) {
	tc.Parallel(t, tc.Longest, tc.Slots(2))
	helms := []struct{ major, bin string }{{"3", tc.HelmBinary(t)}, {"4", tc.Helm4Binary(t)}}
	clusters := tc.StartAuditedN(t, len(helms))
	for i, h := range helms {
		c := clusters[i]
		t.Run("Helm "+h.major, func(t *testing.T) {
			t.Parallel()
			admissionScenarios(t, c, h.bin, h.major, i)
		})
	}
}

// Which cluster runs a scenario: the Helm 3 one, the Helm 4 one, or both.
const (
	onHelm3 = iota
	onHelm4
	onBoth
)

// admissionScenarios runs on c, with the Helm client helmBin (major), the
// scenarios of share (onHelm3 or onHelm4) and those of onBoth.
func admissionScenarios(t *testing.T, c *tc.Cluster, helmBin, major string, share int) {
	c.AddNode(t, tc.NodeSpec{Name: "worker-1", CPU: "8", Memory: "16Gi"})
	c.AddNode(t, tc.NodeSpec{Name: "worker-2", CPU: "8", Memory: "16Gi"})
	values := runtimeValues(t, "")
	chart := fixtureChart(t)
	ns := runtimeNS
	plugin := func(t *testing.T, args ...string) (tc.Result, reporters.Document) {
		t.Helper()
		all := append([]string{"--only", admissionChecks, "--chart", chart, "-f", values, "-n", ns, "--release-name", runtimeRelease, "--helm-major", major}, args...)
		return c.RunJSONReplayed(t, nil, all...)
	}
	// install runs helm install with its hooks; wait adds --wait (every
	// workload Available), else Helm waits for the hooks alone.
	install := func(t *testing.T, wantOK bool, wait ...bool) string {
		t.Helper()
		timeout := admissionTimeout
		if wantOK {
			timeout = "3m"
		}
		args := []string{"install", runtimeRelease, chart, "-n", ns, "--create-namespace", "-f", values, "--timeout", timeout}
		if len(wait) == 0 || wait[0] {
			args = append(args, "--wait")
		}
		start := time.Now()
		out, code := helmCmd(t, c, helmBin, args...)
		t.Logf("helm %s install: exit %d in %s", major, code, time.Since(start).Round(100*time.Millisecond))
		if (code == 0) != wantOK {
			t.Errorf("helm install: exit %d, want ok=%v\n%s", code, wantOK, out)
		}
		return out
	}
	// uninstall removes the release and what a failed install left (its
	// hook Jobs, still retrying), so that the next scenario starts clean;
	// a scenario registers it first (t.Cleanup), so it runs however the
	// scenario ends.
	uninstall := func(t *testing.T) {
		_, _ = helmCmd(t, c, helmBin, "uninstall", runtimeRelease, "-n", ns, "--no-hooks", "--wait", "--timeout", "60s")
		_ = exec.Command("kubectl", "--kubeconfig", c.AdminKubeconfig(), "delete", "jobs,events", "--all", "-n", ns, "--wait=true").Run()
	}
	label := func(t *testing.T, labels ...string) {
		t.Helper()
		c.Kubectl(t, append([]string{"label", "namespace", ns, "--overwrite"}, labels...)...)
	}
	agreeInstall := func(t *testing.T, res tc.Result, helmOK bool) {
		t.Helper()
		if (res.Code == cli.ExitOK) != helmOK {
			t.Errorf("plugin exit %d, helm install ok=%v\n%s", res.Code, helmOK, res.Stdout)
		}
	}
	// scenario runs f as a subtest where on says (onHelm3, onHelm4 or
	// onBoth); the other cluster's scenarios are logged, not skipped.
	scenario := func(name string, on int, f func(t *testing.T)) {
		if on != onBoth && on != share {
			t.Logf("%q runs with the other Helm major", name)
			return
		}
		t.Run(name, f)
	}

	if share != onHelm3 {
		// The namespace is created first, as that scenario's hint says.
		c.Kubectl(t, "create", "namespace", ns)
	}
	scenario("a namespace that does not exist yet", onHelm3, func(t *testing.T) {
		res, doc := plugin(t)
		wantStatus(t, doc, "admission-objects", "pass", "namespace codefresh does not exist yet", "kubectl create namespace codefresh first")
		wantStatus(t, doc, "admission-pods", "pass", "evaluated here with k8s.io/pod-security-admission")
		wantStatus(t, doc, "resource-quota", "pass", "does not exist yet")
		agreeInstall(t, res, true)
		t.Cleanup(func() { uninstall(t) })
		// Its hooks run and every object is created (the workloads'
		// pods are the last scenario's --wait).
		install(t, true, false)
	})

	// Dry runs are authorized like the writes they stand for: judged as
	// an identity (--as) that may create nothing, the checks skip naming
	// the permission, never guess.
	scenario("as an identity without the rights to install", onHelm4, func(t *testing.T) {
		_, doc := plugin(t, "--as", "e2e-no-rights")
		wantStatus(t, doc, "admission-objects", "skip", "no permission to create", "as user e2e-no-rights")
		wantStatus(t, doc, "admission-pods", "skip", "no permission to create pods in namespace codefresh")
	})

	scenario("PodSecurity enforces restricted", onHelm4, func(t *testing.T) {
		t.Cleanup(func() { uninstall(t) })
		label(t, "pod-security.kubernetes.io/enforce=restricted")
		t.Cleanup(func() {
			label(t, "pod-security.kubernetes.io/enforce-")
			waitAdmitted(t, c, ns, "enforce label removed", admitted)
		})
		waitAdmitted(t, c, ns, "enforce=restricted in force", refusedWith("violates PodSecurity"))
		res, doc := plugin(t)
		pods := wantStatus(t, doc, "admission-pods", "fail", "hook Job validate-values", `PodSecurity restricted:latest`,
			"installer.skipValidation=true", "pod-security.kubernetes.io/enforce=baseline")
		if pods.Impact != "install-fails" {
			t.Errorf("admission-pods impact %s, want install-fails", pods.Impact)
		}
		agreeInstall(t, res, false)
		out := install(t, false)
		ev := waitFailedCreate(t, c, ns, `violates PodSecurity "restricted:latest"`)
		t.Logf("helm: %s\nevent: %s", lastLine(out), ev)
		// --post names the same policy for the hook Job that has no pod.
		pr, pd := c.RunJSON(t, nil, "--post", "--only", "validate-values-job", "-n", ns)
		t.Logf("--post:\n%s", pr.Stdout)
		wantStatus(t, pd, "validate-values-job", "fail", "PodSecurity restricted:latest")
	})

	scenario("a ResourceQuota without LimitRange defaults", onHelm4, func(t *testing.T) {
		t.Cleanup(func() { uninstall(t) })
		quota(t, c, ns)
		t.Cleanup(func() { c.Kubectl(t, "delete", "resourcequota", "compute", "-n", ns) })
		waitAdmitted(t, c, ns, "the quota in force", refusedWith("must specify"))
		res, doc := plugin(t)
		wantStatus(t, doc, "admission-pods", "fail", "ResourceQuota compute", "must specify", "LimitRange")
		agreeInstall(t, res, false)
		out := install(t, false)
		ev := waitFailedCreate(t, c, ns, "failed quota: compute: must specify")
		t.Logf("helm: %s\nevent: %s", lastLine(out), ev)
	})

	scenario("a ValidatingAdmissionPolicy denying wildcard verbs", onHelm3, func(t *testing.T) {
		t.Cleanup(func() { uninstall(t) })
		wildcardPolicy(t, c, "Deny")
		res, doc := plugin(t)
		objs := wantStatus(t, doc, "admission-objects", "fail", "ClusterRole validate-values-cr", "ValidatingAdmissionPolicy e2e-restrict-wildcard-verbs (binding e2e-restrict-wildcard-verbs)",
			"installer.skipValidation=true")
		if objs.Impact != "install-fails" {
			t.Errorf("admission-objects impact %s", objs.Impact)
		}
		agreeInstall(t, res, false)
		out := install(t, false)
		if !strings.Contains(out, "e2e-restrict-wildcard-verbs") {
			t.Errorf("helm install did not meet the policy:\n%s", out)
		}
	})

	scenario("a validating webhook that denies the pods", onHelm3, func(t *testing.T) {
		t.Cleanup(func() { uninstall(t) })
		ws := serveWebhook(t, gatekeeperDeny)
		validatingWebhook(t, c, "validation.gatekeeper.sh", ns, urlClient(ws, "/v1/admit"), admissionregistrationv1.Fail)
		waitAdmitted(t, c, ns, "the webhook in force", refusedWith("psp-pods-allowed-user-ranges"))
		res, doc := plugin(t)
		wantStatus(t, doc, "admission-pods", "fail", "Gatekeeper constraint psp-pods-allowed-user-ranges", "excludedNamespaces")
		wantStatus(t, doc, "admission-webhooks", "pass", "validation.gatekeeper.sh")
		agreeInstall(t, res, false)
		install(t, false)
		waitFailedCreate(t, c, ns, "psp-pods-allowed-user-ranges")
	})

	// A webhook with no ready endpoint that fails closed, on the pods of
	// every namespace, whose matchConditions (CEL, evaluated by the API
	// server's own matcher in the plugin) take in the runtime's namespace
	// and the controllers' and Helm's requests.
	scenario("a validating webhook with no ready endpoint that fails closed", onHelm3, func(t *testing.T) {
		t.Cleanup(func() { uninstall(t) })
		validatingWebhook(t, c, "policy.e2e.example", ns, endpointlessService(t, c, "policy-system", "policy-webhook"), admissionregistrationv1.Fail,
			admissionregistrationv1.MatchCondition{Name: "the-runtime", Expression: "request.namespace == '" + ns + "'"},
			admissionregistrationv1.MatchCondition{Name: "has-containers", Expression: "size(object.spec.containers) > 0"})
		waitAdmitted(t, c, ns, "the webhook in force", refusedWith("failed calling webhook"))
		res, doc := plugin(t)
		webhooks := wantStatus(t, doc, "admission-webhooks", "fail", "policy.e2e.example", "no ready endpoint", "hook Job validate-values", "and its 2 matchConditions are true")
		t.Logf("admission-webhooks: %s", webhooks.Message)
		if webhooks.Impact != "install-fails" {
			t.Errorf("admission-webhooks impact %s, want install-fails", webhooks.Impact)
		}
		wantStatus(t, doc, "admission-pods", "fail", "webhook policy.e2e.example (unreachable)")
		agreeInstall(t, res, false)
		install(t, false)
		waitFailedCreate(t, c, ns, `failed calling webhook "policy.e2e.example"`)
	})

	// Its twin whose matchConditions leave the runtime's namespace out:
	// the API server never calls it for the release, Helm installs, and
	// the plugin says why the webhook does not judge the release.
	scenario("a webhook with no ready endpoint whose matchConditions exclude the runtime's namespace", onHelm4, func(t *testing.T) {
		t.Cleanup(func() { uninstall(t) })
		validatingWebhook(t, c, "elsewhere.e2e.example", ns, endpointlessService(t, c, "policy-system", "elsewhere-webhook"), admissionregistrationv1.Fail,
			admissionregistrationv1.MatchCondition{Name: "not-the-runtime", Expression: "request.namespace != '" + ns + "'"})
		waitAdmitted(t, c, "policy-system", "the webhook in force elsewhere", refusedWith(`failed calling webhook "elsewhere.e2e.example"`))
		waitAdmitted(t, c, ns, "the runtime's namespace left out", admitted)
		res, doc := plugin(t)
		webhooks := wantStatus(t, doc, "admission-webhooks", "pass", "elsewhere.e2e.example", "does not judge the release", `matchCondition "not-the-runtime" is false`)
		t.Logf("admission-webhooks: %s", webhooks.Message)
		wantStatus(t, doc, "admission-pods", "pass")
		if res.Code != cli.ExitOK {
			t.Errorf("plugin exit %d, want %d\n%s", res.Code, cli.ExitOK, res.Stdout)
		}
		agreeInstall(t, res, true)
		install(t, true, false)
	})

	scenario("a mutating webhook that adds a container to every pod", onHelm4, func(t *testing.T) {
		t.Cleanup(func() { uninstall(t) })
		ws := serveWebhook(t, addSidecar)
		mutatingWebhook(t, c, "inject.mesh.e2e.example", ns, urlClient(ws, "/inject"))
		waitAdmitted(t, c, ns, "the webhook in force", func(p *corev1.Pod, err error) bool { return err == nil && len(p.Spec.Containers) == 2 })
		res, doc := plugin(t)
		wantStatus(t, doc, "admission-pods", "fail", "hook Job validate-values", "mutating webhook inject.mesh.e2e.example matches this pod and admission adds container e2e-proxy", "never completes")
		agreeInstall(t, res, false)
		out := install(t, false)
		t.Logf("helm: %s", lastLine(out))
	})

	// A LimitRange max that two runtime containers exceed (the memory
	// limit of sealed-secrets-controller and cap-app-proxy is 1Gi; the
	// hooks' containers have none and get the default): their pods are
	// refused, the hooks' are not. The plugin's verdict follows Helm's
	// --wait: with --helm-wait, install-fails, and helm install --wait
	// fails after its --timeout; its bundle replayed with
	// --helm-wait=false, runtime-breaks, and helm install without --wait
	// succeeds, those Deployments without pods.
	scenario("a LimitRange max some runtime containers exceed", onHelm3, func(t *testing.T) {
		t.Cleanup(func() { uninstall(t) })
		maxLimitRange(t, c, ns)
		t.Cleanup(func() { c.Kubectl(t, "delete", "limitrange", "max", "-n", ns) })
		waitAdmitted(t, c, ns, "the LimitRange max in force", func(p *corev1.Pod, err error) bool {
			return err == nil && p.Spec.Containers[0].Resources.Limits.Memory().String() == "512Mi"
		})
		refused := []string{"Deployment cap-app-proxy", "Deployment sealed-secrets-controller", "maximum memory usage per Container is 768Mi"}
		// Recorded with --helm-wait, and replayed as recorded (the same
		// report) and with --helm-wait=false, offline.
		bundle := filepath.Join(t.TempDir(), "limits.tgz")
		res, doc := c.RunJSON(t, nil, "--only", admissionChecks, "--chart", chart, "-f", values, "-n", ns, "--release-name", runtimeRelease, "--helm-major", major,
			"--helm-wait", "--bundle", bundle)
		pods := wantStatus(t, doc, "admission-pods", "fail", append(refused, "helm install --wait fails after its --timeout")...)
		// (Lines naming what admission changed in a hook's pod, LimitRanger's
		// defaults, are no refusal.)
		if pods.Impact != "install-fails" || strings.Contains(pods.Message, "helm waits for the hook Jobs") || strings.Contains(pods.Message, "reports success") {
			t.Errorf("admission-pods with --helm-wait: impact %s, want install-fails, and only the runtime's pods refused:\n%s", pods.Impact, pods.Message)
		}
		agreeInstall(t, res, false)
		offline := []string{"KUBECONFIG=" + filepath.Join(t.TempDir(), "no-kubeconfig")}
		tc.SameReport(t, doc, tc.Run(t, offline, "replay", bundle, "-o", "json").JSON(t))
		doc = tc.Run(t, offline, "replay", bundle, "--helm-wait=false", "-o", "json").JSON(t)
		pods = wantStatus(t, doc, "admission-pods", "fail", append(refused, "helm reports success and these workloads have no pods")...)
		if pods.Impact != "runtime-breaks" || strings.Contains(pods.Message, "--timeout") {
			t.Errorf("admission-pods replayed with --helm-wait=false: impact %s, want runtime-breaks, and no --timeout:\n%s", pods.Impact, pods.Message)
		}
		// helm install --wait: the hooks run, then Helm waits for the
		// Deployments that never get their pods, until --timeout.
		out := install(t, false)
		if strings.Contains(out, "pre-install") {
			t.Errorf("helm install --wait failed in a hook, not waiting for the Deployments:\n%s", out)
		}
		ev := waitFailedCreate(t, c, ns, "maximum memory usage per Container is 768Mi")
		t.Logf("helm --wait: %s\nevent: %s", lastLine(out), ev)
		uninstall(t)
		// Without --wait Helm reports success; the two Deployments have
		// no pods, their ReplicaSets' creates refused.
		install(t, true, false)
		waitFailedCreate(t, c, ns, "maximum memory usage per Container is 768Mi")
		for _, d := range []string{"cap-app-proxy", "sealed-secrets-controller"} {
			dep, err := c.Kube.AppsV1().Deployments(ns).Get(bg, d, metav1.GetOptions{})
			if err != nil || dep.Status.Replicas != 0 {
				t.Errorf("Deployment %s after helm install without --wait: %v, %d pods, want none", d, err, replicasOf(dep))
			}
		}
	})

	// Every layer in the form that lets Helm install: PodSecurity warn and
	// audit only, a LimitRange giving the quota's defaults, the policy in
	// Warn mode, a webhook that admits, and one with no endpoint that
	// fails open.
	scenario("every layer in the form Helm installs through", onBoth, func(t *testing.T) {
		label(t, "pod-security.kubernetes.io/warn=restricted", "pod-security.kubernetes.io/audit=restricted")
		quota(t, c, ns)
		limitRange(t, c, ns)
		wildcardPolicy(t, c, "Warn")
		ws := serveWebhook(t, allow)
		validatingWebhook(t, c, "admit.e2e.example", ns, urlClient(ws, "/admit"), admissionregistrationv1.Fail)
		validatingWebhook(t, c, "optional.e2e.example", ns, endpointlessService(t, c, "policy-system", "optional-webhook"), admissionregistrationv1.Ignore)
		waitAdmitted(t, c, ns, "the LimitRange's defaults in force", func(p *corev1.Pod, err error) bool {
			return err == nil && !p.Spec.Containers[0].Resources.Limits.Cpu().IsZero()
		})
		waitPolicy(t, c, false)
		res, doc := plugin(t)
		wantStatus(t, doc, "admission-objects", "warn", `would violate PodSecurity "restricted:latest"`, "e2e-restrict-wildcard-verbs")
		wantStatus(t, doc, "admission-pods", "warn", `would violate PodSecurity "restricted:latest"`)
		wantStatus(t, doc, "resource-quota", "pass", "ResourceQuota")
		wantStatus(t, doc, "admission-webhooks", "warn", "optional.e2e.example", "failurePolicy Ignore")
		agreeInstall(t, res, true)
		install(t, true)
	})

	// The release is deployed: an upgrade into a namespace that now
	// enforces restricted fails in its pre-upgrade hook; labelled as the
	// hint says, it goes through.
	scenario("helm upgrade under PodSecurity", onBoth, func(t *testing.T) {
		label(t, "pod-security.kubernetes.io/enforce=restricted")
		waitAdmitted(t, c, ns, "enforce=restricted in force", refusedWith("violates PodSecurity"))
		res, doc := plugin(t, "--upgrade")
		pods := wantStatus(t, doc, "admission-pods", "fail", "hook Job validate-values (pre-install,pre-upgrade)", "PodSecurity restricted:latest", "pod-security.kubernetes.io/enforce=baseline")
		if pods.Impact != "upgrade-fails" {
			t.Errorf("admission-pods impact %s, want upgrade-fails", pods.Impact)
		}
		out, code := helmCmd(t, c, helmBin, "upgrade", runtimeRelease, chart, "-n", ns, "-f", values, "--wait", "--timeout", admissionTimeout)
		if code == 0 {
			t.Errorf("helm upgrade succeeded under enforce=restricted:\n%s", out)
		}
		agreeUpgrade(t, "enforce restricted", res, out, code == 0)
		waitFailedCreate(t, c, ns, `violates PodSecurity "restricted:latest"`)
		c.Kubectl(t, "delete", "jobs", "--all", "-n", ns)
		label(t, "pod-security.kubernetes.io/enforce=baseline")
		waitAdmitted(t, c, ns, "enforce=baseline in force", admitted)
		res, doc = plugin(t, "--upgrade")
		wantStatus(t, doc, "admission-pods", "warn", `would violate PodSecurity "restricted:latest"`)
		// The same chart and values: the hooks run, no pod template changes.
		out, code = helmCmd(t, c, helmBin, "upgrade", runtimeRelease, chart, "-n", ns, "-f", values, "--timeout", "3m")
		agreeUpgrade(t, "enforce baseline", res, out, code == 0)
	})

	if n := auditedDryRuns(t, c); n < 50 {
		t.Errorf("the audit log holds %d writes of the plugin: the dry runs did not reach the API server", n)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// quota creates ResourceQuota compute (cpu and memory requests and limits,
// room for the release) in ns.
func quota(t *testing.T, c *tc.Cluster, ns string) {
	t.Helper()
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "compute", Namespace: ns}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		corev1.ResourceRequestsCPU: resource.MustParse("20"), corev1.ResourceRequestsMemory: resource.MustParse("40Gi"),
		corev1.ResourceLimitsCPU: resource.MustParse("40"), corev1.ResourceLimitsMemory: resource.MustParse("80Gi"),
	}}}
	if _, err := c.Kube.CoreV1().ResourceQuotas(ns).Create(bg, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The quota controller computes status.used; until then the quota
	// admission refuses every pod ("status unknown").
	waitFor(t, 30*time.Second, "quota status", func() bool {
		got, err := c.Kube.CoreV1().ResourceQuotas(ns).Get(bg, "compute", metav1.GetOptions{})
		return err == nil && got.Status.Hard != nil
	})
}

// limitRange gives every container of ns default requests and limits.
func limitRange(t *testing.T, c *tc.Cluster, ns string) {
	t.Helper()
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: ns}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type:           corev1.LimitTypeContainer,
		Default:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	}}}}
	if _, err := c.Kube.CoreV1().LimitRanges(ns).Create(bg, lr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// maxLimitRange caps every container of ns at 768Mi of memory (LimitRange
// max), with a default limit of 512Mi for containers that set none.
func maxLimitRange(t *testing.T, c *tc.Cluster, ns string) {
	t.Helper()
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "max", Namespace: ns}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type:           corev1.LimitTypeContainer,
		Max:            corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("768Mi")},
		Default:        corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
		DefaultRequest: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
	}}}}
	if _, err := c.Kube.CoreV1().LimitRanges(ns).Create(bg, lr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// replicasOf is d's status.replicas, 0 for no Deployment.
func replicasOf(d *appsv1.Deployment) int32 {
	if d == nil {
		return 0
	}
	return d.Status.Replicas
}

// wildcardPolicy creates the ValidatingAdmissionPolicy (and its binding,
// with validation action action) that refuses Roles and ClusterRoles
// granting the verb "*" (Kyverno's restrict-wildcard-verbs, CIS
// "minimize wildcard use in Roles and ClusterRoles"), replacing one an
// earlier scenario made.
func wildcardPolicy(t *testing.T, c *tc.Cluster, action string) {
	t.Helper()
	name := "e2e-restrict-wildcard-verbs"
	c.Kubectl(t, "delete", "validatingadmissionpolicy,validatingadmissionpolicybinding", name, "--ignore-not-found")
	fail := admissionregistrationv1.Fail
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"rbac.authorization.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"roles", "clusterroles"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: `!has(object.rules) || object.rules.all(r, !r.verbs.exists(v, v == "*"))`,
				Message:    "Use of a wildcard ('*') in verbs is forbidden",
			}},
		},
	}
	if _, err := c.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(bg, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.ValidationAction(action)}},
	}
	if action == "Warn" {
		binding.Spec.ValidationActions = append(binding.Spec.ValidationActions, admissionregistrationv1.Audit)
	}
	if _, err := c.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(bg, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(bg, name, metav1.DeleteOptions{})
		_ = c.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(bg, name, metav1.DeleteOptions{})
	})
	waitPolicy(t, c, action == "Deny")
}
