package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// upgradeClusterChecks are the cluster and conflict checks that judge the
// cluster against the target of an upgrade.
const upgradeClusterChecks = "existing-runtime,argo-components,sealed-secrets,runtime-schedulable"

// TestUpgradeClusterAndConflicts: chart 0.27.6 installed with real Helm on
// one kwok node, its pods running; --upgrade to 0.30.0 passes
// existing-runtime, argo-components, sealed-secrets and runtime-schedulable
// (the release's own runtime, Argo CD, Argo Workflows and SealedSecrets
// controller are not conflicts, its running pods are not counted twice).
// A community Argo CD, a SealedSecrets controller and a CLI-installed
// runtime beside it fail. A pod that takes the node's free cpu stalls the
// rollout: the plugin names the Deployments whose new pods fit nowhere,
// `helm upgrade` succeeds, and the scheduler leaves exactly those pods
// Pending. The plugin's runs are recorded and replayed (the replay must
// agree).
func TestUpgradeClusterAndConflicts(t *testing.T) {
	tc.Parallel(t)
	upgradeClusterAndConflicts(t, tc.HelmBinary(t))
}

// TestUpgradeClusterAndConflictsHelm4 is TestUpgradeClusterAndConflicts with
// Helm 4 installing and upgrading the release.
func TestUpgradeClusterAndConflictsHelm4(t *testing.T) {
	tc.Parallel(t)
	upgradeClusterAndConflicts(t, tc.Helm4Binary(t))
}

