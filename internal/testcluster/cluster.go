package testcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/go-logr/logr"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Cluster is one running control plane.
type Cluster struct {
	Env   *envtest.Environment
	Admin *rest.Config
	Kube  kubernetes.Interface
	dir   string
	admin string // admin kubeconfig path
	// Components are the controller-manager, scheduler and kwok (nil for a
	// bare cluster).
	Components *Components
	// auditLog is the API server's audit log (StartBareAudited), "" without.
	auditLog string
}

var (
	logOnce sync.Once
)

var root memo

// RepoRoot returns the plugin module's root directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	return root.get(t, "", repoRoot)
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// AssetsDir returns the directory holding etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok, failing
// the test with instructions when they are not built.
func AssetsDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), "bin", "k8s")
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			t.Fatalf("control-plane binary %s missing in %s: run `make test-binaries` (or `make test`, which builds them)", b, dir)
		}
	}
	return dir
}

// Start starts a control plane that behaves like a cluster and stops it when
// t ends: etcd and kube-apiserver (envtest, with the ServiceAccount admission
// plugin enabled again), kube-controller-manager, kube-scheduler and kwok
// (StartComponents). Deployments get ReplicaSets and pods, the scheduler binds
// pods or leaves them Pending with its FailedScheduling event, Jobs complete,
// and nodes made by AddNode are kwok nodes kept Ready. Ready in ~5 s (about 1 s
// more than StartBare); stopping takes a few seconds more too.
func Start(t testing.TB) *Cluster {
	t.Helper()
	return start(t, true)
}

// StartBare starts only etcd and kube-apiserver: a quiet cluster where nothing
// reconciles, schedules or reports status. Use it when the test's point is a
// state Kubernetes cannot reach with simulated nodes, written by the test
// itself; say which in the test.
func StartBare(t testing.TB) *Cluster {
	t.Helper()
	return start(t, false)
}

// StartBareAudited is StartBare with the API server's audit log on: every
// request is logged (level Metadata, in the blocking mode: an event is in
// the file before its response is sent), for AuditEvents.
func StartBareAudited(t testing.TB) *Cluster {
	t.Helper()
	return startWith(t, false, true)
}

// StartAudited is Start (controller-manager, scheduler and kwok beside
// the API server) with the API server's audit log on, for AuditEvents.
func StartAudited(t testing.TB) *Cluster {
	t.Helper()
	return startWith(t, true, true)
}

// AuditEvent is what AuditEvents returns of one audit log event: who sent
// the request (the authenticated user name, "system:anonymous" when none),
// its user agent, URI and verb ("create", "patch", "delete", "get",
// "list", ...), and for a delete the body it carried (its DeleteOptions,
// raw JSON; nil for other verbs or when it had none).
type AuditEvent struct {
	User       string
	UserAgent  string
	RequestURI string
	Verb       string
	Body       []byte
}

