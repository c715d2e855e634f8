package checks

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

func schedNode(name, cpu, mem string, labels map[string]string, taints ...corev1.Taint) cluster.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem),
				corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	return cluster.NodeFrom(n)
}

func onePod(name, cpu, mem string) RuntimePodSpec {
	return RuntimePodSpec{Name: name, Replicas: 1, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Resources: requests(cpu, mem, "")}}}}
}

func TestFitRuntimePodsFirstFitDecreasing(t *testing.T) {
	// Two 1-cpu nodes: 600m+600m+300m+300m fits only when the large pods go
	// first (first-fit in the given order would split the 600m pods badly).
	specs := []RuntimePodSpec{onePod("a", "300m", "1Mi"), onePod("b", "300m", "1Mi"), onePod("c", "600m", "2Mi"), onePod("d", "600m", "2Mi")}
	nodes := []cluster.Node{schedNode("n1", "1", "1Gi", nil), schedNode("n2", "1", "1Gi", nil)}
	if v := FitRuntimePods(specs, nodes, nil); len(v.Unfit) != 0 || v.Pods != 4 || v.Nodes != 2 {
		t.Fatalf("verdict %+v, want all 4 placed on 2 nodes", v)
	}
	// Pods already bound on n1 take its room: one 600m pod is left over.
	v := FitRuntimePods(specs, nodes, map[string]cluster.NodeUsage{"n1": {MilliCPU: 500, Pods: 3}})
	if len(v.Unfit) != 1 || !strings.HasPrefix(v.Unfit[0], "d (cpu 600m") || !v.ClosestFound || v.Closest.Node.Name != "n1" {
		t.Fatalf("verdict %+v, want one pod unfit, closest n1", v)
	}
	if v.Closest.MilliCPU != 500 {
		t.Fatalf("closest free cpu %d, want 500 (1000 - 500 bound, when the 600m pod was tried)", v.Closest.MilliCPU)
	}
}

func TestFitRuntimePodsSelectorsAndTaints(t *testing.T) {
	taint := corev1.Taint{Key: "dedicated", Value: "gitops", Effect: corev1.TaintEffectNoSchedule}
	nodes := []cluster.Node{schedNode("tainted", "8", "16Gi", map[string]string{"pool": "gitops"}, taint), schedNode("plain", "8", "16Gi", map[string]string{"pool": "general"})}
	p := onePod("x", "100m", "100Mi")
	p.Spec.NodeSelector = map[string]string{"pool": "gitops"}
	if v := FitRuntimePods([]RuntimePodSpec{p}, nodes, nil); len(v.Unfit) != 1 || v.ClosestFound {
		t.Fatalf("untolerated taint: verdict %+v, want unfit with no eligible node", v)
	}
	p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gitops", Effect: corev1.TaintEffectNoSchedule}}
	if v := FitRuntimePods([]RuntimePodSpec{p}, nodes, nil); len(v.Unfit) != 0 {
		t.Fatalf("tolerated: verdict %+v, want placed", v)
	}
	// A node that reports no ephemeral-storage cannot hold cap-app-proxy.
	capProxy := defaultRuntimePods()[9]
	if capProxy.Name != "cap-app-proxy" {
		t.Fatalf("defaultRuntimePods()[9] = %s", capProxy.Name)
	}
	bare := schedNode("no-eph", "8", "16Gi", nil)
	bare.AllocatableEphemeralBytes = 0
	if v := FitRuntimePods([]RuntimePodSpec{capProxy}, []cluster.Node{bare}, nil); len(v.Unfit) != 1 {
		t.Fatalf("verdict %+v, want cap-app-proxy unfit for lack of ephemeral-storage", v)
	}
}

func TestRuntimePodsFromManifest(t *testing.T) {
	manifest := `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  template:
    spec:
      containers: [{name: web, resources: {requests: {cpu: 100m}}}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: pre
  annotations: {helm.sh/hook: "pre-install,pre-upgrade"}
spec:
  template: {spec: {containers: [{name: pre}]}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: cleanup
  annotations: {helm.sh/hook: pre-delete}
spec:
  template: {spec: {containers: [{name: c}]}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
`
	pods, err := RuntimePodsFromManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 || pods[0].Name != "web" || pods[0].Replicas != 3 || pods[1].Name != "pre" {
		t.Fatalf("pods %+v, want web×3 and the pre-install Job", pods)
	}
	if _, err := RuntimePodsFromManifest("kind: Deployment\nspec: [1"); err == nil {
		t.Fatal("broken YAML accepted")
	}
}

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
