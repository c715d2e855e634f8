package testcluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// ArgoCDVersion is the Argo CD whose application controller and
// repo-server StartArgoCD runs: the module hack/tools/argocd/go.mod
// requires (TestArgoCDVersionIsTheToolModules). v3.6.1 is the newest
// release that builds from the Go module proxy: from v3.4 to v3.5 Argo CD
// keeps gitops-engine in a nested module of its own repository
// (replace github.com/argoproj/argo-cd/gitops-engine => ./gitops-engine),
// which the proxy serves at no version those releases require; v3.6 tags it
// (github.com/argoproj/argo-cd/gitops-engine/v3 v3.6.x). v3.6 needs Go 1.27:
// the build takes that toolchain from the Go module proxy (GOTOOLCHAIN=auto
// with the toolchain line of hack/tools/argocd/go.mod) when the machine's Go
// is older.
const ArgoCDVersion = "v3.6.1"

var argocdBinary, argocdSource memo

// ArgoCDBinary returns the Argo CD binary StartArgoCD runs (the module
// hack/tools/argocd: Argo CD's application controller and repo-server in one
// binary that runs as the component its name says, os.Args[0]'s base name or
// $ARGOCD_BINARY_NAME): $ARGOCD_E2E_BIN when set (make e2e sets it), else
// <user cache dir>/kubectl-gitops-preflight/ArgoCDCacheName/argocd, which
// `make argocd` builds once per machine. It fails the test when neither is
// there, saying how to build it: a build takes minutes, which make shows as
// a phase of its own rather than a test holding its slots while it waits.
func ArgoCDBinary(t testing.TB) string {
	t.Helper()
	return argocdBinary.get(t, "", FindArgoCD)
}

// FindArgoCD is ArgoCDBinary for a program: the path, or the error that
// says how to build it.
func FindArgoCD() (string, error) {
	if p := os.Getenv("ARGOCD_E2E_BIN"); p != "" {
		return p, nil
	}
	cache, err := ToolCacheDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(cache, ArgoCDCacheName, "argocd")
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("no Argo CD %s at %s: build it with `make argocd` (make e2e, make test and make demo do) or name one in ARGOCD_E2E_BIN", ArgoCDVersion, path)
	}
	return path, nil
}

// ArgoCDCacheName is the tool cache folder of the Argo CD build (the
// Makefile's ARGOCD_DIR): the components hack/tools/argocd builds, at
// ArgoCDVersion.
const ArgoCDCacheName = "argocd-sync-" + ArgoCDVersion

// ArgoCDSourceDir is the source of github.com/argoproj/argo-cd/v3 at
// ArgoCDVersion in the Go module cache (go mod download in the module
// hack/tools/argocd, with its toolchain: the go command refuses a module
// that needs a newer Go), where StartArgoCD reads the CRDs of the Argo CD
// it runs (manifests/crds).
func ArgoCDSourceDir(t testing.TB) string {
	t.Helper()
	return argocdSource.get(t, "", ArgoCDSource)
}

// ArgoCDSource is ArgoCDSourceDir for a program.
func ArgoCDSource() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "mod", "download", "-json", "github.com/argoproj/argo-cd/v3")
	cmd.Dir = filepath.Join(root, "hack", "tools", "argocd")
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOTOOLCHAIN=auto")
	out, err := cmd.Output()
	var m struct{ Version, Dir, Error string }
	if err := errors.Join(err, json.Unmarshal(out, &m)); err != nil {
		return "", fmt.Errorf("go mod download github.com/argoproj/argo-cd/v3 in hack/tools/argocd: %w %s", err, m.Error)
	}
	if m.Dir == "" || m.Version != ArgoCDVersion {
		return "", fmt.Errorf("go mod download github.com/argoproj/argo-cd/v3 in hack/tools/argocd: version %q in %q, want %s", m.Version, m.Dir, ArgoCDVersion)
	}
	return m.Dir, nil
}

