package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// rolloutManifest is a live Argo Rollout in the runtime's namespace.
const rolloutManifest = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
  namespace: codefresh
spec:
  replicas: 1
  selector:
    matchLabels:
      app: checkout
  template:
    metadata:
      labels:
        app: checkout
    spec:
      containers:
        - name: checkout
          image: example.com/checkout:1
  strategy:
    canary: {}
`

// runUpgrade tells the upgrade story on a second throwaway cluster: a
// runtime on chart 0.26.8 with Argo Rollouts and a live Rollout; the plugin,
// before `helm upgrade` to 0.30.0, names the Rollout whose controller the
// upgrade removes; Argo Rollouts is installed on its own, as the report
// says; the plugin passes (and says which kept CRDs to hand over); real Helm
// upgrades; `--post` reads the runtime.
func runUpgrade(plugin, fixtures, logPath string) error {
	from := filepath.Join("gitops-runtime", "chart-0.26", "gitops-runtime")
	to := filepath.Join("gitops-runtime", "chart", "gitops-runtime")
	rollouts := filepath.Join("argo-rollouts", "install.yaml")
	// The install story (if it ran) wrote the log first: append to it.
	d, assets, closeLog, err := newDemo(plugin, fixtures, logPath, true, from, to, rollouts)
	if err != nil {
		return err
	}
	defer closeLog()
	from, to, rollouts = filepath.Join(fixtures, from), filepath.Join(fixtures, to), filepath.Join(fixtures, rollouts)
	ctx := context.Background()
	live, err := d.startCluster(ctx, assets, "The upgrade story: a second local cluster, two nodes of 4 CPU, 8Gi")
	if err != nil {
		return err
	}
	defer live.Stop()

	values := filepath.Join(d.dir, "values.yaml")
	if err := os.WriteFile(values, []byte("global:\n  codefresh:\n    accountId: demo-account\n    userToken:\n      token: demo-token\n  runtime:\n    name: demo\n"), 0o600); err != nil {
		return err
	}
	rollout := filepath.Join(d.dir, "rollout.yaml")
	if err := os.WriteFile(rollout, []byte(rolloutManifest), 0o600); err != nil {
		return err
	}
	upgrade := []string{"--upgrade", "--release-name", "cf-gitops-runtime", "-n", "codefresh", "--chart", to, "-f", values, "--skip", "platform-reachable"}

	if err := d.step("The runtime on chart 0.26.8 with Argo Rollouts, and a live Rollout", func() error {
		if err := d.run(d.helm, "install", "cf-gitops-runtime", from, "-n", "codefresh", "--create-namespace", "-f", values,
			"--set", "argo-rollouts.enabled=true", "--wait", "--timeout", "3m", "--kubeconfig", d.kubeconfig); err != nil {
			return err
		}
		return d.kubectl("apply", "-f", rollout)
	}); err != nil {
		return err
	}
	if err := d.step("Before helm upgrade to 0.30.0: what will it break?", func() error {
		return d.preflight(upgrade...)
	}); err != nil {
		return err
	}
	if err := d.step("Install Argo Rollouts on its own, as the report says", func() error {
		if err := d.kubectl("create", "namespace", "argo-rollouts"); err != nil {
			return err
		}
		// The Rollouts CRDs exist, kept by the runtime's release: the
		// server-side apply takes their fields over.
		if err := d.kubectl("apply", "--server-side", "--force-conflicts", "-n", "argo-rollouts", "-f", rollouts); err != nil {
			return err
		}
		return d.kubectl("wait", "-n", "argo-rollouts", "--for=condition=Available", "deployment", "--all", "--timeout=90s")
	}); err != nil {
		return err
	}
	if err := d.step("Before helm upgrade, again", func() error {
		return d.preflight(upgrade...)
	}); err != nil {
		return err
	}
	if err := d.step("helm upgrade to chart 0.30.0 (hooks included, --wait)", func() error {
		return d.run(d.helm, "upgrade", "cf-gitops-runtime", to, "-n", "codefresh", "-f", values,
			"--wait", "--timeout", "3m", "--kubeconfig", d.kubeconfig)
	}); err != nil {
		return err
	}
	if err := d.step("After the upgrade", func() error {
		d.say("As after the install, Secret codefresh-token never appears here (no platform to register with): expect that one warning.", 3, 3)
		return d.preflight("--post", "-n", "codefresh")
	}); err != nil {
		return err
	}
	fmt.Printf("\nUpgrade story done in %.0fs. The cluster is stopped now.\n", time.Since(d.total).Seconds())
	return nil
}
