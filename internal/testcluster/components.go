package testcluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	_ "embed"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// KwokStages is the kwok Stage configuration the components run with: kwok's
// upstream "fast" node and pod stages plus the project's fault stages, which
// act on pods labelled FaultLabel (see testdata/kwok-stages.yaml).
//
//go:embed testdata/kwok-stages.yaml
var KwokStages []byte

// FaultLabel selects one of the fault stages for a pod (label value
// FaultCrashLoop, FaultImagePull or FaultFail). Put it on a pod template and
// kwok makes the pod fail the way a real one would.
const FaultLabel = "e2e.gitops-preflight.io/fault"

// Fault stage names (values of FaultLabel).
const (
	// FaultCrashLoop: Running, containers waiting in CrashLoopBackOff after 5
	// restarts, last terminated Error with exit code 1.
	FaultCrashLoop = "crashloop"
	// FaultImagePull: Pending, containers waiting in ImagePullBackOff.
	FaultImagePull = "imagepull"
	// FaultFail: containers exit 1 and the pod is Failed (a failing Job pod).
	FaultFail = "fail"
)

// KwokNodeAnnotation marks the nodes kwok manages (kwok runs with
// --manage-nodes-with-annotation-selector=KwokNodeAnnotation=fake).
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

// Components are the parts of a control plane beside kube-apiserver and etcd:
// kube-controller-manager, kube-scheduler and kwok, each a child process.
type Components struct {
	procs []*exec.Cmd
	// exited[i] is closed when procs[i] has exited (its Wait returned).
	exited []chan struct{}
	names  []string
	dir    string
	// kwokPort is kwok's --server-address port: the kubelet port of the
	// nodes it manages (their logs, see ServeLogs).
	kwokPort int
}

// ComponentOptions say where the binaries are and how to reach the apiserver.
type ComponentOptions struct {
	// AssetsDir holds kube-controller-manager, kube-scheduler and kwok.
	AssetsDir string
	// Kubeconfig is an admin (system:masters) kubeconfig.
	Kubeconfig string
	// ServiceAccountKey is the private key the apiserver signs tokens with
	// (envtest: <cert dir>/sa-signer.key).
	ServiceAccountKey string
	// RootCA is the PEM of the apiserver's serving CA.
	RootCA []byte
	// ServiceClusterIPRange is the apiserver's --service-cluster-ip-range.
	ServiceClusterIPRange string
	// Dir is a scratch directory (certificates, logs, kwok's stages).
	Dir string
}

// StartComponents starts kube-controller-manager (all controllers, leader
// election off, the service-account token signer and root CA given), kube-scheduler
// and kwok (managing only nodes annotated KwokNodeAnnotation=fake, with
// KwokStages, at log level WARN; the nodes' InternalIP 127.0.0.1 and kubelet
// port kwok's server, which serves the logs ClusterLogs objects name: see
// ServeLogs), and waits until the first two answer
// /healthz. Their logs go to <Dir>/<name>.log. Stop them with Stop.
func StartComponents(ctx context.Context, o ComponentOptions) (*Components, error) {
	// A port freePorts found free can be taken by another test's process
	// before the component binds it: then the component exits at once
	// ("bind: address already in use") and all start again on other ports.
	for attempt := 1; ; attempt++ {
		c, err := startComponents(ctx, o)
		if err == nil || attempt == 3 || !errors.Is(err, errPortTaken) {
			return c, err
		}
	}
}

// errPortTaken is the error of a component that exited because its port
// was taken.
var errPortTaken = errors.New("its port was taken")

func startComponents(ctx context.Context, o ComponentOptions) (*Components, error) {
	c := &Components{dir: o.Dir}
	caFile := filepath.Join(o.Dir, "root-ca.crt")
	if err := os.WriteFile(caFile, o.RootCA, 0o600); err != nil {
		return nil, err
	}
	signCert, signKey, err := throwawayCA(o.Dir)
	if err != nil {
		return nil, err
	}
	stages := filepath.Join(o.Dir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, KwokStages, 0o600); err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	kcmPort, schedPort, kwokPort := ports[0], ports[1], ports[2]
	c.kwokPort = kwokPort
	if err := c.run(o, "kube-controller-manager",
		"--kubeconfig", o.Kubeconfig, "--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(kcmPort), "--cert-dir", filepath.Join(o.Dir, "kcm-certs"),
		"--controllers=*", "--use-service-account-credentials=false",
		"--service-account-private-key-file", o.ServiceAccountKey, "--root-ca-file", caFile,
		"--cluster-signing-cert-file", signCert, "--cluster-signing-key-file", signKey,
		"--service-cluster-ip-range", o.ServiceClusterIPRange,
		"--node-monitor-period=2s", "--node-monitor-grace-period=20s",
		"--kube-api-qps=200", "--kube-api-burst=400"); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.run(o, "kube-scheduler",
		"--kubeconfig", o.Kubeconfig, "--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(schedPort), "--cert-dir", filepath.Join(o.Dir, "scheduler-certs")); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.run(o, "kwok",
		"--kubeconfig", o.Kubeconfig, "--config", stages,
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector", KwokNodeAnnotation+"=fake",
		"--node-lease-duration-seconds=20", "--cidr=10.244.0.0/16",
		// The nodes' InternalIP and kubelet port are kwok's server, which
		// serves the containers' logs the ClusterLogs objects name (ServeLogs).
		"--node-ip=127.0.0.1", "--node-port="+strconv.Itoa(kwokPort), "--enable-crds=ClusterLogs",
		"--server-address", "127.0.0.1:"+strconv.Itoa(kwokPort), "--v=WARN"); err != nil {
		c.Stop()
		return nil, err
	}
	for i, port := range []int{kcmPort, schedPort} {
		if err := waitHealthz(ctx, port, c.exited[i], filepath.Join(o.Dir, c.names[i]+".log")); err != nil {
			c.Stop()
			return nil, fmt.Errorf("%s: %w", c.names[i], err)
		}
	}
	return c, nil
}

