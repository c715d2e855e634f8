package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// umbrellaValues are the runtime's values as the umbrella chart of the
// Shared Configuration Repository holds them: global: beside
// gitops-runtime:.
const umbrellaValues = "global:\n  codefresh:\n    accountId: demo-account\n    userToken:\n      token: demo-token\n  runtime:\n    name: demo\n"

// runArgoCD tells the story of a runtime handed to Argo CD, on a third
// throwaway cluster: installed with helm install at 0.27.6, then
// "Configured as Argo Application" (the installation guide's last step):
// its own Argo CD syncs it from resources/demo/chart of the Shared
// Configuration Repository. The plugin finds the Application; a commit
// that bumps the umbrella chart to 0.30.0 is judged from what Argo CD
// deployed, with Argo CD's rules; Argo CD syncs it; --post reads the
// Application. Argo CD's sync is testcluster.ArgoSync (what its
// controller and repo-server do, step by step: helm template, PreSync
// hooks, kubectl apply with tracking annotations, prune, status).
func runArgoCD(plugin, fixtures, logPath string) error {
	line027 := filepath.Join("gitops-runtime", "chart-0.27", "gitops-runtime")
	line030 := filepath.Join("gitops-runtime", "chart", "gitops-runtime")
	d, assets, closeLog, err := newDemo(plugin, fixtures, logPath, true, line027, line030)
	if err != nil {
		return err
	}
	defer closeLog()
	line027, line030 = filepath.Join(fixtures, line027), filepath.Join(fixtures, line030)
	ctx := context.Background()
	live, err := d.startCluster(ctx, assets, "The Argo CD story: a third local cluster, two nodes of 4 CPU, 8Gi")
	if err != nil {
		return err
	}
	defer live.Stop()

	values := filepath.Join(d.dir, "values.yaml")
	if err := os.WriteFile(values, []byte(umbrellaValues), 0o600); err != nil {
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
	argo := testcluster.NewArgoSync(live.Admin, live.Kubeconfig, d.helm, "codefresh", "demo", "cf-gitops-runtime")
	// automated, prune, selfHeal, and ServerSideApply=true (the Argo CD
	// chart's CRDs are too large for kubectl apply's last-applied annotation).
	argo.Prune, argo.ServerSideApply = true, true

	if err := d.step("The runtime on chart 0.27.6, installed with helm install", func() error {
		return d.run(d.helm, "install", "cf-gitops-runtime", line027, "-n", "codefresh", "--create-namespace", "-f", values,
			"--wait", "--timeout", "3m", "--kubeconfig", d.kubeconfig)
	}); err != nil {
		return err
	}
	if err := d.step("Configure the runtime as an Argo CD Application: Argo CD syncs resources/demo/chart (0.27.6)", func() error {
		d.say("Argo CD renders the umbrella chart with helm template, runs its PreSync hooks, applies every object with its tracking annotation and writes the Application codefresh/demo (automated, prune, selfHeal, ServerSideApply=true). From now on the runtime is upgraded by a commit, and the Helm release record stays at revision 1.", 3, 3)
		ok, err := argo.Sync(ctx, commit027)
		if err == nil && !ok {
			err = fmt.Errorf("the sync of %s failed", commit027)
		}
		if err != nil {
			return err
		}
		if err := argo.WaitHealthy(ctx, 3*time.Minute); err != nil {
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
		ok, err := argo.Sync(ctx, commit030)
		if err == nil && !ok {
			err = fmt.Errorf("the sync of %s failed", commit030)
		}
		if err != nil {
			return err
		}
		return argo.WaitHealthy(ctx, 3*time.Minute)
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
