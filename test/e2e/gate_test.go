package e2e

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// gateNS is the runtime namespace of the gate tests: it enforces
// PodSecurity "restricted".
const gateNS = "codefresh"

// TestGate runs the gate of deploy/gate on a full control plane (kwok
// nodes) whose runtime namespace enforces PodSecurity "restricted", with a
// planted problem (a codefresh-token Secret left by an earlier runtime; and
// the platform unreachable from the "pod network": the tests' probes go
// nowhere).
//
// What is real: the gate's template rendered by real Helm from an umbrella
// chart that carries it beside the real gitops-runtime 0.30.0 dependency;
// its ServiceAccount, RBAC and values Secret applied to the real API
// server; the plugin binary run with the Job's own arguments and an
// in-cluster environment built from that ServiceAccount's token
// (KUBERNETES_SERVICE_HOST/PORT, the token and CA files in the directory
// --service-account-dir names, where a kubelet would mount them); the
// Job's pod template admitted by the real API server in the restricted
// namespace (a server-side dry run, no PodSecurity warning; the same pod
// without its securityContext is refused); `helm install` (Helm 3.22) of
// the umbrella chart, which runs the gate's hooks in order and stops at the
// failed Job, printing its pod's log (helm.sh/hook-output-log-policy).
// What is simulated: kwok runs no container, so the Job's pod is failed by
// the test kit's kwok Stage (the e2e "fail" fault label, set through the
// gate's podLabels) and its log is served by kwok (ServeLogs) with the
// lines the same binary printed in the in-cluster run above; the
// termination message is the file --termination-log wrote in that run (a
// kubelet would read it from the container).
func TestGate(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.Start(t)
	c.AddNode(t, testcluster.NodeSpec{Name: "node-1", CPU: "8", Memory: "32Gi"})
	if _, err := c.Kube.CoreV1().Namespaces().Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gateNS,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "restricted"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Kube.CoreV1().Secrets(gateNS).Create(bg, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "codefresh-token"},
		StringData: map[string]string{"token": "left-behind"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	umbrella := gateUmbrella(t)

	// The gate's objects as Helm renders them for release "probe".
	out, err := helm(t, c, "template", "probe", umbrella, "-n", gateNS, "--show-only", "templates/gitops-preflight-gate.yaml")
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	var job batchv1.Job
	var valuesYAML string
	var others []string
	for _, doc := range strings.Split(out, "\n---") {
		var meta struct {
			Kind       string            `json:"kind"`
			StringData map[string]string `json:"stringData"`
		}
		if err := sigyaml.Unmarshal([]byte(doc), &meta); err != nil || meta.Kind == "" {
			continue
		}
		switch meta.Kind {
		case "Job":
			if err := sigyaml.UnmarshalStrict([]byte(doc), &job); err != nil {
				t.Fatal(err)
			}
			continue
		case "Secret":
			valuesYAML = meta.StringData["values.yaml"]
		}
		others = append(others, doc)
	}
	if job.Name == "" || valuesYAML == "" || len(others) != 6 {
		t.Fatalf("rendered gate: Job %q, values %d bytes, %d other objects, want 6:\n%s", job.Name, len(valuesYAML), len(others), out)
	}
	gateJobShape(t, &job)
	// gitopsPreflightGate.helmWait is passed as --helm-wait (the binary
	// run below takes the Job's arguments); unset, no --helm-wait.
	if !slices.Contains(job.Spec.Template.Spec.Containers[0].Args, "--helm-wait=true") {
		t.Errorf("helmWait: true: the gate's args lack --helm-wait=true: %q", job.Spec.Template.Spec.Containers[0].Args)
	}
	// The gate's template reads only its own values: these renders leave
	// the gitops-runtime dependency out (Helm renders every template of a
	// chart for any --show-only; the runtime's are seconds of CPU each).
	gateOnly := gateWithoutRuntime(t, umbrella)
	for set, want := range map[string]string{"gitopsPreflightGate.helmWait=false": "--helm-wait=false", "gitopsPreflightGate.helmWait=": ""} {
		rendered, err := helm(t, c, "template", "probe", gateOnly, "-n", gateNS, "--show-only", "templates/gitops-preflight-gate.yaml", "--set", set)
		if err != nil {
			t.Fatalf("helm template --set %s: %v\n%s", set, err, rendered)
		}
		got := regexp.MustCompile(`--helm-wait=\w+`).FindAllString(rendered, -1)
		if want == "" && len(got) != 0 || want != "" && (len(got) != 1 || got[0] != want) {
			t.Errorf("helm template --set %q: the gate's args have %v, want %q", set, got, want)
		}
	}
	if !strings.Contains(valuesYAML, "accountId: acc-1") || !strings.Contains(valuesYAML, "name: e2eruntime") {
		t.Errorf("the values Secret lacks the umbrella's gitops-runtime values and globals:\n%s", valuesYAML)
	}
	// The read tier of the gate is deploy/rbac/read.yaml's.
	read, err := os.ReadFile(filepath.Join(testcluster.RepoRoot(t), "deploy", "rbac", "read.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want, got := clusterRoleRules(t, string(read)), clusterRoleRules(t, strings.Join(others, "\n---")); got != want {
		t.Errorf("the gate's ClusterRole rules differ from deploy/rbac/read.yaml's:\n%s\nwant\n%s", got, want)
	}
	objs := filepath.Join(t.TempDir(), "gate-objects.yaml")
	writeFile(t, objs, strings.Join(others, "\n---"))
	c.Kubectl(t, "apply", "-f", objs)

	// The Job's pod, as the Job controller will create it, is admitted in
	// the restricted namespace without a PodSecurity warning; without its
	// securityContext it is refused (the namespace enforces).
	podAdmitted(t, c, job.Spec.Template, true)
	bare := *job.Spec.Template.DeepCopy()
	bare.Spec.SecurityContext, bare.Spec.Containers[0].SecurityContext = nil, nil
	podAdmitted(t, c, bare, false)

	// The binary as the Job runs it, in an in-cluster environment.
	sa := job.Spec.Template.Spec.ServiceAccountName
	c.WaitAllowed(t, "system:serviceaccount:"+gateNS+":"+sa, "list", "secrets", gateNS)
	env, saDir := inClusterEnv(t, c, sa)
	valuesFile := filepath.Join(saDir, "..", "values.yaml")
	writeFile(t, valuesFile, valuesYAML)
	termLog := filepath.Join(saDir, "..", "termination-log")
	args := gateArgs(t, &job, valuesFile, termLog, saDir)
	res := testcluster.Run(t, env, args...)
	wantCode(t, res, 1)
	for _, w := range []string{"leftover-runtime-token", "platform-reachable", "probed from the pod network"} {
		if !strings.Contains(res.Stdout, w) {
			t.Errorf("the gate's report lacks %q:\n%s", w, res.Stdout)
		}
	}
	if strings.Contains(res.Stdout, "‼ error") {
		t.Errorf("a check ended error with the gate's access:\n%s", res.Stdout)
	}
	msg, err := os.ReadFile(termLog)
	if err != nil || len(msg) > 4096 || !strings.HasPrefix(string(msg), "kubectl gitops-preflight gate FAILED: ") ||
		!strings.Contains(string(msg), "\nwarn leftover-runtime-token: ") || !strings.Contains(string(msg), "\nfail platform-reachable: ") {
		t.Errorf("termination message (%v, %d bytes):\n%s", err, len(msg), msg)
	}
	// The same run as JSON: nothing ends error with the gate's access.
	_, doc := c.RunJSON(t, nil, "--as", "system:serviceaccount:"+gateNS+":"+sa, "-n", gateNS, "-f", valuesFile, "--skip", "helm-version,cluster-admin")
	for _, ch := range doc.Checks {
		if ch.Status == "error" {
			t.Errorf("%s ended error with the gate's access: %s", ch.ID, ch.Message)
		}
	}

	// helm install of the umbrella chart stops at the gate, with the
	// verdict in its output, before the chart's own hooks and objects.
	lines := strings.Split(strings.TrimRight(res.Stdout, "\n"), "\n")
	c.ServeLogs(t, testcluster.LogSource{Namespace: gateNS, Containers: []string{"gitops-preflight"}}, lines...)
	hout, err := helm(t, c, "install", "cf-gitops-runtime", umbrella, "-n", gateNS, "--timeout", "2m",
		"--set", "gitopsPreflightGate.podLabels.e2e\\.gitops-preflight\\.io/fault=fail")
	if err == nil {
		t.Fatalf("helm install went through a failing gate:\n%s", hout)
	}
	for _, w := range []string{"pre-install", "cf-gitops-runtime-gitops-preflight", "leftover-runtime-token", "probed from the pod network"} {
		if !strings.Contains(hout, w) {
			t.Errorf("helm install's output lacks %q:\n%s", w, hout)
		}
	}
	deps, err := c.Kube.AppsV1().Deployments(gateNS).List(bg, metav1.ListOptions{})
	if err != nil || len(deps.Items) != 0 {
		t.Errorf("the runtime's Deployments were created past the gate (%v): %d", err, len(deps.Items))
	}
	if _, err := c.Kube.CoreV1().ConfigMaps(gateNS).Get(bg, "helm-values-config", metav1.GetOptions{}); err == nil {
		t.Error("the chart's own pre-install hook (helm-values-config, weight -10) ran before the gate")
	}

	// Fixed: the gate passes, and again (idempotent: it writes nothing).
	if err := c.Kube.CoreV1().Secrets(gateNS).Delete(bg, "codefresh-token", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		res = testcluster.Run(t, env, append(args, "--skip=platform-reachable")...)
		wantCode(t, res, 0)
		if msg, _ := os.ReadFile(termLog); !strings.HasPrefix(string(msg), "kubectl gitops-preflight gate passed: ") {
			t.Errorf("termination message after the fix:\n%s", msg)
		}
	}
}

// gateUmbrella writes an umbrella chart: the real gitops-runtime chart
// 0.30.0 as its dependency (copied from the fixtures), the gate template
// of deploy/gate and values for both.
func gateUmbrella(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "runtime")
	if err := os.CopyFS(filepath.Join(dir, "charts", "gitops-runtime"), os.DirFS(fixtureChart(t))); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	tmpl, err := os.ReadFile(filepath.Join(testcluster.RepoRoot(t), "deploy", "gate", "gitops-preflight-gate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "templates", "gitops-preflight-gate.yaml"), string(tmpl))
	writeFile(t, filepath.Join(dir, "Chart.yaml"), `apiVersion: v2
name: runtime
version: 1.0.0
dependencies:
  - name: gitops-runtime
    version: 0.30.0
    repository: oci://quay.io/codefresh
`)
	writeFile(t, filepath.Join(dir, "values.yaml"), `global:
  codefresh:
    accountId: acc-1
    userToken:
      token: e2e-not-a-token
  runtime:
    name: e2eruntime
gitops-runtime:
  installer:
    skipUsageValidation: true
gitopsPreflightGate:
  enabled: true
  image: registry.example/gitops-preflight@sha256:`+strings.Repeat("ab", 32)+`
  helmWait: true
`)
	return dir
}

// gateWithoutRuntime writes a chart of umbrella's gate template and values
// alone: no dependency, so that a render of it is the gate's alone.
func gateWithoutRuntime(t *testing.T, umbrella string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "runtime")
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"values.yaml", filepath.Join("templates", "gitops-preflight-gate.yaml")} {
		b, err := os.ReadFile(filepath.Join(umbrella, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, f), string(b))
	}
	writeFile(t, filepath.Join(dir, "Chart.yaml"), "apiVersion: v2\nname: runtime\nversion: 1.0.0\n")
	return dir
}

// gateJobShape asserts what the gate Job must be (docs/ci.md).
func gateJobShape(t *testing.T, job *batchv1.Job) {
	t.Helper()
	a := job.Annotations
	pod := job.Spec.Template
	c := pod.Spec.Containers[0]
	for what, ok := range map[string]bool{
		"hook pre-install,pre-upgrade":             a["helm.sh/hook"] == "pre-install,pre-upgrade",
		"weight -20, before the chart's hooks":     a["helm.sh/hook-weight"] == "-20",
		"hook-output-log-policy hook-failed":       a["helm.sh/hook-output-log-policy"] == "hook-failed",
		"backoffLimit 0":                           job.Spec.BackoffLimit != nil && *job.Spec.BackoffLimit == 0,
		"activeDeadlineSeconds below Helm's 300 s": job.Spec.ActiveDeadlineSeconds != nil && *job.Spec.ActiveDeadlineSeconds < 300,
		"no Istio sidecar":                         pod.Annotations["sidecar.istio.io/inject"] == "false" && pod.Labels["sidecar.istio.io/inject"] == "false",
		"termination message from the file":        c.TerminationMessagePath == "/dev/termination-log" && c.TerminationMessagePolicy == corev1.TerminationMessageReadFile,
		"--in-cluster":                             strings.Contains(strings.Join(c.Args, " "), "--in-cluster"),
	} {
		if !ok {
			t.Errorf("the gate Job: not %s", what)
		}
	}
}

// gateArgs are the Job container's arguments with its files moved to the
// test's: the values, the termination log and the ServiceAccount directory.
func gateArgs(t *testing.T, job *batchv1.Job, values, termLog, saDir string) []string {
	t.Helper()
	var out []string
	for _, a := range job.Spec.Template.Spec.Containers[0].Args {
		switch {
		case strings.HasPrefix(a, "--values="):
			a = "--values=" + values
		case strings.HasPrefix(a, "--termination-log="):
			a = "--termination-log=" + termLog
		}
		out = append(out, a)
	}
	return append(out, "--service-account-dir="+saDir)
}

// inClusterEnv makes what a kubelet gives a pod of ServiceAccount sa: a
// directory with its token (TokenRequest) and the API server's CA, and the
// KUBERNETES_SERVICE_HOST/PORT environment.
func inClusterEnv(t *testing.T, c *testcluster.Cluster, sa string) ([]string, string) {
	t.Helper()
	tok, err := c.Kube.CoreV1().ServiceAccounts(gateNS).CreateToken(bg, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "serviceaccount")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "token"), tok.Status.Token)
	writeFile(t, filepath.Join(dir, "ca.crt"), string(c.Admin.CAData))
	writeFile(t, filepath.Join(dir, "namespace"), gateNS)
	u, err := url.Parse(c.Admin.Host)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"KUBERNETES_SERVICE_HOST=" + u.Hostname(), "KUBERNETES_SERVICE_PORT=" + u.Port()}, dir
}

