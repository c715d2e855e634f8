package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// installRuntime runs `helm install` of the fixture chart (hooks included).
func installRuntime(t *testing.T, c *testcluster.Cluster, values string, extra ...string) (string, error) {
	t.Helper()
	args := append([]string{"install", runtimeRelease, chartLine(t, "chart"),
		"-n", runtimeNS, "--create-namespace", "-f", values}, extra...)
	start := time.Now()
	out, err := helm(t, c, args...)
	t.Logf("helm install %s: %s (%v)", strings.Join(extra, " "), time.Since(start).Round(100*time.Millisecond), err)
	return out, err
}

// onlyWarn asserts that every check passed or was skipped except the ids in
// warn, which warned.
func onlyWarn(t *testing.T, doc reporters.Document, warn ...string) {
	t.Helper()
	for _, ch := range doc.Checks {
		want := "pass"
		for _, w := range warn {
			if ch.ID == w {
				want = "warn"
			}
		}
		if ch.Status != want && !(want == "pass" && ch.Status == "skip") {
			t.Errorf("%s = %s (%s), want %s", ch.ID, ch.Status, ch.Message, want)
		}
	}
}

// TestRuntimeChartHealthyThenCrashLoop: room for the runtime, `helm install
// --wait` with hooks succeeds, `--post` passes (codefresh-token, which only
// the platform creates, is the one warning, then the test creates it); a
// rollout of cap-app-proxy that crash-loops is reported with its waiting
// reason and restarts.
func TestRuntimeChartHealthyThenCrashLoop(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.Start(t)
	c.AddNode(t, testcluster.NodeSpec{Name: "worker-1", CPU: "4", Memory: "8Gi"})
	c.AddNode(t, testcluster.NodeSpec{Name: "worker-2", CPU: "4", Memory: "8Gi"})
	// Room for it, and a pod already bound: runtime-schedulable passes, and
	// (below) the scheduler places every runtime pod.
	c.CreateNamespace(t, "busy")
	if _, err := c.Kube.AppsV1().Deployments("busy").Create(bg, testDeployment("busy", "busy", 1, "3", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "busy pod bound", func() bool {
		d, err := c.Kube.AppsV1().Deployments("busy").Get(bg, "busy", metav1.GetOptions{})
		return err == nil && d.Status.AvailableReplicas == 1
	})
	res, doc := c.RunJSONReplayed(t, nil, "--only=runtime-schedulable")
	wantCode(t, res, 0)
	wantStatus(t, doc, "runtime-schedulable", "pass", "every runtime pod fits on the 2 Ready, schedulable nodes", "chart 0.30.0 defaults")

	if out, err := installRuntime(t, c, runtimeValues(t, ""), "--wait", "--timeout", "3m"); err != nil {
		t.Fatalf("helm install --wait: %v\n%s", err, out)
	}
	if pending := pendingPods(t, c); len(pending) != 0 {
		t.Fatalf("pods Pending after helm install --wait: %v", pending)
	}
	res, doc = postReplayed(t, c)
	t.Logf("--post after install:\n%s", res.Stdout)
	wantCode(t, res, 0)
	onlyWarn(t, doc, "runtime-workloads")
	wantStatus(t, doc, "runtime-workloads", "warn", "Secret codefresh-token is missing")
	wantStatus(t, doc, "release-deployed", "pass")

	c.Kubectl(t, "create", "secret", "generic", "codefresh-token", "-n", runtimeNS, "--from-literal=token=e2e")
	res, doc = postReplayed(t, c)
	wantCode(t, res, 0)
	onlyWarn(t, doc)

	// A rollout whose new pod crash-loops (Recreate, so the old pod is gone).
	c.Kubectl(t, "patch", "deployment", "cap-app-proxy", "-n", runtimeNS, "--type=merge", "-p",
		`{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null},"template":{"metadata":{"labels":{"`+testcluster.FaultLabel+`":"`+testcluster.FaultCrashLoop+`"}}}}}`)
	waitFor(t, 60*time.Second, "cap-app-proxy crash-looping", func() bool {
		return waitingReason(t, c, runtimeNS, "app=cap-app-proxy,"+testcluster.FaultLabel) == "CrashLoopBackOff"
	})
	res, doc = postReplayed(t, c, "--only=runtime-workloads")
	wantCode(t, res, 1)
	wantStatus(t, doc, "runtime-workloads", "fail", "Deployment/cap-app-proxy: 0/1 available", "CrashLoopBackOff", "5 restarts", "exit code 1")
}

// validateValuesLog is a failed validate-values hook's log: the chart's
// script (templates/hooks/pre-install/validate-values.yaml, run with `set -x`)
// with the default values, where argo-cd is enabled and the Argo CD version
// check is skipped, then `cf helm validate` refusing the values (its last
// line is written for the test, in the CLI's "Error: " form: the e2e values'
// token is not a real one).
var validateValuesLog = []string{
	"+ '[' false = true ']'",
	"+ echo 'Argo CD version check passed. Validating helm values using cf cli...'",
	"Argo CD version check passed. Validating helm values using cf cli...",
	"+ cf helm validate --values /job_tmp/values.yaml --namespace codefresh --version 0.30.0 --hook --log-level debug",
	"Error: the user token is not valid for account e2e-account (401 Unauthorized)",
}

// TestRuntimeChartBroken: a validate-values hook whose pod fails (and the
// check quotes its container's log), then nodes
// too small for the runtime (pods Pending with the scheduler's reasons), then
// `--post --wait` passing once a node with room joins.
func TestRuntimeChartBroken(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.Start(t)
	c.AddNode(t, testcluster.NodeSpec{Name: "small-1", CPU: "1", Memory: "1Gi"})
	// Too small: runtime-schedulable fails before the install, naming pods
	// and the node's room; after it (below) the scheduler leaves pods Pending.
	res, doc := c.RunJSONReplayed(t, nil, "--only=runtime-schedulable")
	wantCode(t, res, 1)
	wantStatus(t, doc, "runtime-schedulable", "fail", "would stay Pending", "gitops-operator (cpu 100m, memory 128Mi)",
		"closest node small-1 has free cpu", "chart 0.30.0 defaults")
	// The same verdict from the rendered release: --chart and the values.
	res, doc = c.RunJSONReplayed(t, nil, "--only=runtime-schedulable", "--chart", fixtureChart(t), "-f", runtimeValues(t, ""))
	wantCode(t, res, 1)
	wantStatus(t, doc, "runtime-schedulable", "fail", "would stay Pending", "gitops-operator (cpu 100m, memory 128Mi)",
		"the rendered chart gitops-runtime 0.30.0 with the given values")

	// The validation hook's pod exits 1: Helm stops the install, the Job
	// controller marks the Job Failed. Its container's log (served by kwok
	// as a kubelet would) is what the chart's script prints under `set -x`
	// with the chart's default values (argo-cd enabled: no version check)
	// before `cf helm validate` fails.
	c.ServeLogs(t, testcluster.LogSource{Namespace: runtimeNS, Containers: []string{"validate-values"}}, validateValuesLog...)
	bad := runtimeValues(t, "installer:\n  image:\n    tag: e2e-fail\n")
	if out, err := installRuntime(t, c, bad, "--timeout", "2m"); err == nil || !strings.Contains(out, "validate-values") {
		t.Fatalf("helm install with a failing validate-values hook: err %v\n%s", err, out)
	}
	res, doc = post(t, c, "--only=release-deployed,validate-values-job")
	wantCode(t, res, 1)
	wantStatus(t, doc, "release-deployed", "fail", "failed")
	vj := wantStatus(t, doc, "validate-values-job", "fail", "Job validate-values failed (BackoffLimitExceeded", "kubectl logs jobs/validate-values -n codefresh",
		"last 5 lines of pod validate-values-",
		"\n  Argo CD version check passed. Validating helm values using cf cli...",
		"\n  + cf helm validate --values /job_tmp/values.yaml --namespace codefresh --version 0.30.0 --hook --log-level debug",
		"\n  "+validateValuesLog[len(validateValuesLog)-1])
	if strings.Contains(vj.Message, "could not be read") {
		t.Errorf("the hook's log was not read: %s", vj.Message)
	}

	if out, err := helm(t, c, "uninstall", runtimeRelease, "-n", runtimeNS, "--no-hooks"); err != nil {
		t.Fatalf("helm uninstall: %v\n%s", err, out)
	}
	// (--no-hooks: the failed release keeps the e2e-fail installer image, which
	// its pre-delete hook Job would run and fail with.)
	// Too small: the install itself succeeds (no --wait), the pods stay Pending.
	if out, err := installRuntime(t, c, runtimeValues(t, ""), "--timeout", "2m"); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	waitFor(t, 60*time.Second, "FailedScheduling for the runtime's pods", func() bool {
		evs, err := c.Kube.CoreV1().Events(runtimeNS).List(bg, metav1.ListOptions{FieldSelector: "reason=FailedScheduling"})
		return err == nil && len(evs.Items) > 0
	})
	res, doc = post(t, c, "--only=runtime-workloads")
	wantCode(t, res, 1)
	// Which pods fit the small node depends on the order the scheduler
	// sees them in; every Pending pod must be named (below).
	rw := wantStatus(t, doc, "runtime-workloads", "fail", "Pending, not scheduled: 0/1 nodes are available: ", "Insufficient memory")
	pending := pendingPods(t, c)
	if len(pending) == 0 {
		t.Fatal("no runtime pod Pending")
	}
	named := 0
	for _, p := range pending {
		if strings.Contains(rw.Message, p) {
			named++
		}
	}
	if named == 0 {
		t.Fatalf("none of the Pending pods %v named in %s", pending, rw.Message)
	}
	// The scheduler's events for a pod are one line each, as kubectl describe
	// shows them, however many attempts it made.
	for _, p := range pending {
		if n := strings.Count(rw.Message, "event Pod/"+p+" FailedScheduling"); n > 1 {
			t.Errorf("FailedScheduling of %s printed %d times:\n%s", p, n, rw.Message)
		}
	}

	// --wait: a node with room joins while the plugin waits.
	type out struct {
		res testcluster.Result
		doc reporters.Document
	}
	done := make(chan out, 1)
	go func() {
		r, d := c.RunJSON(t, nil, "--post", "--only=runtime-workloads,release-deployed", "--wait=2m")
		done <- out{r, d}
	}()
	time.Sleep(2 * time.Second)
	c.Kubectl(t, "create", "secret", "generic", "codefresh-token", "-n", runtimeNS, "--from-literal=token=e2e")
	c.AddNode(t, testcluster.NodeSpec{Name: "big-1", CPU: "8", Memory: "16Gi"})
	select {
	case o := <-done:
		wantCode(t, o.res, 0)
		wantStatus(t, o.doc, "runtime-workloads", "pass")
	case <-time.After(150 * time.Second):
		t.Fatal("--post --wait=2m did not return")
	}
}

func pendingPods(t *testing.T, c *testcluster.Cluster) []string {
	t.Helper()
	pods, err := c.Kube.CoreV1().Pods(runtimeNS).List(bg, metav1.ListOptions{FieldSelector: "status.phase=Pending"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
				names = append(names, p.Name)
			}
		}
	}
	return names
}

