// Command bench measures kubectl gitops-preflight on a large cluster (make
// bench). It starts the bare test control plane (internal/testcluster's
// StartBareLive: etcd and kube-apiserver from bin/k8s) with an audit log, seeds it concurrently with client-go
// (by default 5,000 Ready nodes, 30,000 Running pods bound to them, 2,000
// namespaces, 20,000 Services, 10,000 Deployments, the real Argo CD and Argo Rollouts CRDs, 50 other CRDs and an
// ingress-nginx controller), then measures, over -runs runs each:
//
//   - the full pre-install run and the --post run of the built plugin: wall
//     time, API requests (the plugin's own count through the hidden
//     --debug-request-count flag, cross-checked with the apiserver audit log,
//     which also shows whether any kind was listed twice) and peak RSS;
//   - the physical floor: the same kinds fetched as raw HTTP LISTs with curl,
//     concurrently, one request per kind, nothing decoded;
//   - the by-hand path: kubectl get nodes,ns,svc,deploy,ds,sts,crd,ingressclass,pods -A -o json.
//
// It prints a table and writes it, with the machine and date, to -out.
// The real CRD and ingress-nginx manifests are read from the shared upstream
// fixtures at run time (-fixtures); the bench fails when they are missing.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// scale is what to seed.
type scale struct {
	Nodes, Namespaces, Services, Deployments, OtherCRDs int
	// PodsPerNode are Running pods bound to each node, with requests, for
	// the runtime-schedulable check's list of all active pods.
	PodsPerNode int
	// ReleaseBombs are Helm release Secrets whose payload expands to ~760 MB
	// (each under 1 MiB stored): the plugin must stay within its memory figure.
	ReleaseBombs int
}

type config struct {
	scale
	plugin, assets, fixtures, out string
	runs, workers                 int
	keep                          bool
}

