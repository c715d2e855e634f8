package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

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

	m := &measurer{c: cs, live: live, admin: live.Admin, plugin: plugin, dir: dir, adminKubeconfig: live.Kubeconfig, withKubectl: withKubectl,
		upgrade: f == 1, fixtures: fixtures}
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