// TestRuntimePodsMatchChart holds runtime-schedulable's table of the chart's
// pods against what real Helm renders from the chart 0.30.0 with the same
// values: the same workloads, replicas, effective requests and nodeSelectors.
func TestRuntimePodsMatchChart(t *testing.T) {
	testcluster.Parallel(t)
	cmd := exec.Command(testcluster.HelmBinary(t), "template", runtimeRelease, chartLine(t, "chart"),
		"-n", runtimeNS, "-f", runtimeValues(t, ""))
	cmd.Env = helmClientEnv(t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	rendered, err := checks.RuntimePodsFromManifest(string(out))
	if err != nil {
		t.Fatal(err)
	}
	summary := func(ps []checks.RuntimePodSpec) map[string]string {
		m := map[string]string{}
		for _, p := range ps {
			req := resourcehelper.PodRequests(&corev1.Pod{Spec: p.Spec}, resourcehelper.PodResourcesOptions{})
			m[p.Name] = fmt.Sprintf("x%d cpu=%s mem=%s eph=%s sel=%v", p.Replicas, req.Cpu(), req.Memory(), req.StorageEphemeral(), p.Spec.NodeSelector)
		}
		return m
	}
	var defaults []checks.RuntimePodSpec
	for _, p := range plan.DefaultRuntimePods() {
		defaults = append(defaults, checks.RuntimePodSpec{Name: p.Name, Replicas: p.Replicas, Spec: p.Spec})
	}
	got, want := summary(rendered), summary(defaults)
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: chart renders %q, table says %q", name, got[name], w)
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("chart renders %s (%s), missing from the table", name, g)
		}
	}
}