// AuditEvents reads the audit log of a cluster started by StartBareAudited,
// one event per request (the ResponseComplete stage), in order.
func (c *Cluster) AuditEvents(t testing.TB) []AuditEvent {
	t.Helper()
	if c.auditLog == "" {
		t.Fatal("AuditEvents: the cluster was not started by StartBareAudited")
	}
	data, err := os.ReadFile(c.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	var out []AuditEvent
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var ev struct {
			Stage         string          `json:"stage"`
			RequestURI    string          `json:"requestURI"`
			UserAgent     string          `json:"userAgent"`
			Verb          string          `json:"verb"`
			RequestObject json.RawMessage `json:"requestObject"`
			User          struct {
				Username string `json:"username"`
			} `json:"user"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("audit log line %q: %v", line, err)
		}
		if ev.Stage == "ResponseComplete" {
			out = append(out, AuditEvent{User: ev.User.Username, UserAgent: ev.UserAgent, RequestURI: ev.RequestURI, Verb: ev.Verb, Body: ev.RequestObject})
		}
	}
	return out
}

// auditPolicy logs every request's metadata, and a delete's body too (its
// DeleteOptions, where a dry run may be asked for instead of the query).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Request
  verbs: ["delete", "deletecollection"]
- level: Metadata
`

func start(t testing.TB, full bool) *Cluster {
	t.Helper()
	return startWith(t, full, false)
}

func startWith(t testing.TB, full, audit bool) *Cluster {
	t.Helper()
	logOnce.Do(func() { ctrllog.SetLogger(logr.Discard()) })
	assets := AssetsDir(t)
	env := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		ControlPlaneStartTimeout: 60 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	if full {
		configureFullAPIServer(env)
	}
	// Webhook and aggregated-API calls to a Service go to its endpoints'
	// addresses, not its ClusterIP: a Service with no ready endpoint is
	// refused in the API server ("no endpoints available"), as in a
	// cluster whose ClusterIPs the API server cannot reach, instead of
	// dialling a ClusterIP that routes off this machine.
	env.ControlPlane.GetAPIServer().Configure().Set("enable-aggregator-routing", "true")
	// etcd's data on tmpfs and no fsync: a test's cluster is thrown away
	// with it, and its writes waited on the disk (on 2 cores the suite spent
	// as long in I/O wait as it computed).
	env.ControlPlane.Etcd = &envtest.Etcd{}
	if shm := etcdOnTmpfs(env); shm != "" {
		t.Cleanup(func() { _ = os.RemoveAll(shm) }) // after env.Stop, registered below
	}
	env.ControlPlane.Etcd.Configure().Set("unsafe-no-fsync", "true")
	dir := t.TempDir()
	var auditLog string
	if audit {
		policy := filepath.Join(dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
			t.Fatal(err)
		}
		auditLog = filepath.Join(dir, "audit.log")
		env.ControlPlane.GetAPIServer().Configure().
			Set("audit-policy-file", policy).
			Set("audit-log-path", auditLog).
			Set("audit-log-mode", "blocking")
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting control plane: %v", err)
	}
	c := &Cluster{Env: env, dir: dir, auditLog: auditLog}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Logf("stopping control plane: %v", err)
		}
	})
	admin, err := env.AddUser(envtest.User{Name: "e2e-admin", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		t.Fatalf("adding admin user: %v", err)
	}
	c.Admin = admin.Config()
	c.Kube = kubernetes.NewForConfigOrDie(c.Admin)
	c.admin = c.writeKubeconfig(t, "admin", admin)
	if full {
		// kwok watches ClusterLogs (--enable-crds): its CRD first.
		if err := createLogsCRD(context.Background(), dynamic.NewForConfigOrDie(c.Admin)); err != nil {
			t.Fatal(err)
		}
		comps, err := StartComponents(context.Background(), ComponentOptions{
			AssetsDir:             assets,
			Kubeconfig:            c.admin,
			ServiceAccountKey:     filepath.Join(env.ControlPlane.APIServer.CertDir, "sa-signer.key"),
			RootCA:                cfg.CAData,
			ServiceClusterIPRange: "10.0.0.0/24", // envtest's
			Dir:                   c.dir,
		})
		if err != nil {
			t.Fatalf("starting controller-manager, scheduler and kwok: %v", err)
		}
		c.Components = comps
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("component logs (tails):\n%s", comps.Logs(3000))
			}
			comps.Stop()
		})
		// Wait for the controller-manager's first work: the default namespace's
		// ServiceAccount, without which no pod can be created there.
		c.waitServiceAccount(t, "default")
	}
	return c
}

// configureFullAPIServer sets the apiserver flags of a full cluster (Start,
// StartLive): ServiceAccount admission back on (envtest disables it because
// nothing would create the default ServiceAccount; the controller-manager
// does), and a node's "kubelet" (kwok's server) reached at its InternalIP, for
// pod logs (ServeLogs); no --kubelet-certificate-authority: kwok's
// certificate is self-signed and not verified.
func configureFullAPIServer(env *envtest.Environment) {
	env.ControlPlane.GetAPIServer().Configure().Disable("disable-admission-plugins").
		Set("kubelet-preferred-address-types", "InternalIP")
}

