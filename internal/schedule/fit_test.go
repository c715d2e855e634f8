package schedule

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
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

func onePod(name, cpu, mem string) PodSpec {
	return PodSpec{Name: name, Replicas: 1, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Resources: requests(cpu, mem, "")}}}}
}

func TestFitFirstFitDecreasing(t *testing.T) {
	// Two 1-cpu nodes: 600m+600m+300m+300m fits only when the large pods go
	// first (first-fit in the given order would split the 600m pods badly).
	specs := []PodSpec{onePod("a", "300m", "1Mi"), onePod("b", "300m", "1Mi"), onePod("c", "600m", "2Mi"), onePod("d", "600m", "2Mi")}
	nodes := []cluster.Node{schedNode("n1", "1", "1Gi", nil), schedNode("n2", "1", "1Gi", nil)}
	if v := Fit(specs, nodes, nil); len(v.Unfit) != 0 || v.Pods != 4 || v.Nodes != 2 || v.MilliCPU != 1800 {
		t.Fatalf("verdict %+v, want all 4 placed on 2 nodes", v)
	}
	// Pods already bound on n1 take its room: one 600m pod is left over.
	v := Fit(specs, nodes, map[string]cluster.NodeUsage{"n1": {MilliCPU: 500, Pods: 3}})
	if len(v.Unfit) != 1 || v.Unfit[0].Name != "d" || v.Unfit[0].MilliCPU != 600 || !v.ClosestFound || v.Closest.Node.Name != "n1" {
		t.Fatalf("verdict %+v, want one pod unfit, closest n1", v)
	}
	if v.Closest.MilliCPU != 500 {
		t.Fatalf("closest free cpu %d, want 500 (1000 - 500 bound, when the 600m pod was tried)", v.Closest.MilliCPU)
	}
	// Replicas are placed one by one, each named.
	three := onePod("r", "400m", "1Mi")
	three.Replicas = 3
	if v := Fit([]PodSpec{three}, nodes[:1], nil); len(v.Unfit) != 1 || v.Unfit[0].Name != "r (3 of 3)" {
		t.Fatalf("replicas: %+v", v)
	}
	// A cordoned or not Ready node is no room at all.
	cordoned := schedNode("n3", "8", "8Gi", nil)
	cordoned.Unschedulable = true
	if v := Fit(specs, []cluster.Node{cordoned}, nil); v.Nodes != 0 || len(v.Unfit) != 4 || v.ClosestFound {
		t.Fatalf("cordoned: %+v", v)
	}
}

func TestFitSelectorsAndTaints(t *testing.T) {
	taint := corev1.Taint{Key: "dedicated", Value: "gitops", Effect: corev1.TaintEffectNoSchedule}
	nodes := []cluster.Node{schedNode("tainted", "8", "16Gi", map[string]string{"pool": "gitops"}, taint), schedNode("plain", "8", "16Gi", map[string]string{"pool": "general"})}
	p := onePod("x", "100m", "100Mi")
	p.Spec.NodeSelector = map[string]string{"pool": "gitops"}
	if v := Fit([]PodSpec{p}, nodes, nil); len(v.Unfit) != 1 || v.ClosestFound {
		t.Fatalf("untolerated taint: verdict %+v, want unfit with no eligible node", v)
	}
	p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gitops", Effect: corev1.TaintEffectNoSchedule}}
	if v := Fit([]PodSpec{p}, nodes, nil); len(v.Unfit) != 0 {
		t.Fatalf("tolerated: verdict %+v, want placed", v)
	}
	// A node that reports no ephemeral-storage cannot hold cap-app-proxy.
	capProxy := DefaultPods()[9]
	if capProxy.Name != "cap-app-proxy" {
		t.Fatalf("DefaultPods()[9] = %s", capProxy.Name)
	}
	bare := schedNode("no-eph", "8", "16Gi", nil)
	bare.AllocatableEphemeralBytes = 0
	if v := Fit([]PodSpec{capProxy}, []cluster.Node{bare}, nil); len(v.Unfit) != 1 || v.Unfit[0].EphemeralBytes == 0 {
		t.Fatalf("verdict %+v, want cap-app-proxy unfit for lack of ephemeral-storage", v)
	}
}

func TestNodePlatforms(t *testing.T) {
	amd := schedNode("a", "1", "1Gi", map[string]string{"kubernetes.io/arch": "amd64"})
	arm := schedNode("b", "1", "1Gi", map[string]string{"kubernetes.io/arch": "arm64", "kubernetes.io/os": "linux", "pool": "arm"})
	win := schedNode("c", "1", "1Gi", map[string]string{"kubernetes.io/arch": "amd64", "kubernetes.io/os": "windows"},
		corev1.Taint{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule})
	bare := schedNode("d", "1", "1Gi", nil)
	nodes := []cluster.Node{amd, arm, win, bare}
	if got := NodePlatforms(corev1.PodSpec{}, nodes); !slices.Equal(got, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("any node: %q", got)
	}
	if got := NodePlatforms(corev1.PodSpec{NodeSelector: map[string]string{"pool": "arm"}}, nodes); !slices.Equal(got, []string{"linux/arm64"}) {
		t.Errorf("the arm pool: %q", got)
	}
}

// TestInstallPodsOfManifest: a manifest's Deployments × replicas and the
// Jobs that run at install; a pre-delete hook and other kinds left out.
func TestInstallPodsOfManifest(t *testing.T) {
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
	objs, err := chart.ManifestObjects(manifest)
	if err != nil {
		t.Fatal(err)
	}
	all, err := WorkloadsOf(objs)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[2].Hook != "pre-delete" {
		t.Fatalf("workloads %+v", all)
	}
	pods := InstallPods(all)
	if len(pods) != 2 || pods[0].Name != "web" || pods[0].Replicas != 3 || pods[0].Kind != "Deployment" || pods[1].Name != "pre" {
		t.Fatalf("pods %+v, want web×3 and the pre-install Job", pods)
	}
	if CountPods(pods) != 4 {
		t.Errorf("CountPods %d", CountPods(pods))
	}
	bad := []chart.Object{{Kind: "Deployment", Name: "x", JSON: []byte(`{"spec": [1]}`)}}
	if _, err := WorkloadsOf(bad); err == nil {
		t.Fatal("a Deployment that does not decode accepted")
	}
}