func (c *Components) run(o ComponentOptions, name string, args ...string) error {
	bin := filepath.Join(o.AssetsDir, name)
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("control-plane binary %s missing in %s: run `make test-binaries`", name, o.AssetsDir)
	}
	logf, err := os.Create(filepath.Join(o.Dir, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	c.procs = append(c.procs, cmd)
	c.exited = append(c.exited, exited)
	c.names = append(c.names, name)
	return nil
}

// Stop ends the components (SIGTERM, then SIGKILL after 3 s). They keep no
// state of their own: everything they did is in the apiserver.
func (c *Components) Stop() {
	if c == nil {
		return
	}
	for _, p := range c.procs {
		_ = p.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.Now().Add(3 * time.Second)
	for i, p := range c.procs {
		select {
		case <-c.exited[i]:
		case <-time.After(time.Until(deadline)):
			_ = p.Process.Kill()
		}
	}
	c.procs, c.exited = nil, nil
}

// KubeletPort is the kubelet port of the nodes kwok manages: kwok's server,
// which serves their pods' logs (ServeLogs).
func (c *Components) KubeletPort() int { return c.kwokPort }

// Logs returns each component's warnings and errors (klog lines starting
// W or E, kwok's WARN/ERROR records), the last n bytes of them, for a failing
// test to print.
func (c *Components) Logs(n int) string {
	var b strings.Builder
	for _, name := range c.names {
		data, _ := os.ReadFile(filepath.Join(c.dir, name+".log"))
		var keep []string
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "E") || strings.HasPrefix(l, "W") || strings.Contains(l, `"level":"ERROR"`) || strings.Contains(l, `"level":"WARN"`) {
				keep = append(keep, l)
			}
		}
		fmt.Fprintf(&b, "--- %s ---\n%s\n", name, tail([]byte(strings.Join(keep, "\n")), n))
	}
	return b.String()
}

func waitHealthz(ctx context.Context, port int, exited <-chan struct{}, logPath string) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		// The components' serving certificates are self-signed, on 127.0.0.1.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec
	}}
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/healthz"
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			data, _ := os.ReadFile(logPath)
			if bytes.Contains(data, []byte("address already in use")) {
				return fmt.Errorf("exited before becoming healthy (%w):\n%s", errPortTaken, tail(data, 2000))
			}
			return fmt.Errorf("exited before becoming healthy:\n%s", tail(data, 2000))
		default:
		}
		select {
		case <-ctx.Done():
			data, _ := os.ReadFile(logPath)
			return fmt.Errorf("not healthy after 60s:\n%s", tail(data, 2000))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// throwawayCA writes a self-signed CA for the controller-manager's CSR signer.
func throwawayCA(dir string) (certFile, keyFile string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", err
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "e2e-cluster-signing"}, key)
	if err != nil {
		return "", "", err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, "signing-ca.crt"), filepath.Join(dir, "signing-ca.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: cert.Raw}), 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, os.WriteFile(keyFile, keyPEM, 0o600)
}

// KwokNodeSpec is the Node CreateKwokNode creates: annotated for kwok, with
// capacity and allocatable cpu and memory from s, 100Gi ephemeral-storage
// (the chart's cap-app-proxy requests some: without it the pod never
// schedules) and 110 pods; kwok then reports it Ready and the node lifecycle
// controller removes the node.kubernetes.io/not-ready taint admission added.
func KwokNodeSpec(s NodeSpec) *corev1.Node {
	res := nodeResources(s)
	labels := map[string]string{"kubernetes.io/hostname": s.Name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"}
	for k, v := range s.Labels {
		labels[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: labels,
			Annotations: map[string]string{KwokNodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"}},
		Spec:   corev1.NodeSpec{Unschedulable: s.Unschedulable, Taints: s.Taints, ProviderID: s.ProviderID},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res},
	}
}

// CreateKwokNode creates a kwok-managed node (KwokNodeSpec) and waits (up to
// 30 s) until it is Ready and the node lifecycle controller has removed the
// not-ready taint: a node as a kubelet and Kubernetes leave it. Needs kwok and
// the controller-manager running (StartComponents).
func CreateKwokNode(ctx context.Context, kube kubernetes.Interface, s NodeSpec) error {
	if _, err := kube.CoreV1().Nodes().Create(ctx, KwokNodeSpec(s), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating node %s: %w", s.Name, err)
	}
	return WaitNodeReady(ctx, kube, s.Name, 30*time.Second)
}

// WaitNodeReady waits until node name is Ready and carries no
// node.kubernetes.io/not-ready taint.
func WaitNodeReady(ctx context.Context, kube kubernetes.Interface, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err == nil && nodeReadyUntainted(n) {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("node " + name + " not Ready and untainted after " + timeout.String())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func nodeReadyUntainted(n *corev1.Node) bool {
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady {
			return false
		}
	}
	return ready
}
