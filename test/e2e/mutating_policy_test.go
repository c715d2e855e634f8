package e2e

import (
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestMutatingAdmissionPolicyAgreesWithHelm: a real MutatingAdmissionPolicy
// (admissionregistration.k8s.io/v1, on by default in Kubernetes 1.36) adds
// a regular container that never exits to the pods of Jobs (a
// matchCondition on the Job controller's label), bound to the runtime
// namespace (the binding's namespaceSelector). The plugin's pre-install
// (run, then replayed from its bundle) fails admission-pods naming the
// policy and its binding for the chart's hook Jobs, and names it for no
// Deployment's pod; real helm install agrees: the first hook's pod is
// created with the policy's container, never completes, and helm fails at
// its --timeout. A second policy labels the ConfigMaps created in the
// namespace: admission-objects names it and the labels it adds for each of
// the chart's ConfigMaps, and the hook ConfigMap Helm creates before the
// hook Job carries that label.
func TestMutatingAdmissionPolicyAgreesWithHelm(t *testing.T) {
	tc.Parallel(t)
	c := tc.Start(t)
	c.AddNode(t, tc.NodeSpec{Name: "worker-1", CPU: "8", Memory: "16Gi"})
	ns := runtimeNS
	c.Kubectl(t, "create", "namespace", ns)

	policy := mutatingPolicy("e2e-add-sleeper", "pods", admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeJSONPatch,
		JSONPatch: &admissionregistrationv1.JSONPatch{Expression: `[JSONPatch{op: "add", path: "/spec/containers/-",
  value: Object.spec.containers{name: "e2e-sleeper", image: "example.invalid/sleeper:e2e-runs-forever"}}]`}})
	policy.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "job-pods",
		Expression: `has(object.metadata.labels) && 'batch.kubernetes.io/job-name' in object.metadata.labels`}}
	binding := &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-add-sleeper-runtime"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: policy.Name,
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: inNamespace(ns)}},
	}
	labels := mutatingPolicy("e2e-label-configmaps", "configmaps", admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: `Object{metadata: Object.metadata{labels: {"e2e.example.com/team": "platform"}}}`}})
	labelsBinding := &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-label-configmaps-runtime"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: labels.Name,
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: inNamespace(ns)}},
	}
	for _, p := range []*admissionregistrationv1.MutatingAdmissionPolicy{policy, labels} {
		if _, err := c.Kube.AdmissionregistrationV1().MutatingAdmissionPolicies().Create(bg, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating MutatingAdmissionPolicy %s: %v", p.Name, err)
		}
	}
	for _, b := range []*admissionregistrationv1.MutatingAdmissionPolicyBinding{binding, labelsBinding} {
		if _, err := c.Kube.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Create(bg, b, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating binding %s: %v", b.Name, err)
		}
	}
	// In force: a Job's pod gets the container (the plugin learns of
	// policies through informers).
	probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-probe-", Namespace: ns, Labels: map[string]string{"batch.kubernetes.io/job-name": "probe"}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "example.invalid/probe:1"}}}}
	waitFor(t, 30*time.Second, "the MutatingAdmissionPolicy in force", func() bool {
		got, err := c.Kube.CoreV1().Pods(ns).Create(bg, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && len(got.Spec.Containers) == 2
	})
	probeCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-probe-", Namespace: ns}}
	waitFor(t, 30*time.Second, "the labelling policy in force", func() bool {
		got, err := c.Kube.CoreV1().ConfigMaps(ns).Create(bg, probeCM, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && got.Labels["e2e.example.com/team"] == "platform"
	})

	values := runtimeValues(t, "")
	chart := fixtureChart(t)
	res, doc := c.RunJSONReplayed(t, nil, "--only", admissionChecks, "--chart", chart, "-f", values, "-n", ns, "--release-name", runtimeRelease)
	pods := wantStatus(t, doc, "admission-pods", "fail",
		"hook Job validate-values (pre-install,pre-upgrade): MutatingAdmissionPolicy e2e-add-sleeper (binding e2e-add-sleeper-runtime) matches this pod and admission adds container e2e-sleeper",
		"never completes")
	if pods.Impact != "install-fails" {
		t.Errorf("admission-pods impact %s, want install-fails", pods.Impact)
	}
	for _, line := range strings.Split(pods.Message, "\n") {
		if strings.HasPrefix(line, "Deployment ") && strings.Contains(line, "e2e-add-sleeper") {
			t.Errorf("a Deployment's pod is said to match the policy (its matchCondition selects Jobs' pods): %s", line)
		}
	}
	if !strings.Contains(pods.Hint, "MutatingAdmissionPolicy e2e-add-sleeper (binding e2e-add-sleeper-runtime's matchResources") {
		t.Errorf("the hint does not name the policy's binding: %s", pods.Hint)
	}
	if res.Code != cli.ExitFailed {
		t.Errorf("plugin exit %d, want %d", res.Code, cli.ExitFailed)
	}
	const labelled = "MutatingAdmissionPolicy e2e-label-configmaps (binding e2e-label-configmaps-runtime) matches its create; admission: labels e2e.example.com/team added"
	objs := wantStatus(t, doc, "admission-objects", "pass", "admission changes", "ConfigMap helm-values-config (hook pre-install", labelled)
	for _, line := range strings.Split(objs.Message, "\n") {
		if strings.Contains(line, "e2e-label-configmaps") && !strings.HasPrefix(line, "ConfigMap ") {
			t.Errorf("the ConfigMap policy is said to change another kind: %s", line)
		}
	}

	// Helm agrees: the hook Job's pod is created with the policy's
	// container, never completes, and helm install fails at its timeout.
	// The ConfigMaps Helm creates are watched as the API server stores
	// them (Helm deletes its hook ConfigMap when the install fails).
	w, err := c.Kube.CoreV1().ConfigMaps(ns).Watch(bg, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	start := time.Now()
	out, code := helmCmd(t, c, tc.HelmBinary(t), "install", runtimeRelease, chart, "-n", ns, "-f", values, "--timeout", admissionTimeout)
	t.Logf("helm install: exit %d in %s: %s", code, time.Since(start).Round(100*time.Millisecond), lastLine(out))
	if code == 0 {
		t.Errorf("helm install succeeded; the plugin said its hook never completes\n%s", out)
	}
	// The hook ConfigMap Helm created before the hook Job was stored with
	// the label, as the plugin said.
	var created *corev1.ConfigMap
	for created == nil {
		select {
		case ev := <-w.ResultChan():
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == watch.Added && cm.Name == "helm-values-config" {
				created = cm
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no ConfigMap helm-values-config created by helm install")
		}
	}
	if created.Labels["e2e.example.com/team"] != "platform" {
		t.Errorf("ConfigMap helm-values-config as helm install created it: labels %v, want e2e.example.com/team=platform", created.Labels)
	}
	// Helm runs the hooks one at a time: the first one's pod is the one
	// that never completes, and the plugin named its Job.
	list, err := c.Kube.CoreV1().Pods(ns).List(bg, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name"})
	if err != nil || len(list.Items) == 0 {
		t.Fatalf("no pod of a hook Job (%v)", err)
	}
	for _, p := range list.Items {
		var names []string
		for _, ct := range p.Spec.Containers {
			names = append(names, ct.Name)
		}
		job := p.Labels["batch.kubernetes.io/job-name"]
		if !strings.Contains(strings.Join(names, ","), "e2e-sleeper") || p.Status.Phase == corev1.PodSucceeded {
			t.Errorf("hook pod %s: containers %v, phase %s; want e2e-sleeper added and the pod not completed", p.Name, names, p.Status.Phase)
		}
		if !strings.Contains(pods.Message, "hook Job "+job+" (") {
			t.Errorf("helm waited for hook Job %s, which admission-pods does not name:\n%s", job, pods.Message)
		}
	}
}

// mutatingPolicy is MutatingAdmissionPolicy name (failurePolicy Fail,
// reinvocationPolicy Never) of the creates of the core resource (pods,
// configmaps), matched with matchPolicy Equivalent, with one mutation.
func mutatingPolicy(name, resource string, m admissionregistrationv1.Mutation) *admissionregistrationv1.MutatingAdmissionPolicy {
	fail := admissionregistrationv1.Fail
	equivalent := admissionregistrationv1.Equivalent
	return &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			FailurePolicy:      &fail,
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			MatchConstraints: &admissionregistrationv1.MatchResources{MatchPolicy: &equivalent,
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{resource}},
				}}}},
			Mutations: []admissionregistrationv1.Mutation{m},
		},
	}
}
