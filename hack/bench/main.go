// Command bench measures kubectl gitops-preflight on large clusters (make
// bench). For each size factor of -scales (default 1,2,4) it starts a fresh
// bare test control plane (internal/testcluster's StartBareLive: etcd on
// tmpfs and kube-apiserver from bin/k8s) with an audit log, fills it
// concurrently with client-go (at 1x by default 5,000 Ready nodes, 30,000
// Running pods bound to them, 2,000 namespaces, 20,000 Services, 10,000
// Deployments; at every size the real Argo CD and Argo Rollouts CRDs, 50
// other CRDs, ingress-nginx and ten Helm release-Secret bombs), measures,
// and stops it before the next size. It measures, over -runs interleaved
// runs each:
//
//   - the pre-install run of the built plugin without and with the real
//     chart, and the --post run: wall time, API requests (the plugin's own
//     count through the hidden --debug-request-count flag, cross-checked
//     with the apiserver audit log, which also shows whether any kind was
//     listed twice) and peak RSS;
//   - two floors, raw HTTP LISTs with curl, concurrently, one unpaginated
//     request per kind, nothing decoded: every kind the checks read as JSON,
//     and the LISTs the run with the chart made (from the audit log) in the
//     cheapest encoding (protobuf; metadata-only for CRDs, Secrets,
//     ConfigMaps and custom resources);
//   - the remote mode (-rtt, default 50 ms): the plugin runs again through a
//     TCP proxy that adds that round-trip time to every request, each
//     remote run beside a local run of the same arguments (the order
//     alternating), the difference taken pair by pair, with their request
//     counts;
//   - at the first size only (-kubectl-every-scale: all), the by-hand path:
//     kubectl get nodes,ns,svc,deploy,ds,sts,crd,ingressclass,pods -A -o json,
//     after every plugin measurement of the size (its gigabytes of JSON
//     leave the API server's garbage collector busy for what runs next).
//
// It prints the tables and writes them, with the machine and date, to -out,
// the sweep's figures to sweep.json beside it, draws them with the hack/plot
// module (gonum.org/v1/plot, a module of its own) to sweep.svg and
// sweep-rss.svg, and with -readme rewrites the README's bench block.
// The real CRD and ingress-nginx manifests and the gitops-runtime charts are
// read from the upstream fixtures at run time (-fixtures, else where
// internal/fixtures finds them); the bench fails, naming `make fixtures`,
// when they are missing.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/fixtures"
)

// scale is what to seed.
type scale struct {
	Nodes, Namespaces, Services, Deployments, OtherCRDs int
	// PodsPerNode are Running pods bound to each node, with requests, for
	// the runtime-schedulable check's list of all active pods.
	PodsPerNode int
	// ReleaseBombs are Helm release Secrets whose payload expands to ~760 MB
	// (each under 1 MiB stored): the plugin must stay within its memory figure.
	ReleaseBombs int
}

type config struct {
	scale
	plugin, assets, fixtures, out, readme, plotDir string
	runs, workers                                  int
	// rtt is the round-trip time the remote mode adds (0: no remote mode).
	rtt                time.Duration
	keep, kubectlEvery bool
	scales             []int
}

func main() {
	var c config
	flag.IntVar(&c.Nodes, "nodes", 5000, "Ready nodes to create (at scale 1)")
	flag.IntVar(&c.Namespaces, "namespaces", 2000, "namespaces to create (at scale 1)")
	flag.IntVar(&c.Services, "services", 20000, "headless Services to create (spread over the namespaces; at scale 1)")
	flag.IntVar(&c.Deployments, "deployments", 10000, "Deployments to create (spread over the namespaces; at scale 1)")
	flag.IntVar(&c.PodsPerNode, "pods-per-node", 6, "Running pods bound to each node, with cpu and memory requests (spread over the namespaces; 6 x 5,000 nodes = 30,000 pods)")
	flag.IntVar(&c.OtherCRDs, "other-crds", 50, "CRDs to create besides the Argo CD and Argo Rollouts ones (not scaled)")
	flag.IntVar(&c.ReleaseBombs, "release-bombs", 10, "Helm release Secrets whose gzip payload expands to ~760 MB (decompression bombs; 0: none; not scaled)")
	scales := flag.String("scales", "1,2,4", "size factors: for each, a fresh control plane seeded with the sizes above times the factor, then the same measurements")
	flag.IntVar(&c.runs, "runs", 5, "runs of each measurement (the median is reported)")
	flag.DurationVar(&c.rtt, "rtt", 50*time.Millisecond, "remote mode: the same plugin runs again through a TCP proxy on 127.0.0.1 that adds this round-trip time to every request, reported beside the local figures (0: no remote mode)")
	flag.IntVar(&c.workers, "workers", 48, "concurrent requests while seeding")
	flag.StringVar(&c.plugin, "plugin", "bin/kubectl-gitops_preflight", "the built plugin")
	flag.StringVar(&c.assets, "assets", envOr("KUBEBUILDER_ASSETS", "bin/k8s"), "directory holding etcd and kube-apiserver")
	flag.StringVar(&c.fixtures, "fixtures", "", "upstream fixtures folder (default: $"+fixtures.EnvVar+", ../shared/fixtures/upstream, then the cache of `make fixtures`)")
	flag.StringVar(&c.out, "out", "bench/results.md", "results file (empty: do not write); sweep.json, sweep.svg and sweep-rss.svg are written beside it")
	flag.StringVar(&c.readme, "readme", "", "README whose generated bench block (<!-- BEGIN GENERATED bench (make bench) -->) is rewritten with the sweep (empty: none)")
	flag.StringVar(&c.plotDir, "plot", "hack/plot", "the plotting module (gonum.org/v1/plot) that draws the sweep charts (empty: no charts)")
	flag.BoolVar(&c.kubectlEvery, "kubectl-every-scale", false, "time the kubectl get -o json dump at every scale (default: the first only; it costs ~25 s and ~1.9 GB at 5,000 nodes)")
	flag.BoolVar(&c.keep, "keep", false, "after measuring, keep the last scale's cluster running until interrupted (prints its admin kubeconfig)")
	flag.Parse()
	for _, f := range strings.Split(*scales, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bench: -scales %q: want positive integers separated by commas\n", *scales)
			os.Exit(2)
		}
		c.scales = append(c.scales, n)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// times is the scale of size factor f: nodes (and so pods), namespaces,
// Services and Deployments multiplied, CRDs and release bombs as they are.
func (s scale) times(f int) scale {
	s.Nodes *= f
	s.Namespaces *= f
	s.Services *= f
	s.Deployments *= f
	return s
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// benchFixtures are the fixture paths the bench reads.
var benchFixtures = []string{"argo-cd/install.yaml", "argo-rollouts/install.yaml", "ingress-nginx/cloud.yaml",
	"gitops-runtime/chart/gitops-runtime", "gitops-runtime/chart-0.27/gitops-runtime"}

// findFixtures returns dir when it holds every file the bench reads, else
// (dir empty) the folder internal/fixtures finds.
func findFixtures(dir string) (string, error) {
	if dir == "" {
		return fixtures.Dir(benchFixtures...)
	}
	for _, p := range benchFixtures {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			return "", fmt.Errorf("upstream fixture %s missing in -fixtures %s", p, dir)
		}
	}
	return dir, nil
}
