package cluster

import (
	"bufio"
	"bytes"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// The per-page work of a run on a large cluster: decode one LIST page of
// PageSize objects and summarise each. Protobuf (what the typed client asks
// for) against JSON shows why the Kubernetes client is built for protobuf.
// These benchmarks measure; they assert only the result.

func benchDeployment(i int) appsv1.Deployment {
	app := fmt.Sprintf("app-%05d", i)
	labels := map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/instance": app}
	replicas := int32(2)
	return appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{Kind: "Deployment", APIVersion: "apps/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: fmt.Sprintf("bench-%04d", i%2000), UID: "0b4c8a6e-3f0e-4c1e-9d35-6f4a2f1b8c7d", ResourceVersion: "123456",
			Labels:      map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "service-1.4.2"},
			Annotations: map[string]string{"meta.helm.sh/release-name": app, "deployment.kubernetes.io/revision": "3"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "registry.example.com/team/" + app + ":1.4.2", Args: []string{"--port=8080", "--log-level=info"},
					Env: []corev1.EnvVar{{Name: "APP_NAME", Value: app}},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
				}}},
			},
		},
		Status: appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2},
	}
}

func encodedDeploymentPage(b *testing.B, mediaType string) []byte {
	b.Helper()
	list := &appsv1.DeploymentList{TypeMeta: metav1.TypeMeta{Kind: "DeploymentList", APIVersion: "apps/v1"}}
	for i := 0; i < PageSize; i++ {
		list.Items = append(list.Items, benchDeployment(i))
	}
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		b.Fatalf("no serializer for %s", mediaType)
	}
	enc := scheme.Codecs.EncoderForVersion(info.Serializer, appsv1.SchemeGroupVersion)
	data, err := runtime.Encode(enc, list)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func benchDecodePage(b *testing.B, mediaType string) {
	data := encodedDeploymentPage(b, mediaType)
	info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
	dec := scheme.Codecs.DecoderToVersion(info.Serializer, appsv1.SchemeGroupVersion)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		obj, err := runtime.Decode(dec, data)
		if err != nil {
			b.Fatal(err)
		}
		list := obj.(*appsv1.DeploymentList)
		out := make([]Workload, 0, len(list.Items))
		for i := range list.Items {
			out = append(out, DeploymentFrom(&list.Items[i]))
		}
		if len(out) != PageSize || out[7].Name != "app-00007" {
			b.Fatalf("decoded %d", len(out))
		}
	}
}

// BenchmarkDeploymentPageProtobuf decodes and summarises one page of 500
// Deployments sent as protobuf.
func BenchmarkDeploymentPageProtobuf(b *testing.B) {
	benchDecodePage(b, runtime.ContentTypeProtobuf)
}

// BenchmarkDeploymentPageJSON is the same page sent as JSON.
func BenchmarkDeploymentPageJSON(b *testing.B) { benchDecodePage(b, runtime.ContentTypeJSON) }

// BenchmarkNodeFrom summarises 5,000 nodes.
func BenchmarkNodeFrom(b *testing.B) {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3920m"), corev1.ResourceMemory: resource.MustParse("15038088Ki")}
	nodes := make([]corev1.Node, 5000)
	for i := range nodes {
		nodes[i] = corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i)},
			Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Allocatable: res, Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for i := range nodes {
			if n := NodeFrom(&nodes[i]); !n.Ready || n.AllocatableMilliCPU != 3920 {
				b.Fatalf("summary %+v", n)
			}
		}
	}
}

// benchPodPage returns one LIST page (PageSize pods) of Running pods bound
// round-robin to nodes nodes, each with cpu and memory requests, encoded as
// protobuf as the apiserver sends it to BoundPodRequests.
var (
	benchSpecFields   = []byte(`{"f:metadata":{"f:labels":{".":{},"f:app.kubernetes.io/name":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{},"f:resources":{".":{},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}}}}}}`)
	benchStatusFields = []byte(`{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"Ready\"}":{".":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{}}}`)
)