// ArgoCDOptions configures StartArgoCD.
type ArgoCDOptions struct {
	// Namespace is Argo CD's own namespace (the runtime's): its settings,
	// the AppProject default and the Applications it reconciles live there.
	// Created when missing.
	Namespace string
	// Chart is a gitops-runtime chart directory: the settings of its Argo CD
	// subchart (argocd-cm, argocd-cmd-params-cm, argocd-rbac-cm and
	// argocd-secret, `helm template Release Chart -n Namespace -f Values`)
	// are created where the namespace lacks them, and the processes get the
	// environment the subchart gives their containers (the application
	// controller's StatefulSet, the repo-server's Deployment), each
	// configMapKeyRef read from the cluster's ConfigMaps as a kubelet reads
	// it. "" creates the four objects empty: Argo CD's defaults.
	Chart string
	// Release is the release name the chart is rendered with
	// (default cf-gitops-runtime); Values a values file ("" for none).
	Release, Values string
}

// ArgoCD is Argo CD's application controller and repo-server running as
// processes of the test beside a test cluster (StartArgoCD).
type ArgoCD struct {
	Namespace string
	kube      kubernetes.Interface
	dyn       dynamic.Interface
	dir       string // where the processes' logs go
	scratch   string // the processes' homes and sockets
	redis     *miniredis.Miniredis
	procs     []*argoProc
}

// ArgoCDCluster is the cluster LaunchArgoCD runs Argo CD against: its admin
// client configuration and kubeconfig, and a directory for the logs.
type ArgoCDCluster struct {
	Admin      *rest.Config
	Kubeconfig string
	Dir        string
}

type argoProc struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

var (
	appProjectGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "appprojects"}
	argoCDStartup = 5 * time.Minute
)

// StartArgoCD runs Argo CD's repo-server and application controller
// (ArgoCDBinary) against c until t ends, as their manifests run them in a
// cluster but as processes of the test:
//   - Argo CD's CRDs (those of ArgoCDVersion, manifests/crds) are created
//     when missing, then its settings (ArgoCDOptions.Chart), and the
//     AppProject default that argocd-server creates at its start (it does
//     not run here:
//     https://github.com/argoproj/argo-cd/blob/v3.6.1/server/server.go
//     initializeDefaultProject);
//   - argocd-secret gets a server.secretkey when it has none (argocd-server
//     writes one at its start too; the settings are incomplete without);
//   - Redis is miniredis in the test process on 127.0.0.1; the repo-server
//     listens on a free loopback port without TLS, the controller reaches
//     it in plaintext; the controller's metrics server (and /healthz) on a
//     free port (it listens on every address: its address is not a flag);
//   - the in-cluster destination https://kubernetes.default.svc is c:
//     ARGOCD_FAKE_IN_CLUSTER=true with KUBECONFIG makes Argo CD build that
//     cluster's client from the kubeconfig
//     (https://github.com/argoproj/argo-cd/blob/v3.6.1/pkg/apis/application/v1alpha1/types.go
//     rawRestConfig);
//   - the repo-server finds first on its PATH what Argo CD's image has in
//     /usr/local/bin: helm (HelmBinary's Helm 3) and Argo CD's scripts
//     (processEnv); then git; it has a HOME, TMPDIR, Helm homes and askpass
//     socket of its own; GnuPG is off.
//
// Their logs are <cluster dir>/argocd-repo-server.log and
// argocd-application-controller.log; a failing test prints their tails.
// StartArgoCD returns once both answer /healthz.
func StartArgoCD(t *testing.T, c *Cluster, o ArgoCDOptions) *ArgoCD {
	t.Helper()
	a, err := LaunchArgoCD(ArgoCDCluster{Admin: c.Admin, Kubeconfig: c.AdminKubeconfig(), Dir: c.dir}, o,
		ArgoCDBinary(t), ArgoCDSourceDir(t), HelmBinary(t))
	if err != nil {
		t.Fatalf("StartArgoCD: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Argo CD logs (tails):\n%s", a.Logs(4000))
		}
		a.Stop()
	})
	return a
}

