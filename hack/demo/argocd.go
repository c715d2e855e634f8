package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// umbrellaValues are the runtime's values as the umbrella chart of the
// Shared Configuration Repository holds them: global: beside
// gitops-runtime:. The argo-gateway HPA is off: the demo cluster serves
// no metrics API, and Argo CD calls an HPA that reads no metrics Degraded.
const umbrellaValues = "global:\n  codefresh:\n    accountId: demo-account\n    userToken:\n      token: demo-token\n  runtime:\n    name: demo\n" +
	"gitops-runtime:\n  argo-gateway:\n    hpa:\n      enabled: false\n"

// installValues are the same values for helm install of the runtime chart
// itself.
const installValues = "global:\n  codefresh:\n    accountId: demo-account\n    userToken:\n      token: demo-token\n  runtime:\n    name: demo\n" +
	"argo-gateway:\n  hpa:\n    enabled: false\n"

// argoWait bounds each wait on Argo CD (a sync, the Application Healthy).
const argoWait = 8 * time.Minute

// runArgoCD tells the story of a runtime handed to Argo CD, on a third
// throwaway cluster: installed with helm install at 0.27.6, then
// "Configured as Argo Application" (the installation guide's last step):
// Argo CD itself (its application controller and repo-server,
// testcluster.LaunchArgoCD, with the runtime chart's own Argo CD settings)
// syncs it from resources/demo/chart of a Shared Configuration Repository
// on disk. The plugin finds the Application; a commit that bumps the
// umbrella chart to 0.30.0 is judged from what Argo CD deployed, with
// Argo CD's rules; Argo CD syncs it; --post reads the Application as the
// controller wrote it.
func runArgoCD(plugin, fixtures, logPath string) error {
	line027 := filepath.Join("gitops-runtime", "chart-0.27", "gitops-runtime")
	line030 := filepath.Join("gitops-runtime", "chart", "gitops-runtime")
	d, assets, closeLog, err := newDemo(plugin, fixtures, logPath, true, line027, line030)
	if err != nil {
		return err
	}
	defer closeLog()
	argocdBin, err := testcluster.FindArgoCD()
	if err != nil {
		return err
	}
	argocdSrc, err := testcluster.ArgoCDSource()
	if err != nil {
		return err
	}
	line027, line030 = filepath.Join(fixtures, line027), filepath.Join(fixtures, line030)
	ctx := context.Background()
	live, err := d.startCluster(ctx, assets, "The Argo CD story: a third local cluster, two nodes of 4 CPU, 8Gi")
	if err != nil {
		return err
	}
	defer live.Stop()

	values := filepath.Join(d.dir, "values.yaml")
	if err := os.WriteFile(values, []byte(installValues), 0o600); err != nil {
		return err
	}
	umbrella := func(name, line, version string) (string, error) {
		dir := filepath.Join(d.dir, name, "resources", "demo", "chart")
		return dir, testcluster.WriteUmbrella(dir, line, version, umbrellaValues)
	}
	commit027, err := umbrella("commit-1", line027, "0.27.6")
	if err != nil {
		return err
	}
	commit030, err := umbrella("commit-2", line030, "0.30.0")
	if err != nil {
		return err
	}
	repoDir := filepath.Join(d.dir, "shared-configuration-repository")
	if err := os.Mkdir(repoDir, 0o755); err != nil {
		return err
	}
	repo, err := testcluster.NewGitRepoIn(repoDir)
	if err != nil {
		return err
	}
	const app, path = "demo", "resources/demo/chart"

	if err := d.step("The runtime on chart 0.27.6, installed with helm install", func() error {
		return d.run(d.helm, "install", "cf-gitops-runtime", line027, "-n", "codefresh", "--create-namespace", "-f", values,
			"--wait", "--timeout", "3m", "--kubeconfig", d.kubeconfig)
	}); err != nil {
		return err
	}
	var argo *testcluster.ArgoCD
	defer func() {
		if argo != nil {
			argo.Stop()
		}
	}()
	// sync pushes chart to the repository's resources/demo/chart, lets the
	// controller see the commit and waits until it has synced it and the
	// Application is Synced and Healthy.
	sync := func(chart, message string) error {
		rev, err := repo.Push(chart, path, message)
		if err != nil {
			return err
		}
		d.say(fmt.Sprintf("commit %s: %s", rev[:8], message), 3, 3)
		if err := argo.RefreshApplication(ctx, app); err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, argoWait)
		defer cancel()
		got, err := argo.AwaitSync(wctx, app, rev)
		if err != nil {
			return err
		}
		phase, _, _ := unstructured.NestedString(got.Object, "status", "operationState", "phase")
		msg, _, _ := unstructured.NestedString(got.Object, "status", "operationState", "message")
		d.say(fmt.Sprintf("Argo CD synced %s: %s: %s", rev[:8], phase, msg), 3, 3)
		if phase != "Succeeded" {
			return fmt.Errorf("argo CD's sync of %s: %s: %s", rev[:8], phase, msg)
		}
		return argo.AwaitHealthy(wctx, app)
	}
	if err := d.step("Configure the runtime as an Argo CD Application: Argo CD syncs resources/demo/chart (0.27.6)", func() error {
		d.say("Argo CD's application controller and repo-server start beside the cluster with the runtime's own Argo CD settings. The Application codefresh/demo (automated, prune, ServerSideApply=true) points at resources/demo/chart of the Shared Configuration Repository; Argo CD renders the umbrella chart with helm template, runs its PreSync hooks and applies every object with its tracking label. From now on the runtime is upgraded by a commit, and the Helm release record stays at revision 1.", 3, 3)
		var err error
		argo, err = testcluster.LaunchArgoCD(testcluster.ArgoCDCluster{Admin: live.Admin, Kubeconfig: live.Kubeconfig, Dir: live.Dir},
			testcluster.ArgoCDOptions{Namespace: "codefresh", Chart: line027, Release: "cf-gitops-runtime", Values: values}, argocdBin, argocdSrc, d.helm)
		if err != nil {
			return err
		}
		dyn, err := dynamic.NewForConfig(live.Admin)
		if err != nil {
			return err
		}
		application := testcluster.RuntimeApplication(app, "codefresh", repo.URL(), path, "cf-gitops-runtime",
			testcluster.SyncPolicy{Prune: true, ServerSideApply: true})
		if _, err := dyn.Resource(testcluster.ApplicationGVR).Namespace("codefresh").Create(ctx, application, metav1.CreateOptions{}); err != nil {
			return err
		}
		if err := sync(commit027, "the runtime at 0.27.6"); err != nil {
			return err
		}
		return d.preflight("--post", "--only", "release-deployed,runtime-workloads,runtime-application")
	}); err != nil {
		return err
	}
	if err := d.step("A commit bumps resources/demo/chart to 0.30.0: what will Argo CD's sync do?", func() error {
		return d.preflight("--upgrade", "-n", "codefresh", "--chart", commit030, "--skip", "platform-reachable")
	}); err != nil {
		return err
	}
	if err := d.step("Argo CD syncs the commit", func() error {
		return sync(commit030, "bump the runtime to 0.30.0")
	}); err != nil {
		return err
	}
	if err := d.step("After the sync", func() error {
		d.say("The Application is Synced and Healthy; the Helm release record still says 0.27.6: expect that warning.", 3, 3)
		return d.preflight("--post", "--only", "release-deployed,runtime-workloads,runtime-application")
	}); err != nil {
		return err
	}
	fmt.Printf("\nArgo CD story done in %.0fs. The cluster is stopped now.\n", time.Since(d.total).Seconds())
	return nil
}

// startCluster starts a story's throwaway cluster with two nodes of 4 CPU,
// 8Gi, as the step title says, and points the demo at it; the caller
// stops it.
func (d *demo) startCluster(ctx context.Context, assets, title string) (*testcluster.Live, error) {
	var live *testcluster.Live
	err := d.step(title, func() error {
		var err error
		if live, err = testcluster.StartLive(ctx, assets); err != nil {
			return err
		}
		if err := testcluster.CreateClusterDNS(ctx, live.Kube); err != nil {
			return err
		}
		for _, n := range []string{"worker-1", "worker-2"} {
			if err := testcluster.CreateKwokNode(ctx, live.Kube, testcluster.NodeSpec{Name: n, CPU: "4", Memory: "8Gi"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if live != nil {
			live.Stop()
		}
		return nil, err
	}
	d.dir, d.kubeconfig = live.Dir, live.Kubeconfig
	return live, nil
}
