package e2e

import (
	"context"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	rspb "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

var bg = context.Background()

// writeRelease stores a Helm release revision with Helm's own Secrets driver.
func writeRelease(t *testing.T, c *testcluster.Cluster, ns, name string, version int, status rspb.Status, desc string) {
	t.Helper()
	d := driver.NewSecrets(c.Kube.CoreV1().Secrets(ns))
	rls := &rspb.Release{
		Name: name, Namespace: ns, Version: version,
		Info:  &rspb.Info{Status: status, Description: desc},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "gitops-runtime", Version: "0.30.0", AppVersion: "0.1.72"}},
	}
	key := "sh.helm.release.v1." + name + ".v" + strconv.Itoa(version)
	if err := d.Create(key, rls); err != nil {
		t.Fatalf("writing release %s: %v", key, err)
	}
}

// deployment creates a Deployment of the release with the given replicas and
// sets status.availableReplicas, as the controller would.
func deployment(t *testing.T, c *testcluster.Cluster, ns, name string, replicas, available int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels,
			Annotations: map[string]string{"meta.helm.sh/release-name": "cf-gitops-runtime", "meta.helm.sh/release-namespace": ns}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "quay.io/codefresh/" + name + ":1.0"}}},
			},
		},
	}
	created, err := c.Kube.AppsV1().Deployments(ns).Create(bg, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating deployment %s: %v", name, err)
	}
	setDeploymentStatus(t, c, created, available)
}

func setDeploymentStatus(t *testing.T, c *testcluster.Cluster, d *appsv1.Deployment, available int32) {
	t.Helper()
	// The Deployment controller writes the status too: on a conflict, read
	// the object again and write the wanted status over the controller's.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d.Status = appsv1.DeploymentStatus{Replicas: *d.Spec.Replicas, ReadyReplicas: available, AvailableReplicas: available, UpdatedReplicas: *d.Spec.Replicas,
			UnavailableReplicas: *d.Spec.Replicas - available, ObservedGeneration: d.Generation}
		_, err := c.Kube.AppsV1().Deployments(d.Namespace).UpdateStatus(bg, d, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			if fresh, gerr := c.Kube.AppsV1().Deployments(d.Namespace).Get(bg, d.Name, metav1.GetOptions{}); gerr == nil {
				d = fresh
			}
		}
		return err
	})
	if err != nil {
		t.Fatalf("setting status of deployment %s: %v", d.Name, err)
	}
}

// pod creates a pod with labels and sets its status (container statuses and
// conditions), as the kubelet and scheduler would.
func pod(t *testing.T, c *testcluster.Cluster, ns, name string, labels map[string]string, status corev1.PodStatus) {
	t.Helper()
	podWith(t, c, ns, name, "main", "", labels, status)
}

// podWith is pod with a named container, bound to node (when not "").
func podWith(t *testing.T, c *testcluster.Cluster, ns, name, container, node string, labels map[string]string, status corev1.PodStatus) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: container, Image: "quay.io/codefresh/x:1"}}},
	}
	created, err := c.Kube.CoreV1().Pods(ns).Create(bg, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	created.Status = status
	if _, err := c.Kube.CoreV1().Pods(ns).UpdateStatus(bg, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("setting status of pod %s: %v", name, err)
	}
}

// warningEvent records a Warning event about an object.
func warningEvent(t *testing.T, c *testcluster.Cluster, ns, kind, name, reason, msg string) {
	t.Helper()
	now := metav1.NewTime(time.Now())
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: ns, GenerateName: name + "."},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: ns, Name: name, APIVersion: "v1"},
		Type:           corev1.EventTypeWarning, Reason: reason, Message: msg, Count: 3,
		FirstTimestamp: now, LastTimestamp: now, Source: corev1.EventSource{Component: "kubelet"},
	}
	if _, err := c.Kube.CoreV1().Events(ns).Create(bg, e, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating event: %v", err)
	}
}

// post runs `--post` with args and returns the report.
func post(t *testing.T, c *testcluster.Cluster, args ...string) (testcluster.Result, reporters.Document) {
	t.Helper()
	return c.RunJSON(t, nil, append([]string{"--post"}, args...)...)
}

// expectCheck asserts a check's status and that its message contains each of want.
func expectCheck(t *testing.T, doc reporters.Document, id, status string, want ...string) reporters.CheckDocument {
	t.Helper()
	ch := testcluster.Check(t, doc, id)
	if ch.Status != status {
		t.Fatalf("%s = %s (%s; hint %q), want %s", id, ch.Status, ch.Message, ch.Hint, status)
	}
	for _, w := range want {
		if !strings.Contains(ch.Message, w) && !strings.Contains(ch.Hint, w) {
			t.Fatalf("%s message %q / hint %q lacks %q", id, ch.Message, ch.Hint, w)
		}
	}
	return ch
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// postReplayed is post on a run recorded with --bundle whose replay must
// agree with it (testcluster.RunJSONReplayed).
func postReplayed(t *testing.T, c *testcluster.Cluster, args ...string) (testcluster.Result, reporters.Document) {
	t.Helper()
	return c.RunJSONReplayed(t, nil, append([]string{"--post"}, args...)...)
}
