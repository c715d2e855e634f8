package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	appsv1 "k8s.io/api/apps/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"
)

// testPods are pods of every shape PodRequests distinguishes: plain
// containers, init containers (sidecars among them), overhead, pod-level
// resources, with the metadata, probes, env and status a real pod carries.
func testPods() []*corev1.Pod {
	req := func(cpu, mem string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		}
	}
	meta := func(i int) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "ns", Labels: map[string]string{"app": "x"},
			Annotations:   map[string]string{"a": "b"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: bytes.Repeat([]byte("f"), 500)}}}}
	}
	ctr := func(name string, r corev1.ResourceRequirements) corev1.Container {
		return corev1.Container{Name: name, Image: "registry/" + name + ":1", Args: []string{"--x"}, Env: []corev1.EnvVar{{Name: "E", Value: "v"}},
			Resources:      r,
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}}
	}
	sidecar := ctr("sidecar", req("300m", "300Mi"))
	sidecar.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	running := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "registry/app:1", ImageID: "sha256:abc"}}}
	return []*corev1.Pod{
		{ObjectMeta: meta(1), Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{ctr("app", req("100m", "128Mi")), ctr("b", req("50m", "64Mi"))}}, Status: running},
		{ObjectMeta: meta(2), Spec: corev1.PodSpec{NodeName: "n1", InitContainers: []corev1.Container{ctr("init", req("2", "2Gi"))},
			Containers: []corev1.Container{ctr("app", req("100m", "128Mi"))}}, Status: running},
		{ObjectMeta: meta(3), Spec: corev1.PodSpec{NodeName: "n2", InitContainers: []corev1.Container{sidecar, ctr("init", req("1", "1Gi"))},
			Containers: []corev1.Container{ctr("app", req("100m", "128Mi"))},
			Overhead:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")}}, Status: running},
		{ObjectMeta: meta(4), Spec: corev1.PodSpec{NodeName: "n2", Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("3Gi")}},
			Containers: []corev1.Container{ctr("app", corev1.ResourceRequirements{})}}, Status: corev1.PodStatus{Phase: corev1.PodPending}},
		{ObjectMeta: meta(5), Spec: corev1.PodSpec{NodeName: "n3", Containers: []corev1.Container{ctr("app", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}})}}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
		{ObjectMeta: meta(6), Spec: corev1.PodSpec{Containers: []corev1.Container{ctr("app", req("1", "1Gi"))}}, Status: corev1.PodStatus{Phase: corev1.PodPending}},
	}
}

// encodeProtobuf encodes obj as the API server does (magic, envelope).
func encodeProtobuf(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	obj = obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSlimPodRequests: every pod's requests, node and phase are the same
// decoded whole (client-go) and decoded slim.
func TestSlimPodRequests(t *testing.T) {
	var sc podScratch
	for _, p := range testPods() {
		kind, raw, err := unwrap(encodeProtobuf(t, p))
		if err != nil || string(kind) != "Pod" {
			t.Fatalf("%s: %q %v", p.Name, kind, err)
		}
		slim, err := slimPod(raw, &sc)
		if err != nil {
			t.Fatal(err)
		}
		want := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
		got := resourcehelper.PodRequests(slim, resourcehelper.PodResourcesOptions{})
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
			if w, g := want[r], got[r]; w.Cmp(g) != 0 {
				t.Errorf("%s %s: %s slim, %s whole", p.Name, r, g.String(), w.String())
			}
		}
		if slim.Spec.NodeName != p.Spec.NodeName || slim.Status.Phase != p.Status.Phase {
			t.Errorf("%s: node %q phase %q, want %q %q", p.Name, slim.Spec.NodeName, slim.Status.Phase, p.Spec.NodeName, p.Status.Phase)
		}
		if slim.Labels != nil || slim.Spec.Containers[0].Image != "" || slim.Spec.Containers[0].Env != nil {
			t.Errorf("%s: slim pod kept %v %q %v", p.Name, slim.Labels, slim.Spec.Containers[0].Image, slim.Spec.Containers[0].Env)
		}
	}
}