// LaunchArgoCD is StartArgoCD for a program (the demo): Argo CD's binary
// bin (ArgoCDBinary), its source src (ArgoCDSourceDir, for the CRDs and
// scripts) and a Helm 3 binary helm given; the caller calls Stop. It
// returns once both components answer /healthz, or an error after
// argoCDStartup, with what was started stopped.
func LaunchArgoCD(c ArgoCDCluster, o ArgoCDOptions, bin, src, helm string) (_ *ArgoCD, err error) {
	if o.Namespace == "" {
		return nil, errors.New("no namespace")
	}
	if o.Release == "" {
		o.Release = "cf-gitops-runtime"
	}
	ctx, cancel := context.WithTimeout(context.Background(), argoCDStartup)
	defer cancel()
	kube, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		return nil, err
	}
	a := &ArgoCD{Namespace: o.Namespace, kube: kube, dyn: dynamic.NewForConfigOrDie(c.Admin), dir: c.Dir}
	defer func() {
		if err != nil {
			a.Stop()
		}
	}()
	settings, workloads, err := a.renderArgoCD(ctx, helm, o)
	if err != nil {
		return nil, err
	}
	if err := a.install(ctx, src, o, settings); err != nil {
		return nil, err
	}
	a.redis = miniredis.NewMiniRedis()
	if err := a.redis.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	repoPort, repoMetrics, ctrlMetrics := ports[0], ports[1], ports[2]
	// A short directory of its own: the askpass socket's path must fit a
	// unix socket address (108 bytes). Stop removes it.
	scratch, err := os.MkdirTemp("", "argocd-")
	if err != nil {
		return nil, err
	}
	a.scratch = scratch
	for _, p := range []struct {
		name string
		args []string
		port int
	}{
		{"argocd-repo-server", []string{"--address", "127.0.0.1", "--port", strconv.Itoa(repoPort),
			"--metrics-address", "127.0.0.1", "--metrics-port", strconv.Itoa(repoMetrics), "--disable-tls", "--client-ca-path="}, repoMetrics},
		{"argocd-application-controller", []string{"--namespace", o.Namespace, "--kubeconfig", c.Kubeconfig,
			"--repo-server", "127.0.0.1:" + strconv.Itoa(repoPort), "--repo-server-plaintext", "--metrics-port", strconv.Itoa(ctrlMetrics),
			// A render of the runtime's chart is seconds of CPU; on 2 cores
			// shared by parallel tests it can pass Argo CD's 60 s default.
			"--repo-server-timeout-seconds", "300"}, ctrlMetrics},
	} {
		env, err := a.processEnv(ctx, workloads[p.name], filepath.Join(scratch, p.name), helm, bin, src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		env = append(env, "ARGOCD_BINARY_NAME="+p.name, "KUBECONFIG="+c.Kubeconfig, "ARGOCD_FAKE_IN_CLUSTER=true",
			"ARGOCD_GPG_ENABLED=false", "ARGOCD_ASK_PASS_SOCK="+filepath.Join(scratch, p.name, "askpass.sock"),
			// helm template and git under the same load: 90 s by default.
			"ARGOCD_EXEC_TIMEOUT=5m")
		if p.name == "argocd-repo-server" {
			env = append(env, HelmGOGC) // its helm template calls inherit it
		}
		proc, err := a.start(bin, p.name, append(p.args, "--redis", a.redis.Addr()), env)
		if err != nil {
			return nil, err
		}
		if err := waitHTTPHealthz(ctx, p.port, proc); err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
	}
	return a, nil
}

