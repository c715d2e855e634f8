package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// argoSim is testcluster.ArgoSync (what Argo CD does when it syncs the
// runtime's Application, step by step: see its doc) failing the test on
// any error of the simulation.
type argoSim struct {
	*tc.ArgoSync
	t *testing.T
}

func newArgoSim(t *testing.T, c *tc.Cluster, name string, prune bool) *argoSim {
	a := tc.NewArgoSync(c.Admin, c.AdminKubeconfig(), tc.HelmBinary(t), runtimeNS, name, runtimeRelease)
	a.Prune = prune
	return &argoSim{ArgoSync: a, t: t}
}

// umbrella writes the chart the Shared Configuration Repository holds for
// the runtime (testcluster.WriteUmbrella) around fixture line, at version,
// with values.
func umbrella(t *testing.T, line, version, values string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "chart")
	if err := tc.WriteUmbrella(dir, chartLine(t, line), version, values); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sync syncs chart; it returns whether the sync succeeded.
func (a *argoSim) sync(chart string) bool {
	a.t.Helper()
	ok, err := a.Sync(context.Background(), chart)
	if err != nil {
		a.t.Fatal(err)
	}
	return ok
}

func (a *argoSim) writeStatus() {
	a.t.Helper()
	if err := a.WriteStatus(context.Background()); err != nil {
		a.t.Fatal(err)
	}
}

func (a *argoSim) waitHealthy() {
	a.t.Helper()
	if err := a.WaitHealthy(context.Background(), 120*time.Second); err != nil {
		a.t.Fatal(err)
	}
}

func (a *argoSim) health(i tc.ArgoItem) string {
	a.t.Helper()
	h, _, err := a.Health(context.Background(), i)
	if err != nil {
		a.t.Fatal(err)
	}
	return h
}