// watchFrame is one protobuf watch event as the API server frames it.
func watchFrame(t testing.TB, typ string, obj runtime.Object) []byte {
	t.Helper()
	ev := &metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: encodeProtobuf(t, obj)}}
	var buf bytes.Buffer
	w := protobuf.LengthDelimitedFramer.NewFrameWriter(&buf)
	// The stream serializer the API server frames events with: raw protobuf.
	var raw bytes.Buffer
	if err := protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme).Encode(ev, &raw); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(raw.Bytes()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPodStream: BoundPodRequests over a protobuf streaming list folds the
// pods as the paginated LIST of the same pods does, in one request.
func TestPodStream(t *testing.T) {
	pods := testPods()
	var stream bytes.Buffer
	for _, p := range pods {
		stream.Write(watchFrame(t, "ADDED", p))
	}
	stream.Write(watchFrame(t, "BOOKMARK", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}))
	list := &corev1.PodList{}
	for _, p := range pods {
		list.Items = append(list.Items, *p)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case r.URL.Path == "/version":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"major":"1","minor":"36","gitVersion":"v1.36.3"}`)
		case q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true" && q.Get("fieldSelector") == ActivePodsSelector:
			w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch")
			_, _ = w.Write(stream.Bytes())
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			t.Errorf("unexpected request %s", r.URL)
		}
	}))
	defer srv.Close()
	c, err := NewClients(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewSnapshot(context.Background(), c).BoundPodRequests()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]NodeUsage{}
	for i := range list.Items {
		addPodRequests(want, &list.Items[i], corev1.ResourceList{})
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(want) != 2 {
		t.Errorf("streamed %v, want %v", got, want)
	}
	if c.Requests.Load() != 2 {
		t.Errorf("%d requests, want 2 (/version and the stream)", c.Requests.Load())
	}
}

// TestPodStreamNotProtobuf: a JSON watch stream (a server that ignored the
// Accept header) is not read as frames: the pods are listed in pages.
func TestPodStreamNotProtobuf(t *testing.T) {
	json := []byte(`{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}}}` + "\n")
	var sc podScratch
	decode := func(raw []byte) (runtime.Object, error) { return slimPod(raw, &sc) }
	_, _, err := readFrames(bufio.NewReader(bytes.NewReader(json)), "Pod", decode, func(runtime.Object) error { return nil })
	if !errors.Is(err, errNotProtobuf) || !streamRefused(err) {
		t.Errorf("error %v, want errNotProtobuf (refused: read in pages)", err)
	}
	var stream bytes.Buffer
	stream.Write(watchFrame(t, "ADDED", testPods()[0]))
	stream.Write([]byte{0, 0, 0, 3, 1, 2, 3}) // a later frame that does not parse
	n, _, err := readFrames(bufio.NewReader(&stream), "Pod", decode, func(runtime.Object) error { return nil })
	if n != 1 || err == nil || errors.Is(err, errNotProtobuf) {
		t.Errorf("%d pods, error %v; want 1 and a decoding error", n, err)
	}
}

// TestSlimSummaries: the summaries of Deployments and nodes decoded through
// deploymentFields and nodeFields are those of the whole objects, over the
// real-world workloads of checks/testdata/conflicts and nodes of every
// shape NodeFrom reads.
func TestSlimSummaries(t *testing.T) {
	f, err := os.Open("../../checks/testdata/conflicts/workloads.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	deployments := 0
	for {
		var d appsv1.Deployment
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if d.Kind != "Deployment" {
			continue
		}
		d.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "helm", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}}}
		d.ResourceVersion = "17"
		d.Status = appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: 1, AvailableReplicas: 1}
		_, raw, err := unwrap(encodeProtobuf(t, &d))
		if err != nil {
			t.Fatal(err)
		}
		slim, err := slimDeployment(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := DeploymentFrom(slim.(*appsv1.Deployment)), DeploymentFrom(&d); !reflect.DeepEqual(got, want) {
			t.Errorf("%s/%s:\nslim  %+v\nwhole %+v", d.Namespace, d.Name, got, want)
		}
		deployments++
	}
	if deployments < 5 {
		t.Fatalf("only %d Deployments in the testdata", deployments)
	}
	labels := map[string]string{"app.kubernetes.io/name": "ingress-nginx"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx-controller", Namespace: "ingress-nginx", ResourceVersion: "3", Labels: labels,
			Annotations: map[string]string{"meta.helm.sh/release-name": "ingress-nginx", "meta.helm.sh/release-namespace": "ingress-nginx", "deployment.kubernetes.io/revision": "2"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": "ingress-nginx", "pod": "x"}},
				Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}}, Containers: []corev1.Container{{
					Name: "controller", Image: "registry.k8s.io/ingress-nginx/controller:v1.11.2", Command: []string{"/nginx-ingress-controller"},
					Args: []string{"--publish-service=$(POD_NAMESPACE)/ingress-nginx-controller", "--ingress-class=nginx"}, Env: []corev1.EnvVar{{Name: "POD_NAMESPACE"}}}}}}},
		Status: appsv1.DeploymentStatus{Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 2},
	}
	_, raw, err := unwrap(encodeProtobuf(t, d))
	if err != nil {
		t.Fatal(err)
	}
	slim, err := slimDeployment(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := DeploymentFrom(slim.(*appsv1.Deployment)), DeploymentFrom(d); !reflect.DeepEqual(got, want) || len(got.Containers[0].Args) != 2 || got.Desired != 3 {
		t.Errorf("ingress-nginx:\nslim  %+v\nwhole %+v", got, want)
	}
	nodes := []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"kubernetes.io/os": "linux"}, Annotations: map[string]string{"x": "y"}},
			Spec: corev1.NodeSpec{ProviderID: "aws:///eu-west-1a/i-1", Taints: []corev1.Taint{{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoSchedule}, {Key: "p", Effect: corev1.TaintEffectPreferNoSchedule}}},
			Status: corev1.NodeStatus{
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3920m"), corev1.ResourceMemory: resource.MustParse("15Gi"), corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("90Gi")},
				Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				Images:      []corev1.ContainerImage{{Names: []string{"registry/x:1"}, SizeBytes: 1 << 20}},
				NodeInfo:    corev1.NodeSystemInfo{KubeletVersion: "v1.36.3"},
			}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: corev1.NodeSpec{Unschedulable: true},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}}},
	}
	for _, n := range nodes {
		_, raw, err := unwrap(encodeProtobuf(t, n))
		if err != nil {
			t.Fatal(err)
		}
		slim, err := slimNode(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := NodeFrom(slim.(*corev1.Node)), NodeFrom(n); !reflect.DeepEqual(got, want) {
			t.Errorf("node %s:\nslim  %+v\nwhole %+v", n.Name, got, want)
		}
	}
}

// TestPodStreamBroken: a streaming list that breaks in the middle of a frame.
// Closed (a cut or a reset): the pods are read in pages, and the result is
// the list's. Stalled (nothing more, the connection open): the read ends
// when the request's timeout does, the list fails naming the stall, and no
// page is asked for (each would stall for another timeout).
func TestPodStreamBroken(t *testing.T) {
	pods := testPods()
	first, second := watchFrame(t, "ADDED", pods[0]), watchFrame(t, "ADDED", pods[1])
	list := &corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
	for _, p := range pods {
		item := *p.DeepCopy()
		item.ManagedFields = nil
		list.Items = append(list.Items, item)
	}
	listJSON, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	for _, stall := range []bool{false, true} {
		var lists atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path == "/version":
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"major":"1","minor":"36","gitVersion":"v1.36.3"}`)
			case r.URL.Query().Get("watch") == "true":
				w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch")
				_, _ = w.Write(first)
				_, _ = w.Write(second[:len(second)/2])
				w.(http.Flusher).Flush()
				if stall {
					<-r.Context().Done()
					return
				}
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
			default:
				lists.Add(1)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(listJSON)
			}
		}))
		const timeout = 2 * time.Second
		c, err := NewClients(&rest.Config{Host: srv.URL, Timeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		got, err := NewSnapshot(context.Background(), c).BoundPodRequests()
		took := time.Since(start)
		srv.Close()
		if stall {
			if err == nil || !strings.Contains(err.Error(), "pods") || !strings.Contains(err.Error(), "stalled after 1 objects") {
				t.Errorf("stalled stream: error %v, want the pods list to fail as stalled", err)
			}
			if lists.Load() != 0 {
				t.Errorf("stalled stream: %d pages asked for, want none", lists.Load())
			}
			if took > timeout+time.Second {
				t.Errorf("stalled stream: took %s with a request timeout of %s", took, timeout)
			}
			continue
		}
		if err != nil || lists.Load() != 1 || len(got) != 2 {
			t.Errorf("cut stream: %v, error %v, %d lists; want the pages' result", got, err, lists.Load())
		}
	}
}
