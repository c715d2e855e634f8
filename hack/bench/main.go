// Command bench measures kubectl gitops-preflight on large clusters (make
// bench). For each size factor of -scales (default 1,2,4) it starts a fresh
// bare test control plane (internal/testcluster's StartBareLive: etcd on
// tmpfs and kube-apiserver from bin/k8s) with an audit log, fills it
// concurrently with client-go (at 1x by default 5,000 Ready nodes, 30,000
// Running pods bound to them, 2,000 namespaces, 20,000 Services, 10,000
// Deployments; at every size the real Argo CD and Argo Rollouts CRDs, 50
// other CRDs, ingress-nginx and ten Helm release-Secret bombs), measures,
// and stops it before the next size. It measures, over -runs interleaved
// runs each:
//
//   - the pre-install run of the built plugin without and with the real
//     chart, and the --post run: wall time, API requests (the plugin's own
//     count through the hidden --debug-request-count flag, cross-checked
//     with the apiserver audit log, which also shows whether any kind was
//     listed twice) and peak RSS;
//   - two floors, raw HTTP LISTs with curl, concurrently, one unpaginated
//     request per kind, nothing decoded: every kind the checks read as JSON,
//     and the LISTs the run with the chart made (from the audit log) in the
//     cheapest encoding (protobuf; metadata-only for CRDs, Secrets,
//     ConfigMaps and custom resources);
//   - at the first size only (-kubectl-every-scale: all), the by-hand path:
//     kubectl get nodes,ns,svc,deploy,ds,sts,crd,ingressclass,pods -A -o json.
//
// It prints the tables and writes them, with the machine and date, to -out,
// the sweep's figures to sweep.json beside it, draws them with the hack/plot
// module (gonum.org/v1/plot, a module of its own) to sweep.svg and
// sweep-rss.svg, and with -readme rewrites the README's bench block.
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
	"io"
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
	plugin, assets, fixtures, out, readme, plotDir string
	runs, workers                                  int
	keep, kubectlEvery                             bool
	scales                                         []int
}

