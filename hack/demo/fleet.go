package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// The fleet story's contexts: one cluster ready for the runtime, one not.
const (
	readyContext   = "prod-eu"
	blockedContext = "dev-us"
)

// argoCDCRDs selects the three CustomResourceDefinitions of Argo CD's
// upstream install.yaml (kubectl apply -l): a community Argo CD's CRDs,
// which no Helm release of the runtime owns.
const argoCDCRDs = "app.kubernetes.io/name in (applications.argoproj.io,applicationsets.argoproj.io,appprojects.argoproj.io)"

// runFleet tells the fleet story on two throwaway clusters: prod-eu
// with two nodes of 4 CPU, 8Gi, and dev-us with one node of 1 CPU, 2Gi and
// a community Argo CD's CRDs; one kubeconfig names both. The plugin checks
// every context at once (--all-contexts: the checks × clusters matrix, then
// dev-us's failures); --bundle records the dev-us run; dev-us stops; replay
// of the bundle, with no cluster and no kubeconfig, reaches the same
// verdict (exit code and summary line).
//
// The clusters are bare (etcd and kube-apiserver, StartBareLive): the
// pre-install checks read nodes, CRDs and Helm releases, and nothing needs
// to reconcile, so the nodes are written as a kubelet registers them
// (CreateNode) rather than run by kwok. appendLog appends to the log of an
// earlier story.
func runFleet(plugin, fixtures, logPath string, appendLog bool) error {
	argoCD := filepath.Join("argo-cd", "install.yaml")
	chartDir := filepath.Join("gitops-runtime", "chart", "gitops-runtime")
	d, assets, closeLog, err := newDemo(plugin, fixtures, logPath, appendLog, argoCD, chartDir)
	if err != nil {
		return err
	}
	defer closeLog()
	if d.dir, err = os.MkdirTemp("", "gitops-preflight-fleet-"); err != nil {
		return err
	}
	defer os.RemoveAll(d.dir)
	// The chart and the manifest are linked into the working folder, so
	// that the commands read as a user types them there.
	chart, argoCDLink := filepath.Join(d.dir, "gitops-runtime"), filepath.Join(d.dir, "argo-cd-install.yaml")
	for link, target := range map[string]string{chart: chartDir, argoCDLink: argoCD} {
		if err := os.Symlink(filepath.Join(fixtures, target), link); err != nil {
			return err
		}
	}
	argoCD = argoCDLink
	ctx := context.Background()

	clusters := map[string]*testcluster.Live{}
	defer func() {
		for _, l := range clusters {
			l.Stop()
		}
	}()
	if err := d.step("The fleet story: two local clusters (etcd and kube-apiserver each), one kubeconfig with a context for each", func() error {
		// Both at once: each start mostly waits for its apiserver.
		var mu sync.Mutex
		var g errgroup.Group
		for _, name := range []string{readyContext, blockedContext} {
			g.Go(func() error {
				l, err := testcluster.StartBareLive(testcluster.BareOptions{Assets: assets, EtcdOnTmpfs: true})
				if err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				clusters[name] = l
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		d.kubeconfig = filepath.Join(d.dir, "kubeconfig")
		if err := mergeKubeconfigs(d.kubeconfig, clusters); err != nil {
			return err
		}
		return d.kubectl("config", "get-contexts")
	}); err != nil {
		return err
	}

	if err := d.step(fmt.Sprintf("%s: two nodes of 4 CPU, 8Gi; %s: one node of 1 CPU, 2Gi and a community Argo CD's CRDs", readyContext, blockedContext), func() error {
		for _, n := range []string{"worker-1", "worker-2"} {
			if err := testcluster.CreateNode(ctx, clusters[readyContext].Kube, node(n, "4", "8Gi")); err != nil {
				return err
			}
		}
		if err := testcluster.CreateNode(ctx, clusters[blockedContext].Kube, node("small-1", "1", "2Gi")); err != nil {
			return err
		}
		return d.kubectl("--context", blockedContext, "apply", "--server-side", "-l", argoCDCRDs, "-f", argoCD)
	}); err != nil {
		return err
	}

	values := filepath.Join(d.dir, "values.yaml")
	if err := os.WriteFile(values, []byte("global:\n  codefresh:\n    accountId: demo-account\n    userToken:\n      token: demo-token\n  runtime:\n    name: demo\n"), 0o600); err != nil {
		return err
	}
	pre := []string{"--chart", chart, "-f", values, "--skip", "platform-reachable"}

	if err := d.step("Every context at once: the checks × clusters matrix, then each cluster's failures", func() error {
		return d.preflight(append([]string{"--all-contexts"}, pre...)...)
	}); err != nil {
		return err
	}

	bundle := filepath.Join(d.dir, blockedContext+".tgz")
	var live int
	if err := d.step(fmt.Sprintf("Record the %s run for support: --bundle", blockedContext), func() error {
		if live, err = d.preflightBrief(append([]string{"--context", blockedContext, "--bundle", bundle}, pre...)...); err != nil {
			return err
		}
		st, err := os.Stat(bundle)
		if err != nil {
			return err
		}
		d.say(fmt.Sprintf("%s: %d KiB", filepath.Base(bundle), (st.Size()+1023)/1024), 3, 3)
		return nil
	}); err != nil {
		return err
	}

	if err := d.step(fmt.Sprintf("Stop %s, then replay the bundle: no cluster, no kubeconfig, no network", blockedContext), func() error {
		clusters[blockedContext].Stop()
		delete(clusters, blockedContext)
		replayed, err := d.preflightBrief("replay", bundle)
		if err != nil {
			return err
		}
		if replayed != live {
			return fmt.Errorf("the replay exits %d, the live run exited %d", replayed, live)
		}
		d.say(fmt.Sprintf("The same verdict as the live run: exit %d both.", live), 3, 3)
		return nil
	}); err != nil {
		return err
	}
	fmt.Printf("\nFleet story done in %.0fs. The clusters are stopped now.\n", time.Since(d.total).Seconds())
	return nil
}

// node is a Linux amd64 node named name with cpu and memory allocatable,
// labelled as a kubelet labels itself (the chart's pods select
// kubernetes.io/os: linux).
func node(name, cpu, memory string) testcluster.NodeSpec {
	return testcluster.NodeSpec{Name: name, CPU: cpu, Memory: memory, Labels: map[string]string{
		"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
	}}
}

// mergeKubeconfigs writes to path one kubeconfig with a context (and its
// own cluster and user entries) for each cluster, named by the map's keys,
// from the admin kubeconfig of each (read and written by client-go).
func mergeKubeconfigs(path string, clusters map[string]*testcluster.Live) error {
	merged := clientcmdapi.NewConfig()
	for name, l := range clusters {
		cfg, err := clientcmd.LoadFromFile(l.Kubeconfig)
		if err != nil {
			return err
		}
		cur, ok := cfg.Contexts[cfg.CurrentContext]
		if !ok {
			return fmt.Errorf("%s: no current context", l.Kubeconfig)
		}
		merged.Clusters[name] = cfg.Clusters[cur.Cluster]
		merged.AuthInfos[name] = cfg.AuthInfos[cur.AuthInfo]
		merged.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	merged.CurrentContext = readyContext
	return clientcmd.WriteToFile(*merged, path)
}

// preflightBrief runs the plugin (as preflight does) and shows only the
// report's heading (its lines before the first blank one) and its summary
// line, then the exit code; the whole report goes to the log. It returns
// the exit code.
func (d *demo) preflightBrief(args ...string) (int, error) {
	cmd, err := d.preflightCmd(args)
	if err != nil {
		return 0, err
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	fmt.Fprintf(d.log, "$ kubectl gitops-preflight %s\n", strings.Join(args, " "))
	if _, err := d.log.Write(out.Bytes()); err != nil {
		return 0, err
	}
	heading := true
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case heading && l == "":
			heading = false
			fmt.Println("  ...")
		case heading, strings.HasPrefix(l, "Summary:"):
			d.say(l, 0, 4)
		}
	}
	return exitCode(runErr)
}