// TestRuntimeWorkloadsSilentNode: a node stops reporting (its Lease taken
// from kwok); after the grace period the node lifecycle controller sets Ready
// Unknown and the pods there not ready. runtime-workloads says so rather than
// "Running".
func TestRuntimeWorkloadsSilentNode(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.Start(t)
	c.AddNode(t, testcluster.NodeSpec{Name: "n1", CPU: "4", Memory: "8Gi"})
	c.CreateNamespace(t, runtimeNS)
	d := testDeployment(runtimeNS, "cap-app-proxy", 1, "100m", "")
	d.Annotations = map[string]string{"meta.helm.sh/release-name": runtimeRelease, "meta.helm.sh/release-namespace": runtimeNS}
	if _, err := c.Kube.AppsV1().Deployments(runtimeNS).Create(bg, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAvailable(t, c, runtimeNS, "cap-app-proxy")
	c.Kubectl(t, "create", "secret", "generic", "codefresh-token", "-n", runtimeNS, "--from-literal=token=e2e")

	// Take the Lease: kwok no longer renews it, nothing reports for n1.
	lease, err := c.Kube.CoordinationV1().Leases("kube-node-lease").Get(bg, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder, hour := "e2e-test", int32(3600)
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds = &holder, &hour
	if _, err := c.Kube.CoordinationV1().Leases("kube-node-lease").Update(bg, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	waitFor(t, 90*time.Second, "n1 Ready Unknown and the Deployment unavailable", func() bool {
		n, err := c.Kube.CoreV1().Nodes().Get(bg, "n1", metav1.GetOptions{})
		if err != nil {
			return false
		}
		unknown := false
		for _, cond := range n.Status.Conditions {
			unknown = unknown || (cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionUnknown)
		}
		dep, err := c.Kube.AppsV1().Deployments(runtimeNS).Get(bg, "cap-app-proxy", metav1.GetOptions{})
		return unknown && err == nil && dep.Status.AvailableReplicas == 0
	})
	t.Logf("node Unknown and Deployment unavailable %s after the Lease was taken", time.Since(start).Round(100*time.Millisecond))
	res, doc := post(t, c, "--only=runtime-workloads")
	wantCode(t, res, 1)
	wantStatus(t, doc, "runtime-workloads", "fail", "Deployment/cap-app-proxy: 0/1 available", "not ready, node n1 stopped reporting (Ready Unknown)")
}
