package testcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// BareOptions configures StartBareLive: a bare control plane (etcd and
// kube-apiserver only, as StartBare runs them) for a program rather than a
// test (make bench).
type BareOptions struct {
	// Assets is the directory holding etcd and kube-apiserver (bin/k8s).
	Assets string
	// APIServerFlags are extra kube-apiserver flags, name (no dashes) to
	// values; each replaces envtest's value of that flag, if any (for
	// example "audit-log-path", "max-requests-inflight", or
	// "disable-admission-plugins", whose envtest default is ServiceAccount).
	APIServerFlags map[string][]string
	// EtcdFlags are extra etcd flags, likewise (for example
	// "quota-backend-bytes", "unsafe-no-fsync").
	EtcdFlags map[string][]string
	// EtcdOnTmpfs puts etcd's data directory under /dev/shm when it is
	// writable (else envtest's temporary directory), so that a program
	// measuring a client does not measure the disk. Stop removes it.
	EtcdOnTmpfs bool
	// StartTimeout and StopTimeout bound starting and stopping the control
	// plane; zero means 60 s and 30 s.
	StartTimeout, StopTimeout time.Duration
}

// StartBareLive starts etcd and kube-apiserver from opts.Assets with
// opts' extra flags and adds an admin (system:masters) user whose kubeconfig
// is Live.Kubeconfig. Nothing reconciles, schedules or reports status:
// Live.Components is nil. Stop it with Stop, which also removes a tmpfs etcd
// data directory.
func StartBareLive(opts BareOptions) (*Live, error) {
	ctrllog.SetLogger(logr.Discard())
	dir, err := os.MkdirTemp("", "gitops-preflight-cluster-")
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    opts.Assets,
		ControlPlaneStartTimeout: orDefault(opts.StartTimeout, 60*time.Second),
		ControlPlaneStopTimeout:  orDefault(opts.StopTimeout, 30*time.Second),
	}
	env.ControlPlane.Etcd = &envtest.Etcd{}
	env.ControlPlane.APIServer = &envtest.APIServer{}
	l := &Live{Env: env, Dir: dir}
	if opts.EtcdOnTmpfs {
		l.etcdDir = etcdOnTmpfs(env)
	}
	etcd := env.ControlPlane.Etcd.Configure()
	for k, v := range opts.EtcdFlags {
		etcd.Set(k, v...)
	}
	api := env.ControlPlane.APIServer.Configure()
	for k, v := range opts.APIServerFlags {
		api.Set(k, v...)
	}
	if _, err := env.Start(); err != nil {
		l.removeDirs()
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s (did `make test-binaries` run?): %w", opts.Assets, err)
	}
	if l.Admin, l.Kubeconfig, err = l.AddUser("admin", "system:masters"); err != nil {
		l.Stop()
		return nil, err
	}
	l.Kube = kubernetes.NewForConfigOrDie(l.Admin)
	return l, nil
}

// etcdOnTmpfs gives env's etcd (env.ControlPlane.Etcd, set) a data
// directory under /dev/shm when it is writable and returns it ("" when it is
// not, and envtest's temporary directory on disk serves). envtest leaves a
// DataDir it was given in place: the caller removes it after stopping.
func etcdOnTmpfs(env *envtest.Environment) string {
	shm, err := os.MkdirTemp("/dev/shm", "gitops-preflight-etcd-")
	if err != nil {
		return ""
	}
	env.ControlPlane.Etcd.DataDir = shm
	return shm
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// EtcdDataDir is etcd's data directory (under /dev/shm when
// BareOptions.EtcdOnTmpfs took effect).
func (l *Live) EtcdDataDir() string { return l.Env.ControlPlane.Etcd.DataDir }

// AddUser adds a user with the given groups (client-certificate
// credentials; no RBAC bindings unless the caller creates them) and returns
// its client config and the path of its kubeconfig, written into l.Dir as
// <name>.kubeconfig.
func (l *Live) AddUser(name string, groups ...string) (*rest.Config, string, error) {
	base := l.Admin
	if base == nil {
		base = l.Env.Config
	}
	u, err := l.Env.AddUser(envtest.User{Name: name, Groups: groups}, base)
	if err != nil {
		return nil, "", fmt.Errorf("adding user %s: %w", name, err)
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig of %s: %w", name, err)
	}
	p := filepath.Join(l.Dir, name+".kubeconfig")
	if err := os.WriteFile(p, kc, 0o600); err != nil {
		return nil, "", err
	}
	return u.Config(), p, nil
}

func (l *Live) removeDirs() {
	os.RemoveAll(l.Dir)
	if strings.HasPrefix(l.etcdDir, "/dev/shm/") {
		os.RemoveAll(l.etcdDir)
	}
}