func (c *Cluster) waitServiceAccount(t testing.TB, ns string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := c.Kube.CoreV1().ServiceAccounts(ns).Get(context.Background(), "default", metav1.GetOptions{}); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no default ServiceAccount in namespace %s after 30s: is the controller-manager running?\n%s", ns, c.Components.Logs(2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Full reports whether the cluster runs the controller-manager, scheduler and kwok.
func (c *Cluster) Full() bool { return c.Components != nil }

// AdminKubeconfig is the path of a kubeconfig for a system:masters user.
func (c *Cluster) AdminKubeconfig() string { return c.admin }

// UserKubeconfig adds a user with the given groups (no RBAC bindings unless
// the test creates them) and returns the path of its kubeconfig.
func (c *Cluster) UserKubeconfig(t testing.TB, name string, groups ...string) string {
	t.Helper()
	u, err := c.Env.AddUser(envtest.User{Name: name, Groups: groups}, c.Admin)
	if err != nil {
		t.Fatalf("adding user %s: %v", name, err)
	}
	return c.writeKubeconfig(t, name, u)
}

func (c *Cluster) writeKubeconfig(t testing.TB, name string, u *envtest.AuthenticatedUser) string {
	t.Helper()
	data, err := u.KubeConfig()
	if err != nil {
		t.Fatalf("kubeconfig for %s: %v", name, err)
	}
	p := filepath.Join(c.dir, name+".kubeconfig")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// NodeSpec describes a node to create. CPU and Memory are allocatable
// quantities ("4", "1500m", "16Gi").
type NodeSpec struct {
	Name          string
	CPU, Memory   string
	NotReady      bool
	Unschedulable bool
	Taints        []corev1.Taint
	ProviderID    string
	Labels        map[string]string
	// InternalIP is the node's InternalIP address (RegisteredNode only).
	InternalIP string
}

// AddNode adds a node. On a full cluster (Start) it is a kwok node with the
// cpu, memory, ephemeral-storage and pods it asks for (CreateKwokNode), Ready
// once kwok reports it and the node lifecycle controller has cleared the
// not-ready taint; a NotReady node is one kwok does not manage, whose status
// says Ready=False. On a bare cluster (StartBare) the status is written by
// hand (CreateNode).
func (c *Cluster) AddNode(t testing.TB, s NodeSpec) {
	t.Helper()
	var err error
	switch {
	case c.Full() && !s.NotReady:
		err = CreateKwokNode(context.Background(), c.Kube, s)
	default:
		err = CreateNode(context.Background(), c.Kube, s)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func nodeResources(s NodeSpec) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse(s.CPU),
		corev1.ResourceMemory:           resource.MustParse(s.Memory),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
	}
}

// CreateNode creates a Node whose status is written by hand, for a cluster
// with no kubelet, kwok or node lifecycle controller (StartBare, make bench):
// allocatable and capacity set, the Ready condition, and exactly the taints
// asked for (nothing else would remove the not-ready taint the
// TaintNodesByCondition admission plugin adds on create). On a full cluster
// use CreateKwokNode (AddNode does).
func CreateNode(ctx context.Context, kube kubernetes.Interface, s NodeSpec) error {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: s.Labels},
		Spec:       corev1.NodeSpec{Unschedulable: s.Unschedulable, Taints: s.Taints, ProviderID: s.ProviderID},
	}
	created, err := kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating node %s: %w", s.Name, err)
	}
	created.Spec.Taints = s.Taints
	if s.NotReady {
		created.Spec.Taints = append(created.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
	}
	if created, err = kube.CoreV1().Nodes().Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("setting taints of node %s: %w", s.Name, err)
	}
	ready, reason := corev1.ConditionTrue, "KubeletReady"
	if s.NotReady {
		ready, reason = corev1.ConditionFalse, "KubeletNotReady"
	}
	res := nodeResources(s)
	created.Status = corev1.NodeStatus{
		Capacity:    res,
		Allocatable: res,
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: ready, Reason: reason,
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
		}},
	}
	if _, err := kube.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("setting status of node %s: %w", s.Name, err)
	}
	return nil
}

// CreateNamespace creates a namespace.
func (c *Cluster) CreateNamespace(t testing.TB, name string) {
	t.Helper()
	_, err := c.Kube.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	if c.Full() {
		c.waitServiceAccount(t, name)
	}
}

// Kubectl runs the kubectl on PATH against the cluster as admin and returns
// its combined output, failing the test on error.
func (c *Cluster) Kubectl(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", c.admin}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// WaitAllowed waits (up to 15 s) until user may verb resource in namespace:
// the RBAC authorizer learns of new bindings through an informer, so a test
// that creates a binding must wait for it before asserting on permissions.
func (c *Cluster) WaitAllowed(t testing.TB, user, verb, resource, namespace string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		out, _ := exec.Command("kubectl", "--kubeconfig", c.admin, "auth", "can-i", verb, resource, "-n", namespace, "--as", user).Output()
		if strings.TrimSpace(string(out)) == "yes" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still may not %s %s in %s after 15s", user, verb, resource, namespace)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