func main() {
	var c config
	flag.IntVar(&c.Nodes, "nodes", 5000, "Ready nodes to create")
	flag.IntVar(&c.Namespaces, "namespaces", 2000, "namespaces to create")
	flag.IntVar(&c.Services, "services", 20000, "headless Services to create (spread over the namespaces)")
	flag.IntVar(&c.Deployments, "deployments", 10000, "Deployments to create (spread over the namespaces)")
	flag.IntVar(&c.PodsPerNode, "pods-per-node", 6, "Running pods bound to each node, with cpu and memory requests (spread over the namespaces; 6 x 5,000 nodes = 30,000 pods)")
	flag.IntVar(&c.OtherCRDs, "other-crds", 50, "CRDs to create besides the Argo CD and Argo Rollouts ones")
	flag.IntVar(&c.ReleaseBombs, "release-bombs", 10, "Helm release Secrets whose gzip payload expands to ~760 MB (decompression bombs; 0: none)")
	flag.IntVar(&c.runs, "runs", 5, "runs of each measurement (the median is reported)")
	flag.IntVar(&c.workers, "workers", 48, "concurrent requests while seeding")
	flag.StringVar(&c.plugin, "plugin", "bin/kubectl-gitops_preflight", "the built plugin")
	flag.StringVar(&c.assets, "assets", envOr("KUBEBUILDER_ASSETS", "bin/k8s"), "directory holding etcd and kube-apiserver")
	flag.StringVar(&c.fixtures, "fixtures", os.Getenv("UPSTREAM_FIXTURES"), "upstream fixtures (default: $UPSTREAM_FIXTURES, else ../shared/fixtures/upstream)")
	flag.StringVar(&c.out, "out", "bench/results.md", "results file (empty: do not write)")
	flag.BoolVar(&c.keep, "keep", false, "after measuring, keep the cluster running until interrupted (prints its admin kubeconfig)")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func findFixtures(dir string) (string, error) {
	cands := []string{dir}
	if dir == "" {
		cands = []string{filepath.Join("..", "shared", "fixtures", "upstream")}
	}
	for _, d := range cands {
		if _, err := os.Stat(filepath.Join(d, "argo-cd", "install.yaml")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("upstream fixtures missing (looked in %s): the bench needs argo-cd/install.yaml, argo-rollouts/install.yaml and ingress-nginx/cloud.yaml", strings.Join(cands, ", "))
}

// auditPolicy logs, at Metadata level, only the requests of users in group
// bench:plugin (each plugin run has a user of its own), nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  userGroups: ["bench:plugin"]
- level: None
`

const pluginGroup = "bench:plugin"

func run(c config) error {
	start := time.Now()
	for _, p := range []string{c.plugin, filepath.Join(c.assets, "etcd"), filepath.Join(c.assets, "kube-apiserver")} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s missing: run `make build test-binaries` first (make bench does)", p)
		}
	}
	plugin, err := filepath.Abs(c.plugin)
	if err != nil {
		return err
	}
	fixtures, err := findFixtures(c.fixtures)
	if err != nil {
		return err
	}
	chartArgs = append(append([]string(nil), preArgs...), "--chart", filepath.Join(fixtures, "gitops-runtime", "chart", "gitops-runtime"),
		"--set", "global.runtime.name=bench", "--set", "global.codefresh.accountId=bench", "--set", "global.codefresh.userToken.token=not-a-token")
	for _, tool := range []string{"kubectl", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not on PATH: the bench times it as a reference", tool)
		}
	}
	if _, err := os.Stat(timeBin); err != nil {
		return fmt.Errorf("%s missing: the bench reads peak RSS with GNU time (apt-get install time)", timeBin)
	}
	dir, err := os.MkdirTemp("", "gitops-preflight-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	live, err := startControlPlane(c, dir)
	if err != nil {
		return err
	}
	defer live.Stop()
	fmt.Printf("control plane up in %s (etcd data in %s)\n", time.Since(start).Round(time.Millisecond), live.EtcdDataDir())

	seedStart := time.Now()
	if err := seed(c, live.Admin, live.Kubeconfig, fixtures, dir); err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	seedTime := time.Since(seedStart)
	fmt.Printf("seeded in %s\n", seedTime.Round(time.Second))

	m := &measurer{c: c, live: live, admin: live.Admin, plugin: plugin, dir: dir, adminKubeconfig: live.Kubeconfig}
	res, err := m.measure()
	if err != nil {
		if c.keep {
			fmt.Printf("error: %v\ncluster kept: KUBECONFIG=%s (Ctrl-C to stop)\n", err, m.adminKubeconfig)
			ch := make(chan os.Signal, 1)
			signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
			<-ch
		}
		return err
	}
	res.seedTime = seedTime
	res.total = time.Since(start)
	table := res.markdown(c)
	fmt.Println()
	fmt.Println(table)
	if c.out != "" {
		if err := os.MkdirAll(filepath.Dir(c.out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(c.out, []byte(table), 0o644); err != nil {
			return err
		}
		fmt.Printf("written to %s\n", c.out)
	}
	if c.keep {
		fmt.Printf("cluster kept: KUBECONFIG=%s (Ctrl-C to stop)\n", m.adminKubeconfig)
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		<-ch
	}
	return nil
}

// startControlPlane starts the bare test control plane (testcluster:
// etcd, data on tmpfs when /dev/shm is writable, and kube-apiserver; no
// scheduler, controllers or kubelet) with raised in-flight limits and the
// audit log, with the admin user the seeding and the references use.
func startControlPlane(c config, dir string) (*testcluster.Live, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	live, err := testcluster.StartBareLive(testcluster.BareOptions{
		Assets:       c.assets,
		EtcdOnTmpfs:  true, // the bench measures the plugin, not the disk
		StartTimeout: 120 * time.Second,
		StopTimeout:  60 * time.Second,
		EtcdFlags: map[string][]string{
			"quota-backend-bytes": {strconv.Itoa(8 << 30)},
			"unsafe-no-fsync":     {"true"},
		},
		APIServerFlags: map[string][]string{
			"audit-policy-file":              {policy},
			"audit-log-path":                 {filepath.Join(dir, "audit.log")},
			"audit-log-mode":                 {"blocking"},
			"audit-log-maxsize":              {"0"},
			"max-requests-inflight":          {"3000"},
			"max-mutating-requests-inflight": {"1500"},
			// Nodes are created as a kubelet registers them, status
			// included; on a bare apiserver nothing would remove the
			// not-ready taint TaintNodesByCondition adds on create, so the
			// plugin is turned off.
			"disable-admission-plugins": {"ServiceAccount", "TaintNodesByCondition"},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("starting control plane: %w", err)
	}
	return live, nil
}

// parallel runs f(0..n-1) on workers goroutines and returns the first error.
func parallel(ctx context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error { return f(ctx, i) })
	}
	return g.Wait()
}

func seedClient(admin *rest.Config) (*kubernetes.Clientset, error) {
	cfg := rest.CopyConfig(admin)
	cfg.QPS, cfg.Burst = 10000, 20000
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
	cfg.Timeout = 120 * time.Second
	return kubernetes.NewForConfig(cfg)
}

func seed(c config, admin *rest.Config, adminKubeconfig, fixtures, dir string) error {
	ctx := context.Background()
	kube, err := seedClient(admin)
	if err != nil {
		return err
	}
	ext, err := apiextensionsclient.NewForConfig(admin)
	if err != nil {
		return err
	}
	progress := func(what string, n int, t0 time.Time) {
		fmt.Printf("  %-40s %6d in %s\n", what, n, time.Since(t0).Round(time.Millisecond))
	}

	t0 := time.Now()
	if err := parallel(ctx, c.Namespaces, c.workers, func(ctx context.Context, i int) error {
		_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:   nsName(i),
			Labels: map[string]string{"team": fmt.Sprintf("team-%03d", i%150), "env": []string{"prod", "staging", "dev"}[i%3]},
		}}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("namespaces: %w", err)
	}
	progress("namespaces", c.Namespaces, t0)

	// CRDs first so they are Established while the bulk is being created.
	t0 = time.Now()
	crds, err := fixtureCRDs(fixtures)
	if err != nil {
		return err
	}
	for i := 0; i < c.OtherCRDs; i++ {
		crds = append(crds, otherCRD(i))
	}
	if err := parallel(ctx, len(crds), 8, func(ctx context.Context, i int) error {
		_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crds[i], metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("CRDs: %w", err)
	}
	progress(fmt.Sprintf("CRDs (Argo CD, Rollouts and %d others)", c.OtherCRDs), len(crds), t0)

	seedKind := func(what string, n int, f func(ctx context.Context, i int) error) error {
		t0 := time.Now()
		if err := parallel(ctx, n, c.workers, f); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		progress(what, n, t0)
		return nil
	}
	if err := seedKind("Ready nodes (status set)", c.Nodes, func(ctx context.Context, i int) error {
		return createNode(ctx, kube, i)
	}); err != nil {
		return err
	}
	// Services, Deployments and pods at once, each kind on its own workers.
	var g errgroup.Group
	g.Go(func() error {
		return seedKind("headless Services", c.Services, func(ctx context.Context, i int) error {
			_, err := kube.CoreV1().Services(nsName(i%c.Namespaces)).Create(ctx, service(i), metav1.CreateOptions{})
			return err
		})
	})
	g.Go(func() error {
		return seedKind("Deployments", c.Deployments, func(ctx context.Context, i int) error {
			_, err := kube.AppsV1().Deployments(nsName(i%c.Namespaces)).Create(ctx, deployment(i), metav1.CreateOptions{})
			return err
		})
	})
	g.Go(func() error {
		return seedKind("bound Running pods (status set)", c.Nodes*c.PodsPerNode, func(ctx context.Context, i int) error {
			return createBoundPod(ctx, kube, i%c.Nodes, i, nsName(i%c.Namespaces))
		})
	})
	if err := g.Wait(); err != nil {
		return err
	}

	if c.ReleaseBombs > 0 {
		t0 = time.Now()
		payload := testcluster.BombPayload(760 << 20)
		if err := parallel(ctx, c.ReleaseBombs, 4, func(ctx context.Context, i int) error {
			_, err := kube.CoreV1().Secrets(nsName(i%c.Namespaces)).Create(ctx, testcluster.BombSecret(nsName(i%c.Namespaces), fmt.Sprintf("bomb-%d", i), payload), metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("release bombs: %w", err)
		}
		progress(fmt.Sprintf("release-Secret bombs (%d KiB -> ~760 MB)", len(payload)>>10), c.ReleaseBombs, t0)
	}

	t0 = time.Now()
	if err := seedIngressNginx(ctx, kube, adminKubeconfig, fixtures, dir); err != nil {
		return fmt.Errorf("ingress-nginx: %w", err)
	}
	progress("ingress-nginx (real manifest, status set)", 1, t0)

	t0 = time.Now()
	if err := waitEstablished(ctx, ext, crds); err != nil {
		return err
	}
	progress("CRDs Established", len(crds), t0)
	return nil
}

func nsName(i int) string { return fmt.Sprintf("bench-%04d", i) }

var zones = []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"}

// nodeName is the name of the i-th node createNode makes.
func nodeName(i int) string {
	return fmt.Sprintf("ip-10-%d-%d-%d.eu-west-1.compute.internal", i/65536%256, i/256%256, i%256)
}

// createBoundPod creates pod i in namespace ns already bound to node
// (spec.nodeName set in the create, as the scheduler's binding would leave
// it), with cpu and memory requests, then writes status phase Running
// directly: the bench cluster has no scheduler to bind pods and no kubelet
// to run them or report their status, and a create drops the status it is
// sent.
func createBoundPod(ctx context.Context, kube kubernetes.Interface, node, i int, ns string) error {
	app := fmt.Sprintf("app-%05d", i/2)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:   fmt.Sprintf("%s-%08x-%05d", app, i, i%100000),
			Labels: map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/instance": app, "pod-template-hash": fmt.Sprintf("%08x", i/2)},
		},
		Spec: corev1.PodSpec{
			NodeName: nodeName(node),
			Containers: []corev1.Container{{
				Name:  "app",
				Image: fmt.Sprintf("registry.example.com/team-%03d/%s:1.4.2", i%150, app),
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
			}},
		},
	}
	created, err := kube.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	now := metav1.Now()
	created.Status = corev1.PodStatus{
		Phase:     corev1.PodRunning,
		HostIP:    fmt.Sprintf("10.%d.%d.%d", node/65536%256, node/256%256, node%256),
		PodIP:     fmt.Sprintf("100.%d.%d.%d", i/65536%256, i/256%256, i%256),
		StartTime: &now,
		QOSClass:  corev1.PodQOSBurstable,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", Ready: true, Image: p.Spec.Containers[0].Image, ImageID: fmt.Sprintf("registry.example.com/team-%03d/%s@sha256:%064x", i%150, app, i/2),
			ContainerID: fmt.Sprintf("containerd://%064x", i), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}},
	}
	_, err = kube.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}

// createNode creates a node as a kubelet registers it: status (allocatable,
// capacity, Ready and pressure conditions, addresses, node info, a few
// images) in the create.
func createNode(ctx context.Context, kube kubernetes.Interface, i int) error {
	name := nodeName(i)
	res := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("3920m"),
		corev1.ResourceMemory:           resource.MustParse("15038088Ki"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("95551679124"),
	}
	now := metav1.Now()
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: "kubelet reports " + reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	var images []corev1.ContainerImage
	for j := 0; j < 8; j++ {
		images = append(images, corev1.ContainerImage{
			Names:     []string{fmt.Sprintf("registry.example.com/platform/image-%d@sha256:%064d", j, j), fmt.Sprintf("registry.example.com/platform/image-%d:v1.%d.0", j, j)},
			SizeBytes: int64(50_000_000 + j*1_000_000),
		})
	}
	zone := zones[i%len(zones)]
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"node.kubernetes.io/instance-type": "m5.xlarge", "topology.kubernetes.io/zone": zone,
			"topology.kubernetes.io/region": "eu-west-1", "eks.amazonaws.com/nodegroup": fmt.Sprintf("ng-%d", i%20),
		}},
		Spec: corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///%s/i-%017x", zone, i)},
		Status: corev1.NodeStatus{
			Capacity: res, Allocatable: res,
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
				cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
				cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"),
			},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.%d.%d.%d", i/65536%256, i/256%256, i%256)}, {Type: corev1.NodeHostName, Address: name}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: fmt.Sprintf("%032x", i), SystemUUID: fmt.Sprintf("ec2%029x", i), BootID: fmt.Sprintf("%032x", i+1),
				KernelVersion: "6.1.119-129.201.amzn2023.x86_64", OSImage: "Amazon Linux 2023", ContainerRuntimeVersion: "containerd://1.7.23",
				KubeletVersion: "v1.31.3-eks-59bf375", KubeProxyVersion: "v1.31.3-eks-59bf375", OperatingSystem: "linux", Architecture: "amd64",
			},
			Images: images,
		},
	}
	created, err := kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	// The create keeps the status a kubelet sends; set it again if this
	// apiserver version dropped it.
	if len(created.Status.Conditions) == 0 {
		created.Status = n.Status
		_, err = kube.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	}
	return err
}

func service(i int) *corev1.Service {
	app := fmt.Sprintf("app-%05d", i/2)
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%05d", i), Labels: map[string]string{
			"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": fmt.Sprintf("system-%03d", i%300), "app.kubernetes.io/managed-by": "Helm",
		}, Annotations: map[string]string{"meta.helm.sh/release-name": app, "meta.helm.sh/release-namespace": nsName(i % 2000)}},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{"app.kubernetes.io/name": app},
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP},
				{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9090), Protocol: corev1.ProtocolTCP},
			},
		},
	}
}

func deployment(i int) *appsv1.Deployment {
	app := fmt.Sprintf("app-%05d", i)
	labels := map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/instance": app}
	replicas := int32(2)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: app, Labels: map[string]string{
			"app.kubernetes.io/name": app, "app.kubernetes.io/instance": app, "app.kubernetes.io/version": "1.4.2",
			"app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "service-1.4.2",
		}, Annotations: map[string]string{"meta.helm.sh/release-name": app, "meta.helm.sh/release-namespace": nsName(i % 2000), "deployment.kubernetes.io/revision": "3"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090"}},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:  "app",
						Image: fmt.Sprintf("registry.example.com/team-%03d/%s:1.4.2", i%150, app),
						Args:  []string{"--port=8080", "--metrics-port=9090", "--log-level=info"},
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "metrics", ContainerPort: 9090}},
						Env:   []corev1.EnvVar{{Name: "APP_NAME", Value: app}, {Name: "ENV", Value: "prod"}},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
						},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}},
					}},
				},
			},
		},
	}
}

var crdDoc = regexp.MustCompile(`(?m)^kind: CustomResourceDefinition\s*$`)

// fixtureCRDs reads the CustomResourceDefinitions of the real Argo CD and
// Argo Rollouts install manifests.
func fixtureCRDs(fixtures string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, rel := range []string{"argo-cd/install.yaml", "argo-rollouts/install.yaml"} {
		data, err := os.ReadFile(filepath.Join(fixtures, rel))
		if err != nil {
			return nil, fmt.Errorf("upstream fixture: %w", err)
		}
		n := 0
		for _, doc := range strings.Split(string(data), "\n---") {
			if !crdDoc.MatchString(doc) {
				continue
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.Unmarshal([]byte(doc), &crd); err != nil {
				return nil, fmt.Errorf("%s: %w", rel, err)
			}
			out = append(out, &crd)
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("no CRD in upstream fixture %s", rel)
		}
	}
	return out, nil
}

func otherCRD(i int) *apiextensionsv1.CustomResourceDefinition {
	group := fmt.Sprintf("team%02d.bench.example.com", i%10)
	plural := fmt.Sprintf("widgets%02d", i)
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group, Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: fmt.Sprintf("widget%02d", i), Kind: fmt.Sprintf("Widget%02d", i), ListKind: fmt.Sprintf("Widget%02dList", i)},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", XPreserveUnknownFields: &preserve},
						"status": {Type: "object", XPreserveUnknownFields: &preserve},
					},
				}},
			}},
		},
	}
}

func waitEstablished(ctx context.Context, ext apiextensionsclient.Interface, crds []*apiextensionsv1.CustomResourceDefinition) error {
	deadline := time.Now().Add(2 * time.Minute)
	for _, want := range crds {
		for {
			got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, want.Name, metav1.GetOptions{})
			if err == nil && established(got) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s not Established after 2m (%w)", want.Name, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

func established(c *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

var webhookDoc = regexp.MustCompile(`(?m)^kind: (Validating|Mutating)WebhookConfiguration`)

// seedIngressNginx applies the real ingress-nginx (cloud) manifest without
// its admission webhook configuration (no pod serves it here), then sets the
// statuses a running cluster would: the controller Deployment available and
// the LoadBalancer Service's address (127.0.0.1, so that any probe of it
// stays on this machine).
func seedIngressNginx(ctx context.Context, kube kubernetes.Interface, kc, fixtures, dir string) error {
	data, err := os.ReadFile(filepath.Join(fixtures, "ingress-nginx", "cloud.yaml"))
	if err != nil {
		return fmt.Errorf("upstream fixture: %w", err)
	}
	var keep []string
	for _, doc := range strings.Split(string(data), "\n---") {
		if !webhookDoc.MatchString(doc) {
			keep = append(keep, doc)
		}
	}
	f := filepath.Join(dir, "ingress-nginx.yaml")
	if err := os.WriteFile(f, []byte(strings.Join(keep, "\n---")), 0o600); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kc, "apply", "--server-side", "-f", f).CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply: %w\n%s", err, out)
	}
	d, err := kube.AppsV1().Deployments("ingress-nginx").Get(ctx, "ingress-nginx-controller", metav1.GetOptions{})
	if err != nil {
		return err
	}
	d.Status.Replicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas, d.Status.UpdatedReplicas = 1, 1, 1, 1
	if _, err := kube.AppsV1().Deployments("ingress-nginx").UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		return err
	}
	s, err := kube.CoreV1().Services("ingress-nginx").Get(ctx, "ingress-nginx-controller", metav1.GetOptions{})
	if err != nil {
		return err
	}
	s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "127.0.0.1"}}
	_, err = kube.CoreV1().Services("ingress-nginx").UpdateStatus(ctx, s, metav1.UpdateOptions{})
	return err
}

// ---- measuring ----

type measurer struct {
	c               config
	live            *testcluster.Live
	admin           *rest.Config
	plugin, dir     string
	adminKubeconfig string
}

// sample is one timed run of a program.
type sample struct {
	wall     time.Duration
	rssKB    int64
	requests int64 // the plugin's own count (total)
	pages    int64 // of which list continuation pages
	audit    auditCount
	bytes    int64
	code     int
	user     string
	statuses map[string]int
}

type series struct {
	name    string
	samples []sample
}

func (s *series) median(f func(sample) float64) float64 {
	v := make([]float64, len(s.samples))
	for i, x := range s.samples {
		v[i] = f(x)
	}
	sort.Float64s(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func (s *series) max(f func(sample) float64) float64 {
	m := 0.0
	for _, x := range s.samples {
		m = max(m, f(x))
	}
	return m
}

type results struct {
	pre, chart, post, floor, kubectl series
	seedTime, total                  time.Duration
	server                           string
	loadBefore, loadAfter            string
	duplicates                       []string
	requestsByKind                   map[string]string
}

var (
	ingressHost = "preflight.bench.example"
	// blackhole keeps every probe of the plugin on this machine: the
	// platform hosts (tunnel mode's targets) and the planned ingress host go
	// to a closed port on 127.0.0.1.
	blackhole = []string{
		"--connect-to", "g.codefresh.io:443:127.0.0.1:9",
		"--connect-to", "register-tunnels.cf-cd.com:443:127.0.0.1:9",
		"--connect-to", ingressHost + ":443:127.0.0.1:9",
		"--connect-to", ingressHost + ":80:127.0.0.1:9",
		"--connect-to", "quay.io:443:127.0.0.1:9",
	}
	// preArgs is the run without a chart (--chart=): the chart-based checks
	// skip. chartArgs (set once the fixtures are found) adds the real
	// gitops-runtime chart and the values it renders with.
	preArgs   = []string{"--access-mode", "ingress", "--ingress-host", ingressHost, "--ingress-class", "nginx", "--chart="}
	chartArgs []string
	postArgs  = []string{"--post"}
)

func (m *measurer) measure() (*results, error) {
	r := &results{pre: series{name: "pre-install run"}, chart: series{name: "pre-install run with --chart"}, post: series{name: "--post run"}, floor: series{name: "raw floor (curl)"}, kubectl: series{name: "kubectl get -o json"}}
	r.server = m.admin.Host
	r.loadBefore = loadavg()
	// Warm up: the first request after seeding pays for caches (watch
	// cache of each kind); one untimed run of each program.
	if _, err := m.runPlugin("warmup", preArgs); err != nil {
		return nil, err
	}
	if _, err := m.runFloor(); err != nil {
		return nil, err
	}
	for i := 0; i < m.c.runs; i++ {
		fmt.Printf("run %d/%d:", i+1, m.c.runs)
		s, err := m.runPlugin(fmt.Sprintf("pre-%d", i), preArgs)
		if err != nil {
			return nil, err
		}
		r.pre.samples = append(r.pre.samples, s)
		fmt.Printf(" pre %s", s.wall.Round(time.Millisecond))
		if s, err = m.runPlugin(fmt.Sprintf("chart-%d", i), chartArgs); err != nil {
			return nil, err
		}
		r.chart.samples = append(r.chart.samples, s)
		fmt.Printf(", chart %s", s.wall.Round(time.Millisecond))
		if s, err = m.runPlugin(fmt.Sprintf("post-%d", i), postArgs); err != nil {
			return nil, err
		}
		r.post.samples = append(r.post.samples, s)
		fmt.Printf(", post %s", s.wall.Round(time.Millisecond))
		if s, err = m.runFloor(); err != nil {
			return nil, err
		}
		r.floor.samples = append(r.floor.samples, s)
		fmt.Printf(", floor %s", s.wall.Round(time.Millisecond))
		if s, err = m.runKubectl(); err != nil {
			return nil, err
		}
		r.kubectl.samples = append(r.kubectl.samples, s)
		fmt.Printf(", kubectl %s\n", s.wall.Round(time.Millisecond))
	}
	r.loadAfter = loadavg()

	// The audit log, written in blocking mode, has every request by now;
	// give the writer a moment to flush all the same.
	time.Sleep(500 * time.Millisecond)
	byUser, err := readAudit(filepath.Join(m.dir, "audit.log"))
	if err != nil {
		return nil, err
	}
	for _, ser := range []*series{&r.pre, &r.chart, &r.post} {
		for i := range ser.samples {
			a := byUser[ser.samples[i].user]
			ser.samples[i].audit = a
			for _, d := range a.duplicates {
				r.duplicates = append(r.duplicates, ser.name+": "+d)
			}
		}
	}
	if len(r.pre.samples) > 0 {
		r.requestsByKind = byUser[r.pre.samples[0].user].byKind
	}
	return r, nil
}

// runPlugin runs the plugin once as a fresh user of group bench:plugin (so
// that the audit log tells its requests apart).
func (m *measurer) runPlugin(user string, args []string) (sample, error) {
	name := "bench-plugin-" + user
	_, kc, err := m.live.AddUser(name, "system:masters", pluginGroup)
	if err != nil {
		return sample{}, err
	}
	full := append([]string{"--kubeconfig", kc, "-o", "json", "--debug-request-count", "--timeout", "2m"}, args...)
	full = append(full, blackhole...)
	cmd := exec.Command(m.plugin, full...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + m.dir}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	s, err := timed(cmd)
	if err != nil {
		return s, fmt.Errorf("plugin: %w\n%s", err, stderr.String())
	}
	s.user = name
	if s.code != 0 && s.code != 1 {
		return s, fmt.Errorf("plugin exited %d:\n%s", s.code, stderr.String())
	}
	mm := reqLine.FindStringSubmatch(stderr.String())
	if mm == nil {
		return s, fmt.Errorf("plugin printed no request count (is it built from this tree?):\n%s", stderr.String())
	}
	s.requests, _ = strconv.ParseInt(mm[1], 10, 64)
	s.pages, _ = strconv.ParseInt(mm[2], 10, 64)
	var doc struct {
		Checks []struct{ ID, Status, Message string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		return s, fmt.Errorf("plugin output is not JSON: %w", err)
	}
	s.statuses = map[string]int{}
	for _, c := range doc.Checks {
		s.statuses[c.Status]++
		if c.Status == "error" {
			fmt.Fprintf(os.Stderr, "\n  note: %s ended error: %s\n", c.ID, c.Message)
		}
	}
	return s, nil
}

var reqLine = regexp.MustCompile(`api-requests: total=(\d+) pages=(\d+)`)

// floorKinds are the kinds the checks read, as raw LIST paths (pods with
// the runtime-schedulable check's selector: those not Succeeded or Failed).
var floorKinds = []string{
	"/api/v1/pods?fieldSelector=" + url.QueryEscape(cluster.ActivePodsSelector),
	"/api/v1/nodes", "/api/v1/namespaces", "/api/v1/services",
	"/apis/apps/v1/deployments", "/apis/apps/v1/daemonsets", "/apis/apps/v1/statefulsets",
	"/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "/apis/networking.k8s.io/v1/ingressclasses",
}

// runFloor fetches every kind with curl at once, one unpaginated LIST each,
// written to /dev/null: the time the apiserver needs to serve the bytes,
// with nothing decoded. Wall time is from the first start to the last exit.
func (m *measurer) runFloor() (sample, error) {
	certs := filepath.Join(m.dir, "curl")
	if _, err := os.Stat(certs); err != nil {
		if err := os.MkdirAll(certs, 0o700); err != nil {
			return sample{}, err
		}
		for name, data := range map[string][]byte{"ca.crt": m.admin.CAData, "client.crt": m.admin.CertData, "client.key": m.admin.KeyData} {
			if err := os.WriteFile(filepath.Join(certs, name), data, 0o600); err != nil {
				return sample{}, err
			}
		}
	}
	var (
		mu    sync.Mutex
		total sample
	)
	g := errgroup.Group{}
	start := time.Now()
	for _, p := range floorKinds {
		g.Go(func() error {
			cmd := exec.Command("curl", "-sS", "--fail-with-body", "-o", "/dev/null", "-w", "%{size_download}",
				"--cacert", filepath.Join(certs, "ca.crt"), "--cert", filepath.Join(certs, "client.crt"), "--key", filepath.Join(certs, "client.key"),
				strings.TrimSuffix(m.admin.Host, "/")+p)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			s, err := timed(cmd)
			if err != nil || s.code != 0 {
				return fmt.Errorf("curl %s: %w %s", p, err, out.String())
			}
			n, _ := strconv.ParseInt(strings.TrimSpace(out.String()), 10, 64)
			mu.Lock()
			total.bytes += n
			total.rssKB = max(total.rssKB, s.rssKB)
			mu.Unlock()
			return nil
		})
	}
	err := g.Wait()
	total.wall = time.Since(start)
	return total, err
}

// runKubectl is what a user would do by hand: one kubectl get of every kind
// the checks read, as JSON.
func (m *measurer) runKubectl() (sample, error) {
	cmd := exec.Command("kubectl", "--kubeconfig", m.adminKubeconfig, "get", "nodes,ns,svc,deploy,ds,sts,crd,ingressclass,pods", "-A", "-o", "json")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + m.dir}
	cw := &countWriter{}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = cw, &stderr
	s, err := timed(cmd)
	if err == nil && s.code != 0 {
		err = fmt.Errorf("exit %d: %s", s.code, stderr.String())
	}
	s.bytes = cw.n
	if err != nil {
		return s, fmt.Errorf("kubectl: %w", err)
	}
	return s, nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// timeBin is GNU time, which reports a child's peak RSS. The bench's own
// rusage of a child cannot: Go starts children with vfork semantics, so the
// kernel carries the bench's own (large) RSS high-water mark into the
// child's ru_maxrss at exec; GNU time is a small C program, so the error is
// its own ~2 MiB.
const timeBin = "/usr/bin/time"

var timeSeq atomic.Int64

// timed runs cmd under GNU time and returns its wall time, peak RSS (KiB)
// and exit code.
func timed(cmd *exec.Cmd) (sample, error) {
	out := filepath.Join(os.TempDir(), fmt.Sprintf("gitops-preflight-bench-rss-%d-%d", os.Getpid(), timeSeq.Add(1)))
	defer os.Remove(out)
	cmd.Args = append([]string{timeBin, "-f", "%M", "-o", out}, cmd.Args...)
	cmd.Path = timeBin
	start := time.Now()
	err := cmd.Run()
	s := sample{wall: time.Since(start)}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return s, err
	}
	s.code = cmd.ProcessState.ExitCode()
	data, rerr := os.ReadFile(out)
	if rerr != nil {
		return s, fmt.Errorf("reading peak RSS from GNU time: %w", rerr)
	}
	// The last line is %M; GNU time writes "Command exited with non-zero
	// status N" before it.
	lines := strings.Fields(strings.TrimSpace(string(data)))
	if len(lines) > 0 {
		s.rssKB, _ = strconv.ParseInt(lines[len(lines)-1], 10, 64)
	}
	return s, nil
}

// auditCount is what the audit log says of one plugin run.
type auditCount struct {
	total, pages int
	// byKind counts requests per "verb resource" (pages included).
	byKind map[string]string
	// duplicates lists any LIST of the same resource, namespace and
	// selectors started more than once (first pages only).
	duplicates []string
}

type auditEvent struct {
	Stage      string `json:"stage"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
}

func readAudit(path string) (map[string]auditCount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	type acc struct {
		total, pages int
		kinds        map[string]int
		firstLists   map[string]int
	}
	users := map[string]*acc{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("audit log: %w", err)
		}
		if e.Stage != "ResponseComplete" && e.Stage != "Panic" {
			continue
		}
		a := users[e.User.Username]
		if a == nil {
			a = &acc{kinds: map[string]int{}, firstLists: map[string]int{}}
			users[e.User.Username] = a
		}
		a.total++
		what := e.Verb + " " + e.RequestURI
		if e.ObjectRef != nil {
			res := e.ObjectRef.Resource
			if e.ObjectRef.APIGroup != "" {
				res += "." + e.ObjectRef.APIGroup
			}
			if e.ObjectRef.Subresource != "" {
				res += "/" + e.ObjectRef.Subresource
			}
			what = e.Verb + " " + res
		} else {
			u, _, _ := strings.Cut(e.RequestURI, "?")
			what = e.Verb + " " + u
		}
		a.kinds[what]++
		if strings.Contains(e.RequestURI, "continue=") {
			a.pages++
		} else if e.Verb == "list" {
			a.firstLists[listKey(e.RequestURI)]++
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := map[string]auditCount{}
	for u, a := range users {
		c := auditCount{total: a.total, pages: a.pages, byKind: map[string]string{}}
		for k, n := range a.kinds {
			c.byKind[k] = strconv.Itoa(n)
		}
		for k, n := range a.firstLists {
			if n > 1 {
				c.duplicates = append(c.duplicates, fmt.Sprintf("%s listed %d times", k, n))
			}
		}
		sort.Strings(c.duplicates)
		out[u] = c
	}
	return out, nil
}

// listKey is a LIST's path and selectors, without limit and continue.
func listKey(uri string) string {
	path, q, _ := strings.Cut(uri, "?")
	var keep []string
	for _, kv := range strings.Split(q, "&") {
		if strings.HasPrefix(kv, "labelSelector=") || strings.HasPrefix(kv, "fieldSelector=") {
			keep = append(keep, kv)
		}
	}
	if len(keep) > 0 {
		return path + "?" + strings.Join(keep, "&")
	}
	return path
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func memTotal() string {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return "?"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && k == "MemTotal" {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "?"
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func toolVersion(args ...string) string {
	out, err := exec.Command(args[0], args[1:]...).Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

func secs(v float64) string { return fmt.Sprintf("%.2f s", v) }
func mib(kb float64) string { return fmt.Sprintf("%.0f MiB", kb/1024) }

func (r *results) markdown(c config) string {
	var b strings.Builder
	wall := func(s sample) float64 { return s.wall.Seconds() }
	rss := func(s sample) float64 { return float64(s.rssKB) }
	reqs := func(s sample) float64 { return float64(s.requests - s.pages) }
	pages := func(s sample) float64 { return float64(s.pages) }
	auditReqs := func(s sample) float64 { return float64(s.audit.total - s.audit.pages) }
	auditPages := func(s sample) float64 { return float64(s.audit.pages) }
	bytesOf := func(s sample) float64 { return float64(s.bytes) }

	fmt.Fprintf(&b, "# make bench results\n\n")
	fmt.Fprintf(&b, "Date: %s. Machine: %d CPUs (%s), %s memory, %s/%s, %s; load average %s before measuring, %s after (the machine may be shared: timings are noisy).\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), cpuModel(), memTotal(), runtime.GOOS, runtime.GOARCH, runtime.Version(), r.loadBefore, r.loadAfter)
	fmt.Fprintf(&b, "Cluster: the test control plane (etcd + kube-apiserver from bin/k8s, no kubelet or controllers) seeded with %d Ready nodes, %d Running pods bound to them (%d per node, cpu 100m and memory 128Mi requests each; bound and set Running by the bench, there being no scheduler or kubelet), %d namespaces, %d headless Services, %d Deployments, the Argo CD and Argo Rollouts CRDs (upstream manifests) plus %d other CRDs, ingress-nginx (upstream manifest, statuses set) and %d Helm release-Secret decompression bombs (~760 MB each once gunzipped). Seeding took %s; the whole bench %s.\n\n",
		c.Nodes, c.Nodes*c.PodsPerNode, c.PodsPerNode, c.Namespaces, c.Services, c.Deployments, c.OtherCRDs, c.ReleaseBombs, r.seedTime.Round(time.Second), r.total.Round(time.Second))
	fmt.Fprintf(&b, "References: kubectl %s; curl %s.\n\n", toolVersion("kubectl", "version", "--client"), toolVersion("curl", "--version"))
	fmt.Fprintf(&b, "Pre-install run: `kubectl gitops-preflight %s -o json` (probes sent to a closed port on 127.0.0.1). Post run: `kubectl gitops-preflight --post -o json` with the post-install checks present in this build. Medians of %d runs; API requests exclude LIST continuation pages, which are counted apart.\n\n",
		strings.Join(preArgs, " "), c.runs)

	fmt.Fprintf(&b, "| what | wall (median) | wall (max) | peak RSS (max) | API requests (plugin count) | API requests (audit log) | list pages (plugin / audit) | bytes read |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|\n")
	for _, s := range []*series{&r.pre, &r.chart, &r.post} {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.0f | %.0f | %.0f / %.0f | |\n", s.name, secs(s.median(wall)), secs(s.max(wall)), mib(s.max(rss)),
			s.median(reqs), s.median(auditReqs), s.median(pages), s.median(auditPages))
	}
	fmt.Fprintf(&b, "| %s | %s | %s | %s (one curl) | %d | | | %.1f MB |\n", r.floor.name, secs(r.floor.median(wall)), secs(r.floor.max(wall)), mib(r.floor.max(rss)), len(floorKinds), r.floor.median(bytesOf)/1e6)
	fmt.Fprintf(&b, "| %s | %s | %s | %s | | | | %.1f MB |\n\n", r.kubectl.name, secs(r.kubectl.median(wall)), secs(r.kubectl.max(wall)), mib(r.kubectl.max(rss)), r.kubectl.median(bytesOf)/1e6)

	floor := r.floor.median(wall)
	pre := r.pre.median(wall)
	target := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**missed**"
	}
	fmt.Fprintf(&b, "| target | reached | |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| pre-install within 2× the raw floor | %.2f× (%s vs %s) | %s |\n", pre/floor, secs(pre), secs(floor), target(pre <= 2*floor))
	fmt.Fprintf(&b, "| faster than the kubectl dump | %.1f× faster | %s |\n", r.kubectl.median(wall)/pre, target(pre < r.kubectl.median(wall)))
	fmt.Fprintf(&b, "| chart-aware pre-install within 1.5× the run without a chart | %.2f× (%s vs %s) | %s |\n", r.chart.median(wall)/pre, secs(r.chart.median(wall)), secs(pre), target(r.chart.median(wall) <= 1.5*pre))
	maxReq := max(r.pre.max(reqs), r.chart.max(reqs), r.post.max(reqs), r.pre.max(auditReqs), r.chart.max(auditReqs), r.post.max(auditReqs))
	fmt.Fprintf(&b, "| ≤ 40 API requests per run (pages aside) | %.0f at most | %s |\n", maxReq, target(maxReq <= 40))
	maxRSS := max(r.pre.max(rss), r.chart.max(rss), r.post.max(rss))
	fmt.Fprintf(&b, "| peak RSS ≤ 150 MB | %s at most (%.0f MB) | %s |\n", mib(maxRSS), maxRSS*1024/1e6, target(maxRSS*1024 <= 150e6))
	fmt.Fprintf(&b, "| --post ≤ 2 s | %s | %s |\n", secs(r.post.median(wall)), target(r.post.median(wall) <= 2))
	dup := "none"
	if len(r.duplicates) > 0 {
		dup = strings.Join(r.duplicates, "; ")
	}
	fmt.Fprintf(&b, "| each kind listed at most once (audit log) | %s | %s |\n\n", dup, target(len(r.duplicates) == 0))

	if len(r.pre.samples) > 0 {
		st := r.pre.samples[0].statuses
		fmt.Fprintf(&b, "Check statuses of a pre-install run: %s. Exit codes: pre %d, post %d.\n\n", statusLine(st), r.pre.samples[0].code, r.post.samples[0].code)
	}
	if len(r.requestsByKind) > 0 {
		fmt.Fprintf(&b, "Requests of one pre-install run by verb and resource (audit log, pages included):\n\n")
		keys := make([]string, 0, len(r.requestsByKind))
		for k := range r.requestsByKind {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "- `%s` × %s\n", k, r.requestsByKind[k])
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Per run (wall s, RSS MiB, requests+pages by plugin count; audit requests+pages):\n\n")
	for _, s := range []*series{&r.pre, &r.post} {
		fmt.Fprintf(&b, "- %s:", s.name)
		for _, x := range s.samples {
			fmt.Fprintf(&b, " %.2f/%d/%d+%d;%d+%d", x.wall.Seconds(), x.rssKB/1024, x.requests-x.pages, x.pages, x.audit.total-x.audit.pages, x.audit.pages)
		}
		b.WriteString("\n")
	}
	for _, s := range []*series{&r.floor, &r.kubectl} {
		fmt.Fprintf(&b, "- %s:", s.name)
		for _, x := range s.samples {
			fmt.Fprintf(&b, " %.2f/%d", x.wall.Seconds(), x.rssKB/1024)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func statusLine(st map[string]int) string {
	var parts []string
	for _, k := range []string{"pass", "warn", "fail", "error", "skip"} {
		if st[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", st[k], k))
		}
	}
	return strings.Join(parts, ", ")
}