func main() {
	var c config
	flag.IntVar(&c.Nodes, "nodes", 5000, "Ready nodes to create (at scale 1)")
	flag.IntVar(&c.Namespaces, "namespaces", 2000, "namespaces to create (at scale 1)")
	flag.IntVar(&c.Services, "services", 20000, "headless Services to create (spread over the namespaces; at scale 1)")
	flag.IntVar(&c.Deployments, "deployments", 10000, "Deployments to create (spread over the namespaces; at scale 1)")
	flag.IntVar(&c.PodsPerNode, "pods-per-node", 6, "Running pods bound to each node, with cpu and memory requests (spread over the namespaces; 6 x 5,000 nodes = 30,000 pods)")
	flag.IntVar(&c.OtherCRDs, "other-crds", 50, "CRDs to create besides the Argo CD and Argo Rollouts ones (not scaled)")
	flag.IntVar(&c.ReleaseBombs, "release-bombs", 10, "Helm release Secrets whose gzip payload expands to ~760 MB (decompression bombs; 0: none; not scaled)")
	scales := flag.String("scales", "1,2,4", "size factors: for each, a fresh control plane seeded with the sizes above times the factor, then the same measurements")
	flag.IntVar(&c.runs, "runs", 5, "runs of each measurement (the median is reported)")
	flag.IntVar(&c.workers, "workers", 48, "concurrent requests while seeding")
	flag.StringVar(&c.plugin, "plugin", "bin/kubectl-gitops_preflight", "the built plugin")
	flag.StringVar(&c.assets, "assets", envOr("KUBEBUILDER_ASSETS", "bin/k8s"), "directory holding etcd and kube-apiserver")
	flag.StringVar(&c.fixtures, "fixtures", os.Getenv("UPSTREAM_FIXTURES"), "upstream fixtures (default: $UPSTREAM_FIXTURES, else ../shared/fixtures/upstream)")
	flag.StringVar(&c.out, "out", "bench/results.md", "results file (empty: do not write); sweep.json, sweep.svg and sweep-rss.svg are written beside it")
	flag.StringVar(&c.readme, "readme", "", "README whose block between the <!-- bench:begin --> and <!-- bench:end --> markers is rewritten with the sweep (empty: none)")
	flag.StringVar(&c.plotDir, "plot", "hack/plot", "the plotting module (gonum.org/v1/plot) that draws the sweep charts (empty: no charts)")
	flag.BoolVar(&c.kubectlEvery, "kubectl-every-scale", false, "time the kubectl get -o json dump at every scale (default: the first only; it costs ~25 s and ~1.9 GB at 5,000 nodes)")
	flag.BoolVar(&c.keep, "keep", false, "after measuring, keep the last scale's cluster running until interrupted (prints its admin kubeconfig)")
	flag.Parse()
	for _, f := range strings.Split(*scales, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bench: -scales %q: want positive integers separated by commas\n", *scales)
			os.Exit(2)
		}
		c.scales = append(c.scales, n)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// times is the scale of size factor f: nodes (and so pods), namespaces,
// Services and Deployments multiplied, CRDs and release bombs as they are.
func (s scale) times(f int) scale {
	s.Nodes *= f
	s.Namespaces *= f
	s.Services *= f
	s.Deployments *= f
	return s
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
	var all []*results
	for i, f := range c.scales {
		last := i == len(c.scales)-1
		r, err := runScale(c, f, plugin, fixtures, i == 0 || c.kubectlEvery, last && c.keep)
		if err != nil {
			return fmt.Errorf("scale %dx: %w", f, err)
		}
		all = append(all, r)
	}
	total := time.Since(start)
	table := markdown(c, all, total)
	fmt.Println()
	fmt.Println(table)
	if c.out == "" {
		return nil
	}
	outDir := filepath.Dir(c.out)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(c.out, []byte(table), 0o644); err != nil {
		return err
	}
	fmt.Printf("written to %s\n", c.out)
	sw := sweepFigures(all)
	data, err := json.MarshalIndent(sw, "", "  ")
	if err != nil {
		return err
	}
	swPath := filepath.Join(outDir, "sweep.json")
	if err := os.WriteFile(swPath, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("written to %s\n", swPath)
	charts := false
	if c.plotDir != "" {
		if err := drawCharts(c.plotDir, outDir); err != nil {
			return err
		}
		charts = true
	}
	if c.readme != "" {
		if err := rewriteReadme(c, all, outDir, charts); err != nil {
			return err
		}
		fmt.Printf("rewrote the bench block of %s\n", c.readme)
	}
	return nil
}

// runScale starts a fresh control plane, fills it with the base sizes times
// f, measures, and stops it (unless keep: then it waits for a signal
// first). It checks that the tmpfs etcd data directory is gone afterwards,
// so that one scale's data does not weigh on the next.
func runScale(c config, f int, plugin, fixtures string, withKubectl, keep bool) (*results, error) {
	sc := c.scale.times(f)
	fmt.Printf("== scale %dx: %d nodes, %d pods, %d namespaces, %d Services, %d Deployments\n",
		f, sc.Nodes, sc.Nodes*sc.PodsPerNode, sc.Namespaces, sc.Services, sc.Deployments)
	t0 := time.Now()
	dir, err := os.MkdirTemp("", "gitops-preflight-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cs := c
	cs.scale = sc
	live, err := startControlPlane(cs, dir)
	if err != nil {
		return nil, err
	}
	etcdDir := live.EtcdDataDir()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		live.Stop()
		if strings.HasPrefix(etcdDir, "/dev/shm/") {
			if _, err := os.Stat(etcdDir); err == nil {
				return fmt.Errorf("etcd data %s still on tmpfs after stopping the control plane", etcdDir)
			}
		}
		fmt.Printf("control plane stopped, etcd data removed (%s)\n", etcdDir)
		return nil
	}
	defer func() { _ = stop() }()
	fmt.Printf("control plane up in %s (etcd data in %s)\n", time.Since(t0).Round(time.Millisecond), etcdDir)

	seedStart := time.Now()
	if err := seed(cs, live.Admin, live.Kubeconfig, fixtures, dir); err != nil {
		return nil, fmt.Errorf("seeding: %w", err)
	}
	seedTime := time.Since(seedStart)
	fmt.Printf("seeded in %s\n", seedTime.Round(time.Second))

	m := &measurer{c: cs, live: live, admin: live.Admin, plugin: plugin, dir: dir, adminKubeconfig: live.Kubeconfig, withKubectl: withKubectl}
	res, err := m.measure()
	if err != nil {
		if keep {
			fmt.Printf("error: %v\ncluster kept: KUBECONFIG=%s (Ctrl-C to stop)\n", err, m.adminKubeconfig)
			waitSignal()
		}
		return nil, err
	}
	res.factor, res.scale = f, sc
	res.seedTime = seedTime
	if keep {
		fmt.Printf("cluster kept: KUBECONFIG=%s (Ctrl-C to stop)\n", m.adminKubeconfig)
		waitSignal()
	}
	if err := stop(); err != nil {
		return nil, err
	}
	res.total = time.Since(t0)
	return res, nil
}

func waitSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	<-ch
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
	withKubectl     bool
	// cheap are the LISTs of the cheapest-encoding floor.
	cheap []floorReq
}

// sample is one timed run of a program.
type sample struct {
	wall  time.Duration
	rssKB int64
	// anonKB is the peak of the process's anonymous resident memory (its
	// heap and stacks: RSS without the executable's mapped file pages),
	// sampled every 5 ms from /proc; 0 when it could not be read.
	anonKB   int64
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
	factor                                  int
	scale                                   scale
	pre, chart, post, floor, cheap, kubectl series
	seedTime, total                         time.Duration
	server                                  string
	loadBefore, loadAfter                   string
	duplicates                              []string
	requestsByKind                          map[string]string
	cheapReqs                               []floorReq
	cheapNotes                              []string
	// baseline is the plugin printing its version: the memory of the
	// executable itself (its file pages, the runtime, package init).
	baseline sample
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
	r := &results{pre: series{name: "pre-install run"}, chart: series{name: "pre-install run with --chart"}, post: series{name: "--post run"},
		floor: series{name: "JSON floor (curl)"}, cheap: series{name: "cheapest-encoding floor (curl)"}, kubectl: series{name: "kubectl get -o json"}}
	r.server = m.admin.Host
	r.loadBefore = loadavg()
	vcmd := exec.Command(m.plugin, "--version")
	vcmd.Stdout = io.Discard
	b, err := timed(vcmd)
	if err != nil {
		return nil, fmt.Errorf("plugin --version: %w", err)
	}
	r.baseline = b
	// Warm up: the first request after seeding pays for caches (watch
	// cache of each kind); one untimed run of each program. The warm-up
	// run with the chart also tells, from the audit log, which LISTs the
	// cheapest-encoding floor makes.
	if _, err := m.runPlugin("warmup", chartArgs); err != nil {
		return nil, err
	}
	time.Sleep(500 * time.Millisecond)
	warm, err := auditLists(filepath.Join(m.dir, "audit.log"), "bench-plugin-warmup")
	if err != nil {
		return nil, err
	}
	if len(warm) == 0 {
		return nil, errors.New("the audit log shows no LIST of the warm-up run with the chart")
	}
	if m.cheap, err = m.cheapRequests(warm); err != nil {
		return nil, err
	}
	r.cheapReqs = m.cheap
	if _, err := m.runFloor(); err != nil {
		return nil, err
	}
	if _, err := m.runCheapFloor(); err != nil {
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
		fmt.Printf(", JSON floor %s", s.wall.Round(time.Millisecond))
		if s, err = m.runCheapFloor(); err != nil {
			return nil, err
		}
		r.cheap.samples = append(r.cheap.samples, s)
		fmt.Printf(", cheapest floor %s", s.wall.Round(time.Millisecond))
		if m.withKubectl {
			if s, err = m.runKubectl(); err != nil {
				return nil, err
			}
			r.kubectl.samples = append(r.kubectl.samples, s)
			fmt.Printf(", kubectl %s", s.wall.Round(time.Millisecond))
		}
		fmt.Println()
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
	if len(r.chart.samples) > 0 {
		r.requestsByKind = byUser[r.chart.samples[0].user].byKind
	}
	// Cross-check: every timed run with the chart made the LISTs of the
	// warm-up run the cheapest floor was taken from.
	want := listSet(warm)
	for _, s := range r.chart.samples {
		got, err := auditLists(filepath.Join(m.dir, "audit.log"), s.user)
		if err != nil {
			return nil, err
		}
		if d := setDiff(want, listSet(got)); d != "" {
			r.cheapNotes = append(r.cheapNotes, fmt.Sprintf("%s (%s) listed differently from the warm-up run the cheapest floor was taken from: %s", r.chart.name, s.user, d))
		}
	}
	for _, n := range r.cheapNotes {
		fmt.Println("note:", n)
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

// floorReq is one LIST of a floor: the path with its selectors and the
// Accept header it is fetched with.
type floorReq struct {
	Path, Resource, Encoding, Accept string
}

const (
	// acceptProtobuf: built-in kinds in the apiserver's protobuf encoding
	// (https://kubernetes.io/docs/reference/using-api/api-concepts/, custom
	// resources have none).
	acceptProtobuf = "application/vnd.kubernetes.protobuf"
	// acceptMetadata asks for a PartialObjectMetadataList: names, labels,
	// annotations and owner references, no spec or data, as client-go's
	// metadata client does (https://pkg.go.dev/k8s.io/client-go/metadata).
	acceptMetadata = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
)

// jsonFloor is the JSON floor: every kind the checks read, as JSON.
func jsonFloor() []floorReq {
	out := make([]floorReq, len(floorKinds))
	for i, p := range floorKinds {
		out[i] = floorReq{Path: p, Encoding: "json", Accept: "application/json"}
	}
	return out
}

// runFloor fetches every kind with curl at once, one unpaginated LIST each,
// written to /dev/null: the time the apiserver needs to serve the bytes,
// with nothing decoded. Wall time is from the first start to the last exit.
func (m *measurer) runFloor() (sample, error) { return m.curlAll(jsonFloor()) }

// runCheapFloor is the cheapest-encoding floor: the LISTs the run with the
// chart made, one unpaginated request each, built-in kinds as protobuf and
// Secrets, ConfigMaps, CRDs and custom resources metadata-only.
func (m *measurer) runCheapFloor() (sample, error) { return m.curlAll(m.cheap) }

// cheapRequests turns the LISTs of a run (audit log) into the cheapest
// floor's requests: custom resources are told by the CRDs the cluster
// serves (they have no protobuf encoding).
func (m *measurer) cheapRequests(lists []auditList) ([]floorReq, error) {
	ext, err := apiextensionsclient.NewForConfig(m.admin)
	if err != nil {
		return nil, err
	}
	crds, err := ext.ApiextensionsV1().CustomResourceDefinitions().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	custom := map[string]bool{}
	for _, c := range crds.Items {
		custom[c.Spec.Names.Plural+"."+c.Spec.Group] = true
	}
	metadataOnly := map[string]bool{"secrets": true, "configmaps": true, "customresourcedefinitions.apiextensions.k8s.io": true}
	seen := map[string]bool{}
	var out []floorReq
	for _, l := range lists {
		if seen[l.key] {
			continue
		}
		seen[l.key] = true
		r := floorReq{Path: l.key, Resource: l.resource, Encoding: "protobuf", Accept: acceptProtobuf}
		if metadataOnly[l.resource] || custom[l.resource] {
			r.Encoding, r.Accept = "metadata-only", acceptMetadata
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// curlAll fetches reqs with curl at once, written to /dev/null.
func (m *measurer) curlAll(reqs []floorReq) (sample, error) {
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
	for _, r := range reqs {
		g.Go(func() error {
			cmd := exec.Command("curl", "-sS", "--fail-with-body", "-o", "/dev/null", "-w", "%{size_download}",
				"-H", "Accept: "+r.Accept,
				"--cacert", filepath.Join(certs, "ca.crt"), "--cert", filepath.Join(certs, "client.crt"), "--key", filepath.Join(certs, "client.key"),
				strings.TrimSuffix(m.admin.Host, "/")+r.Path)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			s, err := timed(cmd)
			if err != nil || s.code != 0 {
				return fmt.Errorf("curl %s: %w %s", r.Path, err, out.String())
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
	total.requests = int64(len(reqs))
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
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	var anon atomic.Int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if kb := childAnonKB(cmd.Process.Pid); kb > anon.Load() {
					anon.Store(kb)
				}
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	<-sampled
	s := sample{wall: time.Since(start), anonKB: anon.Load()}
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

// childAnonKB reads RssAnon (kB) of the first child of pid (GNU time's
// child: the measured program) from /proc; 0 when it cannot.
func childAnonKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return 0
	}
	kids := strings.Fields(string(b))
	if len(kids) == 0 {
		return 0
	}
	st, err := os.ReadFile("/proc/" + kids[0] + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
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

// eachAuditEvent calls fn with every event of the audit log at path.
func eachAuditEvent(path string, fn func(e auditEvent)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		fn(e)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}

// auditResource is e's resource as resource.group.
func auditResource(e auditEvent) string {
	res := e.ObjectRef.Resource
	if e.ObjectRef.APIGroup != "" {
		res += "." + e.ObjectRef.APIGroup
	}
	return res
}

func readAudit(path string) (map[string]auditCount, error) {
	type acc struct {
		total, pages int
		kinds        map[string]int
		firstLists   map[string]int
	}
	users := map[string]*acc{}
	err := eachAuditEvent(path, func(e auditEvent) {
		if e.Stage != "ResponseComplete" && e.Stage != "Panic" {
			return
		}
		a := users[e.User.Username]
		if a == nil {
			a = &acc{kinds: map[string]int{}, firstLists: map[string]int{}}
			users[e.User.Username] = a
		}
		a.total++
		what := e.Verb + " " + e.RequestURI
		if e.ObjectRef != nil {
			res := auditResource(e)
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
		} else if isList(e) {
			a.firstLists[listKey(e.RequestURI)]++
		}
	})
	if err != nil {
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

// isList reports whether e is a LIST, or a streaming list (a WATCH with
// sendInitialEvents=true, which the plugin uses for the big kinds on
// servers that serve it): the floors fetch both as one plain LIST.
func isList(e auditEvent) bool {
	return e.Verb == "list" || e.Verb == "watch" && strings.Contains(e.RequestURI, "sendInitialEvents=true")
}

// auditList is one first-page LIST of a run, as the audit log shows it.
type auditList struct {
	key      string // path and selectors (listKey)
	resource string // resource.group
}

// auditLists returns the first-page LISTs user made, in order.
func auditLists(path, user string) ([]auditList, error) {
	var out []auditList
	err := eachAuditEvent(path, func(e auditEvent) {
		if e.Stage != "ResponseComplete" || e.User.Username != user || !isList(e) || e.ObjectRef == nil || strings.Contains(e.RequestURI, "continue=") {
			return
		}
		out = append(out, auditList{key: listKey(e.RequestURI), resource: auditResource(e)})
	})
	return out, err
}

func listSet(l []auditList) map[string]bool {
	m := map[string]bool{}
	for _, x := range l {
		m[x.key] = true
	}
	return m
}

// setDiff describes how got differs from want ("" when alike).
func setDiff(want, got map[string]bool) string {
	var missing, extra []string
	for k := range want {
		if !got[k] {
			missing = append(missing, k)
		}
	}
	for k := range got {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "not listed: "+strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		parts = append(parts, "listed in addition: "+strings.Join(extra, ", "))
	}
	return strings.Join(parts, "; ")
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

var (
	wallOf     = func(s sample) float64 { return s.wall.Seconds() }
	rssOf      = func(s sample) float64 { return float64(s.rssKB) }
	anonOf     = func(s sample) float64 { return float64(s.anonKB) }
	reqsOf     = func(s sample) float64 { return float64(s.requests - s.pages) }
	pagesOf    = func(s sample) float64 { return float64(s.pages) }
	auditReqs  = func(s sample) float64 { return float64(s.audit.total - s.audit.pages) }
	auditPages = func(s sample) float64 { return float64(s.audit.pages) }
	bytesOf    = func(s sample) float64 { return float64(s.bytes) }
)

func (r *results) plugins() []*series { return []*series{&r.chart, &r.pre, &r.post} }

// sizeLabel is a sweep column's heading.
func (r *results) sizeLabel() string {
	return fmt.Sprintf("%dx (%s nodes)", r.factor, thousands(r.scale.Nodes))
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func machineLine(all []*results) string {
	var loads []string
	for _, r := range all {
		loads = append(loads, fmt.Sprintf("%dx %s → %s", r.factor, r.loadBefore, r.loadAfter))
	}
	return fmt.Sprintf("Date: %s. Machine: %d CPUs (%s), %s memory, %s/%s, %s; load average before → after measuring: %s (the machine may be shared: timings are noisy).",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), cpuModel(), memTotal(), runtime.GOOS, runtime.GOARCH, runtime.Version(), strings.Join(loads, "; "))
}

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// sweepTable has a row per series and a column per size.
func sweepTable(all []*results) string {
	var b strings.Builder
	b.WriteString("| median wall time (plugin runs, kubectl: peak RSS; floors: bytes read) |")
	for _, r := range all {
		b.WriteString(" " + r.sizeLabel() + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(all)) + "\n")
	row := func(name string, cell func(r *results) string) {
		b.WriteString("| " + name + " |")
		for _, r := range all {
			b.WriteString(" " + cell(r) + " |")
		}
		b.WriteString("\n")
	}
	for i, name := range []string{"pre-install run with the chart", "pre-install run without a chart (`--chart=`)", "`--post` run"} {
		row(name, func(r *results) string {
			s := r.plugins()[i]
			return fmt.Sprintf("%s (%s)", secs(s.median(wallOf)), mib(s.max(rssOf)))
		})
	}
	for i, name := range []string{"with the chart", "without a chart", "`--post`"} {
		row("peak anonymous memory, "+name+" (RSS without the executable's file pages)", func(r *results) string {
			return mib(r.plugins()[i].max(anonOf))
		})
	}
	row("the executable alone (`--version`): peak RSS / anonymous", func(r *results) string {
		return mib(float64(r.baseline.rssKB)) + " / " + mib(float64(r.baseline.anonKB))
	})
	row("cheapest-encoding floor (protobuf / metadata-only)", func(r *results) string {
		return fmt.Sprintf("%s (%.1f MB)", secs(r.cheap.median(wallOf)), r.cheap.median(bytesOf)/1e6)
	})
	row("JSON floor", func(r *results) string {
		return fmt.Sprintf("%s (%.1f MB)", secs(r.floor.median(wallOf)), r.floor.median(bytesOf)/1e6)
	})
	row("`kubectl get ... -o json`", func(r *results) string {
		if len(r.kubectl.samples) == 0 {
			return "not run"
		}
		return fmt.Sprintf("%s (%s)", secs(r.kubectl.median(wallOf)), mib(r.kubectl.max(rssOf)))
	})
	row("with the chart ÷ cheapest floor / ÷ JSON floor", func(r *results) string {
		w := r.chart.median(wallOf)
		return ratio(w, r.cheap.median(wallOf)) + " / " + ratio(w, r.floor.median(wallOf))
	})
	row("without a chart ÷ cheapest floor / ÷ JSON floor", func(r *results) string {
		w := r.pre.median(wallOf)
		return ratio(w, r.cheap.median(wallOf)) + " / " + ratio(w, r.floor.median(wallOf))
	})
	row("`--post` ÷ cheapest floor / ÷ JSON floor", func(r *results) string {
		w := r.post.median(wallOf)
		return ratio(w, r.cheap.median(wallOf)) + " / " + ratio(w, r.floor.median(wallOf))
	})
	row("API requests with the chart (+ list pages)", func(r *results) string {
		return fmt.Sprintf("%.0f (+%.0f)", r.chart.median(reqsOf), r.chart.median(pagesOf))
	})
	row("seeding", func(r *results) string { return r.seedTime.Round(time.Second).String() })
	return b.String()
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// targetsTable has a row per target and size.
func targetsTable(all []*results) string {
	var b strings.Builder
	b.WriteString("| target | size | measured | |\n|---|---|---|---|\n")
	for _, r := range all {
		w, f := r.chart.median(wallOf), r.cheap.median(wallOf)
		fmt.Fprintf(&b, "| pre-install run with the chart ≤ 1.2× the cheapest-encoding floor | %s | %s (%s vs %s) | %s |\n", r.sizeLabel(), ratio(w, f), secs(w), secs(f), met(f > 0 && w <= 1.2*f))
	}
	first, last := all[0], all[len(all)-1]
	rssLine := func(r *results) (string, float64) {
		var parts []string
		m := 0.0
		for _, s := range r.plugins() {
			parts = append(parts, fmt.Sprintf("%s %s", s.name, mib(s.max(rssOf))))
			m = max(m, s.max(rssOf))
		}
		return strings.Join(parts, ", "), m
	}
	txt, rss1 := rssLine(first)
	fmt.Fprintf(&b, "| peak RSS ≤ 64 MiB (every plugin run) | %s | %s | %s |\n", first.sizeLabel(), txt, met(rss1 <= 64*1024))
	if len(all) > 1 {
		var parts []string
		ok := true
		for i, s := range last.plugins() {
			a, z := first.plugins()[i].max(rssOf), s.max(rssOf)
			parts = append(parts, fmt.Sprintf("%s %s → %s (%+.0f%%)", s.name, mib(a), mib(z), 100*(z/a-1)))
			ok = ok && z <= 1.2*a
		}
		fmt.Fprintf(&b, "| peak RSS ≤ +20%% at the largest size relative to %dx | %s | %s | %s |\n", first.factor, last.sizeLabel(), strings.Join(parts, "; "), met(ok))
	}
	p := first.post.median(wallOf)
	fmt.Fprintf(&b, "| `--post` ≤ 1 s | %s | %s | %s |\n", first.sizeLabel(), secs(p), met(p <= 1))
	for _, r := range all {
		m := 0.0
		for _, s := range r.plugins() {
			m = max(m, s.max(reqsOf), s.max(auditReqs))
		}
		fmt.Fprintf(&b, "| ≤ 40 API requests per run, pages aside (plugin count and audit log) | %s | %.0f at most | %s |\n", r.sizeLabel(), m, met(m <= 40))
	}
	for _, r := range all {
		dup := "none"
		if len(r.duplicates) > 0 {
			dup = strings.Join(r.duplicates, "; ")
		}
		fmt.Fprintf(&b, "| each kind listed at most once per run (audit log) | %s | %s | %s |\n", r.sizeLabel(), dup, met(len(r.duplicates) == 0))
	}
	return b.String()
}

func markdown(c config, all []*results, total time.Duration) string {
	var b strings.Builder
	first := all[0]
	fmt.Fprintf(&b, "# make bench results\n\n%s\n\n", machineLine(all))
	var sizes []string
	for _, r := range all {
		sizes = append(sizes, fmt.Sprintf("%dx: %s nodes, %s pods, %s namespaces, %s Services, %s Deployments (seeded in %s)", r.factor,
			thousands(r.scale.Nodes), thousands(r.scale.Nodes*r.scale.PodsPerNode), thousands(r.scale.Namespaces), thousands(r.scale.Services), thousands(r.scale.Deployments), r.seedTime.Round(time.Second)))
	}
	fmt.Fprintf(&b, "Cluster: for each size a fresh test control plane (etcd on tmpfs + kube-apiserver from bin/k8s, no kubelet or controllers, stopped before the next size) seeded with Ready nodes, Running pods bound to them (%d per node, cpu 100m and memory 128Mi requests each; bound and set Running by the bench, there being no scheduler or kubelet), namespaces, headless Services and Deployments in these numbers:\n\n", c.PodsPerNode)
	for _, s := range sizes {
		fmt.Fprintf(&b, "- %s\n", s)
	}
	fmt.Fprintf(&b, "\nand at every size the Argo CD and Argo Rollouts CRDs (upstream manifests) plus %d other CRDs, ingress-nginx (upstream manifest, statuses set) and %d Helm release-Secret decompression bombs (~760 MB each once gunzipped). The whole bench took %s.\n\n",
		c.OtherCRDs, c.ReleaseBombs, total.Round(time.Second))
	fmt.Fprintf(&b, "References: kubectl %s; curl %s.\n\n", toolVersion("kubectl", "version", "--client"), toolVersion("curl", "--version"))
	fmt.Fprintf(&b, "Pre-install run: `kubectl gitops-preflight %s -o json` (probes sent to a closed port on 127.0.0.1); with the chart: the same with `--chart` the real gitops-runtime chart from the fixtures. Post run: `kubectl gitops-preflight --post -o json`. Medians of %d interleaved runs; API requests exclude LIST continuation pages, which are counted apart.\n\n",
		strings.Join(preArgs, " "), c.runs)
	fmt.Fprintf(&b, "Two floors, each fetched with concurrent `curl`s to /dev/null, one unpaginated LIST per kind and selector, nothing decoded: the **JSON floor** (every kind the checks read, as JSON: %s) and the **cheapest-encoding floor** (the LISTs the pre-install run with the chart made, taken from the audit log of an untimed run, without limit and continue, in the cheapest encoding the apiserver offers: protobuf for built-in kinds, metadata-only `PartialObjectMetadataList` for CustomResourceDefinitions, Secrets, ConfigMaps and custom resources). The discovery, GET and SelfSubjectAccessReview requests the plugin makes are in neither floor. ",
		"`"+strings.Join(floorKinds, "`, `")+"`")
	if c.kubectlEvery {
		b.WriteString("The `kubectl get nodes,ns,svc,deploy,ds,sts,crd,ingressclass,pods -A -o json` dump is timed at every size.\n\n")
	} else {
		fmt.Fprintf(&b, "The `kubectl get nodes,ns,svc,deploy,ds,sts,crd,ingressclass,pods -A -o json` dump is timed at %dx only (`-kubectl-every-scale` for all).\n\n", first.factor)
	}

	b.WriteString("## Sweep\n\n")
	b.WriteString(sweepTable(all))
	b.WriteString("\n![wall time against cluster size](sweep.svg)\n\n![peak RSS of the plugin against cluster size](sweep-rss.svg)\n\n")
	b.WriteString("## Targets\n\n")
	b.WriteString(targetsTable(all))
	b.WriteString("\n")

	for _, r := range all {
		fmt.Fprintf(&b, "## %s\n\n", r.sizeLabel())
		fmt.Fprintf(&b, "| what | wall (median) | wall (max) | peak RSS (max) | peak anonymous (max) | ÷ cheapest floor | ÷ JSON floor | API requests (plugin count / audit log) | list pages (plugin / audit) | bytes read |\n")
		fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|\n")
		cf, jf := r.cheap.median(wallOf), r.floor.median(wallOf)
		for _, s := range r.plugins() {
			w := s.median(wallOf)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %.0f / %.0f | %.0f / %.0f | |\n", s.name, secs(w), secs(s.max(wallOf)), mib(s.max(rssOf)), mib(s.max(anonOf)),
				ratio(w, cf), ratio(w, jf), s.median(reqsOf), s.median(auditReqs), s.median(pagesOf), s.median(auditPages))
		}
		for _, s := range []*series{&r.cheap, &r.floor} {
			fmt.Fprintf(&b, "| %s | %s | %s | %s (one curl) | | | | %.0f | | %.1f MB |\n", s.name, secs(s.median(wallOf)), secs(s.max(wallOf)), mib(s.max(rssOf)), s.median(reqsOf), s.median(bytesOf)/1e6)
		}
		if len(r.kubectl.samples) > 0 {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | | | | | | %.1f MB |\n", r.kubectl.name, secs(r.kubectl.median(wallOf)), secs(r.kubectl.max(wallOf)), mib(r.kubectl.max(rssOf)), r.kubectl.median(bytesOf)/1e6)
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "The executable alone (`--version`): peak RSS %s, of which anonymous %s; the rest is the executable's own file pages mapped by the kernel.\n\n", mib(float64(r.baseline.rssKB)), mib(float64(r.baseline.anonKB)))
		if len(r.pre.samples) > 0 && len(r.chart.samples) > 0 && len(r.post.samples) > 0 {
			fmt.Fprintf(&b, "Check statuses: without a chart %s; with the chart %s. Exit codes: pre %d, with the chart %d, post %d.\n\n",
				statusLine(r.pre.samples[0].statuses), statusLine(r.chart.samples[0].statuses), r.pre.samples[0].code, r.chart.samples[0].code, r.post.samples[0].code)
		}
		for _, n := range r.cheapNotes {
			fmt.Fprintf(&b, "Note: %s.\n\n", n)
		}
	}

	fmt.Fprintf(&b, "## Requests at %dx\n\n", first.factor)
	fmt.Fprintf(&b, "The cheapest-encoding floor's LISTs (from the audit log of the run with the chart):\n\n")
	for _, q := range first.cheapReqs {
		fmt.Fprintf(&b, "- `%s` (%s, %s)\n", q.Path, q.Resource, q.Encoding)
	}
	b.WriteString("\n")
	if len(first.requestsByKind) > 0 {
		fmt.Fprintf(&b, "Requests of one pre-install run with the chart by verb and resource (audit log, pages included):\n\n")
		keys := make([]string, 0, len(first.requestsByKind))
		for k := range first.requestsByKind {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "- `%s` × %s\n", k, first.requestsByKind[k])
		}
		b.WriteString("\n")
	}

	b.WriteString("## Per run\n\nPlugin runs: wall s / peak RSS MiB / requests+pages by plugin count; audit requests+pages. Floors and kubectl: wall s / peak RSS MiB.\n\n")
	for _, r := range all {
		fmt.Fprintf(&b, "%s:\n\n", r.sizeLabel())
		for _, s := range r.plugins() {
			fmt.Fprintf(&b, "- %s:", s.name)
			for _, x := range s.samples {
				fmt.Fprintf(&b, " %.2f/%d/%d+%d;%d+%d", x.wall.Seconds(), x.rssKB/1024, x.requests-x.pages, x.pages, x.audit.total-x.audit.pages, x.audit.pages)
			}
			b.WriteString("\n")
		}
		for _, s := range []*series{&r.cheap, &r.floor, &r.kubectl} {
			if len(s.samples) == 0 {
				continue
			}
			fmt.Fprintf(&b, "- %s:", s.name)
			for _, x := range s.samples {
				fmt.Fprintf(&b, " %.2f/%d", x.wall.Seconds(), x.rssKB/1024)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// sweep is what bench/sweep.json holds: the figures hack/plot draws.
type sweep struct {
	Caption string      `json:"caption"`
	Nodes   []float64   `json:"nodes"`
	Wall    []sweepLine `json:"wall"`
	RSS     []sweepLine `json:"rss"`
}

type sweepLine struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
}

func sweepFigures(all []*results) sweep {
	sw := sweep{Caption: fmt.Sprintf("%s, %d CPUs, %s; medians of %d runs", time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), memTotal(), len(all[0].pre.samples))}
	names := []string{"pre-install, with the chart", "pre-install, no chart", "--post"}
	for i, name := range names {
		w, m := sweepLine{Name: name}, sweepLine{Name: name}
		for _, r := range all {
			s := r.plugins()[i]
			w.Values = append(w.Values, round(s.median(wallOf), 3))
			m.Values = append(m.Values, round(s.max(rssOf)/1024, 1))
		}
		sw.Wall = append(sw.Wall, w)
		sw.RSS = append(sw.RSS, m)
	}
	cheap, floor := sweepLine{Name: "cheapest-encoding floor (curl)"}, sweepLine{Name: "JSON floor (curl)"}
	for _, r := range all {
		sw.Nodes = append(sw.Nodes, float64(r.scale.Nodes))
		cheap.Values = append(cheap.Values, round(r.cheap.median(wallOf), 3))
		floor.Values = append(floor.Values, round(r.floor.median(wallOf), 3))
	}
	sw.Wall = append(sw.Wall, cheap, floor)
	return sw
}

func round(v float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(v*p+0.5)) / p
}

// drawCharts runs the plotting module (its own go.mod, so that the
// plugin's carries no plotting dependencies) on outDir/sweep.json.
func drawCharts(plotDir, outDir string) error {
	pd, err := filepath.Abs(plotDir)
	if err != nil {
		return err
	}
	od, err := filepath.Abs(outDir)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "-C", pd, "run", ".", "-in", filepath.Join(od, "sweep.json"),
		"-wall", filepath.Join(od, "sweep.svg"), "-rss", filepath.Join(od, "sweep-rss.svg"))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("drawing the sweep charts (go -C %s run .): %w", plotDir, err)
	}
	fmt.Printf("drew %s and %s\n", filepath.Join(outDir, "sweep.svg"), filepath.Join(outDir, "sweep-rss.svg"))
	return nil
}

const (
	readmeBegin = "<!-- bench:begin -->"
	readmeEnd   = "<!-- bench:end -->"
)

// rewriteReadme replaces the block between the bench markers of c.readme
// with the sweep, the targets and links to the charts and the results.
func rewriteReadme(c config, all []*results, outDir string, charts bool) error {
	data, err := os.ReadFile(c.readme)
	if err != nil {
		return err
	}
	text := string(data)
	i, j := strings.Index(text, readmeBegin), strings.Index(text, readmeEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %s ... %s block", c.readme, readmeBegin, readmeEnd)
	}
	rel := func(name string) (string, error) {
		a, err := filepath.Abs(filepath.Dir(c.readme))
		if err != nil {
			return "", err
		}
		o, err := filepath.Abs(filepath.Join(outDir, name))
		if err != nil {
			return "", err
		}
		p, err := filepath.Rel(a, o)
		return filepath.ToSlash(p), err
	}
	results, err := rel(filepath.Base(c.out))
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(readmeBegin + "\n")
	b.WriteString("<!-- Written by `make bench` (hack/bench -readme): edits between these markers are overwritten. -->\n\n")
	fmt.Fprintf(&b, "%s Medians of %d runs at each size; the seeding, the floors and per-run values are in [`%s`](%s).\n\n", machineLine(all), c.runs, results, results)
	b.WriteString(sweepTable(all))
	b.WriteString("\n")
	if charts {
		for _, f := range []struct{ alt, name string }{{"wall time against cluster size", "sweep.svg"}, {"peak RSS of the plugin against cluster size", "sweep-rss.svg"}} {
			p, err := rel(f.name)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "![%s](%s)\n\n", f.alt, p)
		}
	}
	b.WriteString(targetsTable(all))
	b.WriteString("\n" + readmeEnd)
	text = text[:i] + b.String() + text[j+len(readmeEnd):]
	return os.WriteFile(c.readme, []byte(text), 0o644)
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
