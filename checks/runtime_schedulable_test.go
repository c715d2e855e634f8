package checks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	helmchart "helm.sh/helm/v3/pkg/chart"
	rspb "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// TestRuntimeSchedulableCheck runs runtime-schedulable through the kit on
// the chart's default requests: they fit beside a running pod (a finished
// one holds nothing), and fail with the closest node on a smaller one.
func TestRuntimeSchedulableCheck(t *testing.T) {
	mk := func(name, cpu, mem string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/os": "linux"}}, Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem),
				corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	}
	busy := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "busy"}, Spec: corev1.PodSpec{NodeName: "n1",
		Containers: []corev1.Container{{Name: "c", Resources: requests("500m", "1Gi", "")}}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	done := busy.DeepCopy()
	done.Name, done.Status.Phase = "done", corev1.PodSucceeded
	env, _ := postEnv(t, Inputs{}, []runtime.Object{mk("n1", "2", "3Gi"), busy, done})
	res := runThrough(t, RuntimeSchedulable(), env)
	// 1920Mi requested in all; 3Gi - 1Gi bound = 2Gi free: fits.
	if res.Status != StatusPass || !strings.Contains(res.Message, "chart 0.30.0 defaults") {
		t.Fatalf("%s: %s", res.Status, res.Message)
	}
	env, _ = postEnv(t, Inputs{}, []runtime.Object{mk("n1", "1", "2Gi"), busy, done})
	res = runThrough(t, RuntimeSchedulable(), env)
	for _, want := range []string{"would stay Pending", "closest node n1 has free cpu", "memory"} {
		if res.Status != StatusFail || !strings.Contains(res.Message, want) {
			t.Fatalf("%s: %s (want %q)", res.Status, res.Message, want)
		}
	}
}

// requests are a container's resource requests (cpu, memory, ephemeral
// storage; "" leaves one out).
func requests(cpu, mem, eph string) corev1.ResourceRequirements {
	r := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem, corev1.ResourceEphemeralStorage: eph} {
		if q != "" {
			r[name] = resource.MustParse(q)
		}
	}
	return corev1.ResourceRequirements{Requests: r}
}

// schedDeployment renders Deployment app of the schedulable tests: replicas
// copies of image requesting cpu, with strategy (YAML, "" = the default
// RollingUpdate).
func schedDeployment(image, cpu string, replicas int, strategy string) string {
	return namedDeployment("app", image, cpu, replicas, strategy)
}

