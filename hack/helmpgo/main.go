// Command helmpgo writes the CPU profile the end-to-end tests build their
// Helm 3 and Helm 4 clients with (go build -pgo,
// https://go.dev/doc/pgo): the profile of `helm template` of every
// gitops-runtime chart line in the fixtures, by each client, merged. Most
// of a Helm call the tests make is that render (the chart's templates
// deepCopy their context), and a client built with its profile renders the
// same manifest for about an eighth less CPU. Helm writes the profile
// itself ($HELM_PPROF_CPU_PROFILE, helm.sh/helm/v3/cmd/helm/profiling.go).
//
//	go run ./hack/helmpgo -helm3 HELM3 -helm4 HELM4 -out internal/testcluster/helm.pgo
//
// HELM3 and HELM4 default to the clients the tests cached
// (testcluster.HelmBinary, Helm4Binary); run it again when the chart lines
// or the Helm versions change.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/fixtures"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// lines are the chart lines rendered, relative to the fixtures folder.
var lines = []string{"gitops-runtime/chart/gitops-runtime", "gitops-runtime/chart-0.27/gitops-runtime", "gitops-runtime/chart-0.26/gitops-runtime"}

// values is the smallest values file every line renders with.
const values = `global:
  codefresh:
    accountId: acc-pgo
    userToken:
      token: not-a-real-token
  runtime:
    name: rt-pgo
`

func main() {
	cache, err := testcluster.ToolCacheDir()
	if err != nil {
		fail(err)
	}
	helm3 := flag.String("helm3", cached(cache, testcluster.HelmVersion), "a Helm 3 client")
	helm4 := flag.String("helm4", cached(cache, testcluster.Helm4Version), "a Helm 4 client")
	out := flag.String("out", filepath.Join("internal", "testcluster", "helm.pgo"), "the merged profile to write")
	flag.Parse()
	if *helm3 == "" || *helm4 == "" {
		fail(fmt.Errorf("no cached Helm 3 and 4 client in %s: run the end-to-end tests once, or give -helm3 and -helm4", cache))
	}
	dir, err := fixtures.Dir(lines...)
	if err != nil {
		fail(err)
	}
	tmp, err := os.MkdirTemp("", "helmpgo-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(tmp)
	vf := filepath.Join(tmp, "values.yaml")
	if err := os.WriteFile(vf, []byte(values), 0o600); err != nil {
		fail(err)
	}
	var profiles []string
	for i, helm := range []string{*helm3, *helm4} {
		for j, line := range lines {
			p := filepath.Join(tmp, fmt.Sprintf("%d-%d.pprof", i, j))
			cmd := exec.Command(helm, "template", "cf-gitops-runtime", filepath.Join(dir, line), "-n", "codefresh", "-f", vf)
			cmd.Env = append(os.Environ(), "HELM_PPROF_CPU_PROFILE="+p, "HOME="+tmp)
			if b, err := cmd.CombinedOutput(); err != nil {
				fail(fmt.Errorf("%s template %s: %w\n%s", helm, line, err, b))
			}
			profiles = append(profiles, p)
		}
	}
	merge := exec.Command("go", append([]string{"tool", "pprof", "-proto"}, profiles...)...)
	merge.Stderr = os.Stderr
	b, err := merge.Output()
	if err != nil {
		fail(fmt.Errorf("go tool pprof -proto: %w", err))
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fail(err)
	}
	fmt.Printf("helmpgo: %d profiles merged into %s (%d bytes)\n", len(profiles), *out, len(b))
}

// cached is a client of version the tests built into cache ("" when none).
func cached(cache, version string) string {
	m, _ := filepath.Glob(filepath.Join(cache, "helm-"+version+"*", "helm"))
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "helmpgo:", err)
	os.Exit(1)
}
