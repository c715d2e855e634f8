package testcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Live is a full control plane started outside a test (make demo): etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok, as Start
// runs them. Stop it with Stop.
type Live struct {
	Env        *envtest.Environment
	Admin      *rest.Config
	Kube       kubernetes.Interface
	Kubeconfig string // an admin (system:masters) kubeconfig
	Components *Components
	Dir        string // scratch directory, removed by Stop
	etcdDir    string // etcd data directory on tmpfs (StartBareLive), removed by Stop
}

// StartLive starts a full control plane from the binaries in assets.
func StartLive(ctx context.Context, assets string) (*Live, error) {
	ctrllog.SetLogger(logr.Discard())
	dir, err := os.MkdirTemp("", "gitops-preflight-cluster-")
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets, ControlPlaneStartTimeout: 60 * time.Second, ControlPlaneStopTimeout: 30 * time.Second}
	configureFullAPIServer(env)
	cfg, err := env.Start()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s (did `make test-binaries` run?): %w", assets, err)
	}
	l := &Live{Env: env, Dir: dir}
	admin, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		l.Stop()
		return nil, err
	}
	l.Admin = admin.Config()
	l.Kube = kubernetes.NewForConfigOrDie(l.Admin)
	kc, err := admin.KubeConfig()
	if err != nil {
		l.Stop()
		return nil, err
	}
	l.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(l.Kubeconfig, kc, 0o600); err != nil {
		l.Stop()
		return nil, err
	}
	if err := createLogsCRD(ctx, dynamic.NewForConfigOrDie(l.Admin)); err != nil {
		l.Stop()
		return nil, err
	}
	l.Components, err = StartComponents(ctx, ComponentOptions{
		AssetsDir: assets, Kubeconfig: l.Kubeconfig,
		ServiceAccountKey:     filepath.Join(env.ControlPlane.APIServer.CertDir, "sa-signer.key"),
		RootCA:                cfg.CAData,
		ServiceClusterIPRange: "10.0.0.0/24",
		Dir:                   dir,
	})
	if err != nil {
		l.Stop()
		return nil, err
	}
	return l, nil
}

// Stop stops the components (if any), then the apiserver and etcd, and
// removes the scratch directory (and a tmpfs etcd data directory).
func (l *Live) Stop() {
	l.Components.Stop()
	_ = l.Env.Stop()
	l.removeDirs()
}

// HelmPath returns the Helm 3 client HelmBinary uses ($HELM_E2E_BIN, else
// built once into the user cache directory), for programs outside tests.
func HelmPath() (string, error) {
	if p := os.Getenv("HELM_E2E_BIN"); p != "" {
		return p, nil
	}
	return buildHelm("helm.sh/helm/v3", HelmVersion, "HELM_E2E_BIN")
}