func namedDeployment(name, image, cpu string, replicas int, strategy string) string {
	if strategy != "" {
		strategy = "\n  strategy: " + strategy
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  namespace: codefresh
spec:
  replicas: %[2]d%[3]s
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers:
      - name: app
        image: %[4]s
        resources: {requests: {cpu: %[5]s, memory: 256Mi}}
`, name, replicas, strategy, image, cpu)
}

// schedRelease is revision 1 of the release, deployed, holding manifest.
func schedRelease(t *testing.T, manifest string) runtime.Object {
	t.Helper()
	kube := fake.NewClientset()
	d := driver.NewSecrets(kube.CoreV1().Secrets("codefresh"))
	key := "sh.helm.release.v1." + DefaultReleaseName + ".v1"
	rls := &rspb.Release{Name: DefaultReleaseName, Namespace: "codefresh", Version: 1, Manifest: "---\n# Source: sched/templates/app.yaml\n" + manifest,
		Info:  &rspb.Info{Status: rspb.StatusDeployed},
		Chart: &helmchart.Chart{Metadata: &helmchart.Metadata{APIVersion: "v2", Name: "sched", Version: "1.0.0"}}}
	if err := d.Create(key, rls); err != nil {
		t.Fatal(err)
	}
	sec, err := kube.CoreV1().Secrets("codefresh").Get(context.Background(), key, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

// schedChart is a chart 2.0.0 whose one template is manifest.
func schedChart(t *testing.T, manifest string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sched")
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: sched\nversion: 2.0.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "templates", "app.yaml"), []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRuntimeSchedulableUpgrade: the release's own running pods are not
// counted twice; a rolled Deployment frees its old pods' requests only as
// the rollout replaces them, so with maxUnavailable 0 its surge pods must
// fit beside the old ones.
func TestRuntimeSchedulableUpgrade(t *testing.T) {
	node := func(name string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"),
				corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	}
	// The release's running pod of app: 1500m of n1's 2 CPU.
	ctrl := true
	running := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "codefresh", Name: "app-5d8f-x1", Labels: map[string]string{"app": "app", "pod-template-hash": "5d8f"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "app-5d8f", UID: "u1", Controller: &ctrl}}},
		Spec:   corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app", Image: "app:1", Resources: requests("1500m", "256Mi", "")}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	deployed := schedDeployment("app:1", "1500m", 1, "")
	tests := []struct {
		name   string
		target string
		nodes  []runtime.Object
		want   outcome
	}{
		{"unchanged: its running pod is not placed again", deployed, []runtime.Object{node("n1")},
			outcome{StatusPass, []string{"0 new or replaced pods", "unchanged workloads keep 1 pod running", "the target sched 2.0.0 rendered by helm upgrade, against revision 1 (chart 1.0.0)"}}},
		{"Recreate: the old pod's requests are freed first", schedDeployment("app:2", "1500m", 1, "{type: Recreate}"), []runtime.Object{node("n1")},
			outcome{StatusPass, []string{"1 new or replaced pod after the rollout (the requests of 1 replaced pod of the release freed), 0 Deployments rolled"}}},
		{"maxUnavailable 1: the old pod may go first", schedDeployment("app:2", "1500m", 1, "{rollingUpdate: {maxUnavailable: 1}}"), []runtime.Object{node("n1")},
			outcome{StatusPass, []string{"0 Deployments rolled one new pod at a time"}}},
		{"default RollingUpdate: the surge pod fits nowhere beside the old one", schedDeployment("app:2", "1500m", 1, ""), []runtime.Object{node("n1")},
			outcome{StatusFail, []string{"during the rollout, beside the old pods still running: the new pods of 1 of 1 Deployments with maxUnavailable 0 fit nowhere, so their rollout stalls", "app (cpu 1500m, memory 256Mi)", "closest node n1 has free cpu 500m", "maxUnavailable to 1"}}},
		{"default RollingUpdate: a second node holds the surge pod", schedDeployment("app:2", "1500m", 1, ""), []runtime.Object{node("n1"), node("n2")},
			outcome{StatusPass, []string{"1 Deployment rolled one new pod at a time beside the old ones"}}},
		{"the target's pods fit nowhere even with the old ones gone", schedDeployment("app:2", "3", 1, "{type: Recreate}"), []runtime.Object{node("n1")},
			outcome{StatusFail, []string{"after the rollout, with the requests of the release's replaced pods freed: 1 of 1 new or replaced pods would stay Pending: app (cpu 3, memory 256Mi)"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := append([]runtime.Object{schedRelease(t, deployed), running}, tt.nodes...)
			tt.want.expect(t, newKit(t).objects(objs...).inMode(ModeUpgrade).withChart(schedChart(t, tt.target)).run(RuntimeSchedulable()))
		})
	}
}

// TestRuntimeSchedulableUpgradeCascade: a rollout that frees room lets
// another go on: app's new pod fits nowhere beside the old pods, b's does;
// once b's old pod goes, n2 holds app's. Not all new pods need room at once.
func TestRuntimeSchedulableUpgradeCascade(t *testing.T) {
	node := func(name string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"),
				corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	}
	ctrl := true
	pod := func(owner, node, cpu string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "codefresh", Name: owner + "-h1-x", Labels: map[string]string{"app": owner, "pod-template-hash": "h1"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner + "-h1", UID: "u-" + types.UID(owner), Controller: &ctrl}}},
			Spec:   corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "old", Resources: requests(cpu, "256Mi", "")}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	deployed := namedDeployment("app", "old", "1500m", 1, "") + "---\n" + namedDeployment("b", "old", "1", 1, "")
	objs := []runtime.Object{schedRelease(t, deployed), pod("app", "n1", "1500m"), pod("b", "n2", "1"), node("n1"), node("n2")}
	cascade := namedDeployment("app", "new", "1500m", 1, "") + "---\n" + namedDeployment("b", "new", "400m", 1, "")
	outcome{StatusPass, []string{"2 Deployments rolled one new pod at a time"}}.expect(t,
		newKit(t).objects(objs...).inMode(ModeUpgrade).withChart(schedChart(t, cascade)).run(RuntimeSchedulable()))
	// b's new pod needs 600m: it goes on n2 beside its old one, which then
	// leaves n2 1400m free, not the 1500m app's new pod needs.
	stall := namedDeployment("app", "new", "1500m", 1, "") + "---\n" + namedDeployment("b", "new", "600m", 1, "")
	outcome{StatusFail, []string{"the new pods of 1 of 2 Deployments with maxUnavailable 0 fit nowhere", "stalls with the old pods kept: app (cpu 1500m, memory 256Mi); closest node n2 has free cpu 1400m"}}.expect(t,
		newKit(t).objects(objs...).inMode(ModeUpgrade).withChart(schedChart(t, stall)).run(RuntimeSchedulable()))
}