// podAdmitted sends the pod as a server-side dry run in the restricted
// namespace and asserts it is admitted without a warning (want) or refused.
func podAdmitted(t *testing.T, c *testcluster.Cluster, tmpl corev1.PodTemplateSpec, want bool) {
	t.Helper()
	var warnings warningRecorder
	cfg := rest.CopyConfig(c.Admin)
	cfg.WarningHandler = &warnings
	kube := kubernetes.NewForConfigOrDie(cfg)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "gate-", Labels: tmpl.Labels, Annotations: tmpl.Annotations}, Spec: tmpl.Spec}
	_, err := kube.CoreV1().Pods(gateNS).Create(bg, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case want && (err != nil || len(warnings.all()) > 0):
		t.Errorf("the gate's pod is not admitted in a restricted namespace: %v, warnings %v", err, warnings.all())
	case !want && (err == nil || !strings.Contains(err.Error(), "violates PodSecurity")):
		t.Errorf("a pod without the gate's securityContext: %v (want a PodSecurity refusal: the namespace does not enforce)", err)
	}
}

type warningRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

func (w *warningRecorder) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

// clusterRoleRules returns the rules of the first ClusterRole in docs, as
// YAML.
func clusterRoleRules(t *testing.T, docs string) string {
	t.Helper()
	for _, doc := range strings.Split(docs, "\n---") {
		var role struct {
			Kind  string `json:"kind"`
			Rules []any  `json:"rules"`
		}
		if err := sigyaml.Unmarshal([]byte(doc), &role); err == nil && role.Kind == "ClusterRole" {
			out, err := sigyaml.Marshal(role.Rules)
			if err != nil {
				t.Fatal(err)
			}
			return string(bytes.TrimSpace(out))
		}
	}
	t.Fatalf("no ClusterRole in:\n%s", docs)
	return ""
}