func benchPodPage(b *testing.B, first, nodes int) []byte {
	b.Helper()
	list := &corev1.PodList{Items: make([]corev1.Pod, PageSize)}
	for j := range list.Items {
		i := first + j
		list.Items[j] = corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%05d-%d", i/2, i), Namespace: fmt.Sprintf("ns-%04d", i%2000),
				Labels: map[string]string{"app.kubernetes.io/name": fmt.Sprintf("app-%05d", i/2)},
				// What a real pod carries beside: field ownership of its
				// creator and of the kubelet.
				ManagedFields: []metav1.ManagedFieldsEntry{
					{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: benchSpecFields}},
					{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1", Subresource: "status", FieldsV1: &metav1.FieldsV1{Raw: benchStatusFields}},
				}},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%nodes), Containers: []corev1.Container{{
				Name: "app", Image: "registry.example.com/app:1.4.2",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
			}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1", HostIP: "10.1.0.1",
				Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.ContainersReady, Status: corev1.ConditionTrue}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, Image: "registry.example.com/app:1.4.2", ImageID: "registry.example.com/app@sha256:0123456789abcdef", ContainerID: "containerd://0123456789abcdef"}}},
		}
	}
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		b.Fatal("no protobuf serializer")
	}
	data, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion), list)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkBoundPodRequestsFold is the runtime-schedulable check's pod
// work at the scale of make bench: 30,000 Running pods (60 protobuf pages of
// PageSize) bound to 5,000 nodes, each page decoded and folded into per-node
// sums as BoundPodRequests does.
func BenchmarkBoundPodRequestsFold(b *testing.B) {
	const pods, nodes = 30000, 5000
	pages := make([][]byte, pods/PageSize)
	size := 0
	for k := range pages {
		pages[k] = benchPodPage(b, k*PageSize, nodes)
		size += len(pages[k])
	}
	info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	dec := scheme.Codecs.DecoderToVersion(info.Serializer, corev1.SchemeGroupVersion)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		out := map[string]NodeUsage{}
		reuse := corev1.ResourceList{}
		for _, data := range pages {
			obj, err := runtime.Decode(dec, data)
			if err != nil {
				b.Fatal(err)
			}
			list := obj.(*corev1.PodList)
			for i := range list.Items {
				addPodRequests(out, &list.Items[i], reuse)
			}
		}
		if u := out["node-7"]; len(out) != nodes || u.Pods != pods/nodes || u.MilliCPU != 600 || u.MemoryBytes != 6*128<<20 {
			b.Fatalf("%d nodes, node-7 %+v", len(out), u)
		}
	}
}

// BenchmarkPodStreamFold is the same work as BenchmarkBoundPodRequestsFold
// (the same 30,000 pods, 5,000 nodes) as the plugin does it on a server
// that streams lists: protobuf watch frames, each pod decoded slim
// (podStream) and folded.
func BenchmarkPodStreamFold(b *testing.B) {
	const pods, nodes = 30000, 5000
	var stream bytes.Buffer
	for k := 0; k < pods/PageSize; k++ {
		data := benchPodPage(b, k*PageSize, nodes)
		obj, err := runtime.Decode(scheme.Codecs.UniversalDeserializer(), data)
		if err != nil {
			b.Fatal(err)
		}
		for i := range obj.(*corev1.PodList).Items {
			stream.Write(watchFrame(b, "ADDED", &obj.(*corev1.PodList).Items[i]))
		}
	}
	stream.Write(watchFrame(b, "BOOKMARK", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}))
	b.SetBytes(int64(stream.Len()))
	b.ReportAllocs()
	for b.Loop() {
		out := map[string]NodeUsage{}
		reuse := corev1.ResourceList{}
		var sc podScratch
		n, _, err := readFrames(bufio.NewReader(bytes.NewReader(stream.Bytes())), "Pod",
			func(raw []byte) (runtime.Object, error) { return slimPod(raw, &sc) },
			func(obj runtime.Object) error { addPodRequests(out, obj.(*corev1.Pod), reuse); return nil })
		if err != nil || n != pods {
			b.Fatalf("%d pods, %v", n, err)
		}
		if u := out["node-7"]; len(out) != nodes || u.Pods != pods/nodes || u.MilliCPU != 600 || u.MemoryBytes != 6*128<<20 {
			b.Fatalf("%d nodes, node-7 %+v", len(out), u)
		}
	}
}