func upgradeClusterAndConflicts(t *testing.T, helmBin string) {
	c := tc.Start(t)
	c.AddNode(t, tc.NodeSpec{Name: "node-1", CPU: "4", Memory: "16Gi"})
	v := runtimeValues(t, "")
	from, to := chartLine(t, "chart-0.27"), chartLine(t, "chart")
	installLine(t, c, helmBin, from, v)
	waitFor(t, 90*time.Second, "the 0.27.6 runtime's pods bound and running", func() bool { return allRunning(t, c, runtimeNS) })

	plugin := func(t *testing.T) (tc.Result, reporters.Document) {
		t.Helper()
		res, doc := c.RunJSONReplayed(t, nil, "--upgrade", "--only", upgradeClusterChecks, "--chart", to, "-n", runtimeNS, "--release-name", runtimeRelease, "-f", v)
		if doc.Mode != "upgrade" {
			t.Fatalf("mode %q\n%s", doc.Mode, res.Stdout)
		}
		return res, doc
	}

	t.Run("the release's own objects are not conflicts", func(t *testing.T) {
		res, doc := plugin(t)
		want := map[string]string{
			"existing-runtime":    "the only GitOps Runtime on the cluster is release cf-gitops-runtime in namespace codefresh, the one being upgraded",
			"argo-components":     "besides those of release cf-gitops-runtime being upgraded",
			"sealed-secrets":      "the only SealedSecrets controller is release cf-gitops-runtime's own",
			"runtime-schedulable": "every pod helm upgrade starts fits on the 1 Ready, schedulable nodes",
		}
		for id, msg := range want {
			if ch := tc.Check(t, doc, id); ch.Status != "pass" || !strings.Contains(ch.Message, msg) {
				t.Errorf("%s = %s (%s), want pass: %q", id, ch.Status, ch.Message, msg)
			}
		}
		if res.Code != cli.ExitOK {
			t.Errorf("exit %d\n%s", res.Code, res.Stdout)
		}
		t.Logf("runtime-schedulable: %s", tc.Check(t, doc, "runtime-schedulable").Message)
	})

	t.Run("another Argo CD, SealedSecrets controller and runtime", func(t *testing.T) {
		mk := func(ns, name, image string, labels map[string]string) {
			t.Helper()
			if _, err := c.Kube.CoreV1().Namespaces().Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
				t.Fatal(err)
			}
			one := int32(1)
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: appsv1.DeploymentSpec{
				Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}}}
			if _, err := c.Kube.AppsV1().Deployments(ns).Create(bg, d, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Kube.AppsV1().Deployments(ns).Delete(bg, name, metav1.DeleteOptions{}) })
		}
		mk("argocd", "argocd-server", "quay.io/argoproj/argocd:v3.1.8", map[string]string{"app.kubernetes.io/part-of": "argocd"})
		mk("kube-system", "sealed-secrets", "docker.io/bitnami/sealed-secrets-controller:0.29.0", map[string]string{"app.kubernetes.io/name": "sealed-secrets"})
		if _, err := c.Kube.CoreV1().Namespaces().Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "legacy", Name: "codefresh-cm", Labels: map[string]string{"codefresh.io/runtime-name": "old-rt"}}}
		if _, err := c.Kube.CoreV1().ConfigMaps("legacy").Create(bg, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Kube.CoreV1().ConfigMaps("legacy").Delete(bg, "codefresh-cm", metav1.DeleteOptions{}) })

		res, doc := plugin(t)
		want := map[string][]string{
			"argo-components":  {"found 1 Argo Project workload(s): Argo CD in argocd (Deployment/argocd-server)"},
			"sealed-secrets":   {"SealedSecrets controller found: Deployment kube-system/sealed-secrets"},
			"existing-runtime": {"the runtime in namespace legacy (ConfigMap codefresh-cm (runtime old-rt)) has no gitops-runtime Helm release", "the planned runtime is cluster-wide"},
		}
		for id, msgs := range want {
			ch := tc.Check(t, doc, id)
			for _, m := range msgs {
				if ch.Status != "fail" || !strings.Contains(ch.Message, m) {
					t.Errorf("%s = %s (%s), want fail: %q", id, ch.Status, ch.Message, m)
				}
			}
			for _, o := range ch.Objects {
				if o.Namespace == runtimeNS {
					t.Errorf("%s names the release's own %s/%s", id, o.Kind, o.Name)
				}
			}
		}
		if res.Code != cli.ExitFailed {
			t.Errorf("exit %d, want %d", res.Code, cli.ExitFailed)
		}
	})

	t.Run("no room for the rollout: the plugin and the scheduler agree", func(t *testing.T) {
		// A pod that takes all but 50m of the node's free cpu.
		node, err := c.Kube.CoreV1().Nodes().Get(bg, "node-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		free := node.Status.Allocatable.Cpu().MilliValue()
		pods, err := c.Kube.CoreV1().Pods("").List(bg, metav1.ListOptions{FieldSelector: "spec.nodeName=node-1,status.phase!=Succeeded,status.phase!=Failed"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range pods.Items {
			req := resourcehelper.PodRequests(&pods.Items[i], resourcehelper.PodResourcesOptions{})
			free -= req.Cpu().MilliValue()
		}
		hog := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hog"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "hog",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(free-50, resource.DecimalSI)}}}}}}
		if _, err := c.Kube.CoreV1().Pods("default").Create(bg, hog, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "the hog pod bound", func() bool { return allRunning(t, c, "default") })

		res, doc := plugin(t)
		ch := tc.Check(t, doc, "runtime-schedulable")
		if ch.Status != "fail" || !strings.Contains(ch.Message, "during the rollout") || !strings.Contains(ch.Message, "rollout stalls") {
			t.Fatalf("runtime-schedulable = %s (%s), want a stalled rollout", ch.Status, ch.Message)
		}
		named := stalledNamed(ch.Message)
		if len(named) == 0 {
			t.Fatalf("no Deployment named in %s", ch.Message)
		}
		out, ok := helmUpgrade(t, c, helmBin, to, "-f", v)
		if !ok {
			t.Fatalf("helm upgrade: %s", out)
		}
		if res.Code == cli.ExitOK {
			t.Errorf("plugin exit 0 on a stalled rollout")
		}
		// The scheduler's verdict once the controllers have done what they
		// can: the Deployments with an unschedulable pod.
		var pending []string
		waitFor(t, 60*time.Second, fmt.Sprintf("the scheduler to leave exactly %v Pending", named), func() bool {
			pending = unschedulableDeployments(t, c, runtimeNS)
			return strings.Join(pending, ",") == strings.Join(named, ",")
		})
		t.Logf("stalled, as the plugin said and the scheduler left them: %v", pending)
	})
}

// allRunning reports whether every pod of ns is bound and Running.
func allRunning(t *testing.T, c *tc.Cluster, ns string) bool {
	t.Helper()
	pods, err := c.Kube.CoreV1().Pods(ns).List(bg, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning {
			return false
		}
	}
	return len(pods.Items) > 0
}

// stalledNamed returns the Deployments runtime-schedulable's message names
// as stalled ("...stalls with the old pods kept: a (cpu ...), b (cpu ...); closest ..."), sorted.
func stalledNamed(msg string) []string {
	_, rest, ok := strings.Cut(msg, "old pods kept: ")
	if !ok {
		return nil
	}
	rest, _, _ = strings.Cut(rest, "; ")
	var out []string
	for _, part := range strings.Split(rest, "), ") {
		if name, _, ok := strings.Cut(part, " ("); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// unschedulableDeployments returns the Deployments of ns with a pod the
// scheduler found no node for, sorted.
func unschedulableDeployments(t *testing.T, c *tc.Cluster, ns string) []string {
	t.Helper()
	pods, err := c.Kube.CoreV1().Pods(ns).List(bg, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range pods.Items {
		ref := metav1.GetControllerOf(&p)
		if ref == nil || ref.Kind != "ReplicaSet" {
			continue
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
				seen[strings.TrimSuffix(ref.Name, "-"+p.Labels["pod-template-hash"])] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}