// install creates what the processes read and argocd-server or Helm
// would have created: the CRDs, the settings (renderArgoCD), the
// AppProject default.
func (a *ArgoCD) install(ctx context.Context, src string, o ArgoCDOptions, settings []*unstructured.Unstructured) error {
	if err := createArgoCDCRDs(ctx, a.dyn, src); err != nil {
		return err
	}
	if _, err := a.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	for _, u := range settings {
		u.SetNamespace(o.Namespace)
		gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
		if u.GetKind() == "Secret" {
			gvr.Resource = "secrets"
		}
		if _, err := a.dyn.Resource(gvr).Namespace(o.Namespace).Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	if err := a.ensureSecretKey(ctx); err != nil {
		return err
	}
	project := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
		"metadata": map[string]any{"name": "default", "namespace": o.Namespace},
		"spec": map[string]any{
			"sourceRepos":              []any{"*"},
			"destinations":             []any{map[string]any{"server": "*", "namespace": "*"}},
			"clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}},
		},
	}}
	return createWhenServed(ctx, a.dyn.Resource(appProjectGVR).Namespace(o.Namespace), project)
}

func createArgoCDCRDs(ctx context.Context, dyn dynamic.Interface, src string) error {
	dir := filepath.Join(src, "manifests", "crds")
	for _, f := range []string{"application-crd.yaml", "applicationset-crd.yaml", "appproject-crd.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if _, err := dyn.Resource(crdResource).Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating CRD %s: %w", u.GetName(), err)
		}
	}
	return nil
}

// createWhenServed creates u, retrying while the API server does not serve
// its resource yet (a CRD just created).
func createWhenServed(ctx context.Context, r dynamic.ResourceInterface, u *unstructured.Unstructured) error {
	for {
		_, err := r.Create(ctx, u, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("creating %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("creating %s %s: %w", u.GetKind(), u.GetName(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// argoSettingNames are the settings objects Argo CD's components read.
var argoSettingNames = []string{"argocd-cm", "argocd-cmd-params-cm", "argocd-rbac-cm", "argocd-secret"}

// argoWorkloadFiles are the templates of the Argo CD subchart that hold
// the application controller and the repo-server.
var argoWorkloadFiles = []string{"argocd-application-controller/statefulset.yaml", "argocd-repo-server/deployment.yaml"}

// renderArgoCD returns, from one render of the chart (helm renders the
// whole chart for any --show-only), the settings Argo CD's components read
// (argocd-cm, argocd-cmd-params-cm, argocd-rbac-cm and argocd-secret) and
// the application controller's StatefulSet and the repo-server's
// Deployment by component name. Without a chart: the four settings empty,
// labelled app.kubernetes.io/part-of: argocd (Argo CD's settings informers
// select that label), and no workloads.
func (a *ArgoCD) renderArgoCD(ctx context.Context, helm string, o ArgoCDOptions) (settings []*unstructured.Unstructured, workloads map[string]*unstructured.Unstructured, err error) {
	workloads = map[string]*unstructured.Unstructured{}
	if o.Chart == "" {
		for _, n := range argoSettingNames {
			kind := "ConfigMap"
			if n == "argocd-secret" {
				kind = "Secret"
			}
			settings = append(settings, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind,
				"metadata": map[string]any{"name": n, "labels": map[string]any{"app.kubernetes.io/part-of": "argocd"}}}})
		}
		return settings, workloads, nil
	}
	files := append([]string(nil), argoWorkloadFiles...)
	for _, n := range argoSettingNames {
		files = append(files, "argocd-configs/"+n+".yaml")
	}
	objs, err := a.renderSubchart(ctx, helm, o, files...)
	if err != nil {
		return nil, nil, err
	}
	for _, u := range objs {
		switch u.GetKind() {
		case "StatefulSet":
			workloads["argocd-application-controller"] = u
		case "Deployment":
			workloads["argocd-repo-server"] = u
		default:
			settings = append(settings, u)
		}
	}
	return settings, workloads, nil
}

// renderSubchart renders templates of the chart's Argo CD subchart
// (charts/argo-cd/templates/<file>) with helm template --show-only.
func (a *ArgoCD) renderSubchart(ctx context.Context, helm string, o ArgoCDOptions, files ...string) ([]*unstructured.Unstructured, error) {
	args := []string{"template", o.Release, o.Chart, "-n", o.Namespace}
	if o.Values != "" {
		args = append(args, "-f", o.Values)
	}
	for _, f := range files {
		args = append(args, "--show-only", "charts/argo-cd/templates/"+f)
	}
	home, err := os.MkdirTemp("", "argocd-helm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	cmd := exec.CommandContext(ctx, helm, args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data", HelmGOGC)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(string(out), "\n---") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return nil, fmt.Errorf("rendered document: %w", err)
		}
		if u.Object != nil && u.GetKind() != "" {
			objs = append(objs, u)
		}
	}
	return objs, nil
}

// ensureSecretKey gives argocd-secret a random server.secretkey when it
// has none, as argocd-server does at its start
// (https://github.com/argoproj/argo-cd/blob/v3.6.1/util/settings/settings.go
// InitializeSettings; updateSettingsFromSecret reports the settings
// incomplete without it).
func (a *ArgoCD) ensureSecretKey(ctx context.Context) error {
	s, err := a.kube.CoreV1().Secrets(a.Namespace).Get(ctx, "argocd-secret", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if len(s.Data["server.secretkey"]) > 0 {
		return nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	patch, _ := json.Marshal(map[string]any{"data": map[string]any{"server.secretkey": base64.StdEncoding.EncodeToString(key)}})
	_, err = a.kube.CoreV1().Secrets(a.Namespace).Patch(ctx, "argocd-secret", types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// processEnv is the environment of a component: the test process's, a
// HOME, TMPDIR and PATH of its own, then what the chart gives its
// container (w, nil without a chart): each value, an absolute path placed
// under dir (the container's file system); each configMapKeyRef read from
// the cluster, left out where the ConfigMap or key is missing (all are
// optional in the chart); secretKeyRef and fieldRef left out (the Redis
// credentials: the miniredis has none). The PATH starts with what Argo
// CD's image puts in /usr/local/bin
// (https://github.com/argoproj/argo-cd/blob/v3.6.1/Dockerfile): helm, and
// the scripts git-verify-wrapper.sh and gpg-wrapper.sh of the Argo CD
// source src (the repo-server runs the first on every commit it
// checks out, GnuPG on or off: reposerver/repository/repository.go
// VerifyCommitSignature); then argocd under its component names.
func (a *ArgoCD) processEnv(ctx context.Context, w *unstructured.Unstructured, dir, helm, argocd, src string) ([]string, error) {
	bin := filepath.Join(dir, "bin")
	for _, d := range []string{bin, filepath.Join(dir, "home"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	links := map[string]string{"helm": helm, "argocd": argocd, "argocd-git-ask-pass": argocd}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			return nil, err
		}
	}
	for _, script := range []string{"git-verify-wrapper.sh", "gpg-wrapper.sh"} {
		data, err := os.ReadFile(filepath.Join(src, "hack", script))
		if err != nil {
			return nil, err
		}
		// The module cache's copy is read-only and not executable.
		if err := os.WriteFile(filepath.Join(bin, script), data, 0o755); err != nil { //nolint:gosec // a script to run
			return nil, err
		}
	}
	env := append(os.Environ(), "HOME="+filepath.Join(dir, "home"), "TMPDIR="+filepath.Join(dir, "tmp"),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		// The image's: no DNS TXT lookups for gRPC service configs.
		"GRPC_ENABLE_TXT_SERVICE_CONFIG=false")
	if w == nil {
		return env, nil
	}
	containers, _, _ := unstructured.NestedSlice(w.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		return env, nil
	}
	vars, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
	cms := map[string]map[string]string{}
	for _, v := range vars {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		if value, ok := m["value"].(string); ok {
			if strings.HasPrefix(value, "/") {
				value = filepath.Join(dir, "root", value)
				if err := os.MkdirAll(value, 0o755); err != nil {
					return nil, err
				}
			}
			env = append(env, name+"="+value)
			continue
		}
		ref, found, _ := unstructured.NestedStringMap(m, "valueFrom", "configMapKeyRef")
		if !found {
			continue
		}
		data, ok := cms[ref["name"]]
		if !ok {
			cm, err := a.kube.CoreV1().ConfigMaps(a.Namespace).Get(ctx, ref["name"], metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
			if err == nil {
				data = cm.Data
			}
			cms[ref["name"]] = data
		}
		if value, ok := data[ref["key"]]; ok {
			env = append(env, name+"="+value)
		}
	}
	return env, nil
}

// start runs bin as component name (its os.Args[0]), its output into
// <cluster dir>/<name>.log.
func (a *ArgoCD) start(bin, name string, args, env []string) (*argoProc, error) {
	p := &argoProc{name: name, log: filepath.Join(a.dir, name+".log"), exited: make(chan struct{})}
	logf, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	p.cmd = &exec.Cmd{Path: bin, Args: append([]string{name}, args...), Env: env, Stdout: logf, Stderr: logf,
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}}
	if err := p.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() { _ = p.cmd.Wait(); logf.Close(); close(p.exited) }()
	a.procs = append(a.procs, p)
	return p, nil
}

// Stop ends the processes, the controller first (SIGTERM, then SIGKILL
// after 5 s), then Redis, and removes their scratch directory.
func (a *ArgoCD) Stop() {
	for i := len(a.procs) - 1; i >= 0; i-- {
		p := a.procs[i]
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	a.procs = nil
	if a.redis != nil {
		a.redis.Close()
		a.redis = nil
	}
	if a.scratch != "" {
		_ = os.RemoveAll(a.scratch)
		a.scratch = ""
	}
}

// Logs returns the last n bytes of each component's log.
func (a *ArgoCD) Logs(n int) string {
	var b strings.Builder
	for _, p := range a.procs {
		data, _ := os.ReadFile(p.log)
		fmt.Fprintf(&b, "--- %s (%s) ---\n%s\n", p.name, p.log, tail(data, n))
	}
	return b.String()
}

// waitHTTPHealthz waits until http://127.0.0.1:port/healthz answers 200, or
// the process exits, or ctx ends.
func waitHTTPHealthz(ctx context.Context, port int, p *argoProc) error {
	client := &http.Client{Timeout: 2 * time.Second}
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/healthz"
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.exited:
			data, _ := os.ReadFile(p.log)
			return fmt.Errorf("exited before answering /healthz:\n%s", tail(data, 3000))
		case <-ctx.Done():
			data, _ := os.ReadFile(p.log)
			return fmt.Errorf("no /healthz answer within %s:\n%s", argoCDStartup, tail(data, 3000))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Refresh asks the controller to compare Application name with Git again
// now (RefreshApplication), failing the test on an error.
func (a *ArgoCD) Refresh(t testing.TB, name string) {
	t.Helper()
	if err := a.RefreshApplication(context.Background(), name); err != nil {
		t.Fatal(err)
	}
}

// RefreshApplication asks the controller to compare Application name with
// Git again now (the annotation argocd.argoproj.io/refresh: normal, as
// `argocd app get --refresh` sets it; the controller removes it), rather
// than at its next reconciliation (timeout.reconciliation).
func (a *ArgoCD) RefreshApplication(ctx context.Context, name string) error {
	patch := []byte(`{"metadata":{"annotations":{"argocd.argoproj.io/refresh":"normal"}}}`)
	if _, err := a.dyn.Resource(ApplicationGVR).Namespace(a.Namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("refreshing Application %s/%s: %w", a.Namespace, name, err)
	}
	return nil
}

// WaitOperation is AwaitSync with a timeout, failing the test on an error.
func (a *ArgoCD) WaitOperation(t testing.TB, name, revision string, timeout time.Duration) *unstructured.Unstructured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	app, err := a.AwaitSync(ctx, name, revision)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// AwaitSync waits until the controller has finished a sync of Application
// name to revision (status.operationState.syncResult.revision, a phase
// Succeeded, Failed or Error) and compared it (status.sync.revision), and
// returns the Application. When ctx ends first the error holds the
// Application and the tails of the components' logs.
func (a *ArgoCD) AwaitSync(ctx context.Context, name, revision string) (*unstructured.Unstructured, error) {
	var app *unstructured.Unstructured
	for {
		var err error
		app, err = a.dyn.Resource(ApplicationGVR).Namespace(a.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
			return nil, err
		}
		if err == nil {
			phase, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "phase")
			synced, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "syncResult", "revision")
			compared, _, _ := unstructured.NestedString(app.Object, "status", "sync", "revision")
			if synced == revision && compared == revision && (phase == "Succeeded" || phase == "Failed" || phase == "Error") {
				return app, nil
			}
		}
		select {
		case <-ctx.Done():
			status, _ := yaml.Marshal(app)
			return nil, fmt.Errorf("no finished sync of %s by Application %s/%s: %w:\n%s\n%s", revision, a.Namespace, name, ctx.Err(), status, a.Logs(3000))
		case <-time.After(time.Second):
		}
	}
}

// SyncPolicy is the spec.syncPolicy of the runtime's Application: automated
// always, Prune (syncPolicy.automated.prune), SelfHeal
// (syncPolicy.automated.selfHeal) and ServerSideApply (the sync option
// ServerSideApply=true).
type SyncPolicy struct {
	Prune, SelfHeal, ServerSideApply bool
}

// RuntimeApplication is the runtime's Application as the installation
// guide's last step ("Configure as Argo Application") makes it, in
// namespace: project default, the in-cluster destination (namespace), the
// chart at path of repoURL at HEAD rendered with release as its release
// name, labelled codefresh.io/entity: runtime, with policy. A failed sync
// is retried once (syncPolicy.retry.limit 1): Argo CD's default for an
// automated sync, 5 retries with backoff, runs the PreSync hooks again each
// time and takes minutes to report a refusal that is the same every time.
func RuntimeApplication(name, namespace, repoURL, path, release string, policy SyncPolicy) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": name, "namespace": namespace, "labels": map[string]any{"codefresh.io/entity": "runtime"}},
		"spec": map[string]any{
			"project":     "default",
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": namespace},
			"source": map[string]any{"repoURL": repoURL, "path": path, "targetRevision": "HEAD",
				"helm": map[string]any{"releaseName": release}},
			"syncPolicy": policy.Spec(),
		},
	}}
}

// Spec is the policy as spec.syncPolicy holds it.
func (p SyncPolicy) Spec() map[string]any {
	policy := map[string]any{"automated": map[string]any{"prune": p.Prune, "selfHeal": p.SelfHeal}, "retry": map[string]any{"limit": int64(1)}}
	if p.ServerSideApply {
		policy["syncOptions"] = []any{"ServerSideApply=true"}
	}
	return policy
}

// AwaitHealthy waits until Argo CD says Application name is Synced and
// Healthy (status.sync.status, status.health.status).
func (a *ArgoCD) AwaitHealthy(ctx context.Context, name string) error {
	var sync, health string
	for {
		app, err := a.dyn.Resource(ApplicationGVR).Namespace(a.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			sync, _, _ = unstructured.NestedString(app.Object, "status", "sync", "status")
			health, _, _ = unstructured.NestedString(app.Object, "status", "health", "status")
			if sync == "Synced" && health == "Healthy" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("application %s/%s is %s and %s, not Synced and Healthy: %w", a.Namespace, name, sync, health, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}
