package testcluster

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

// TrimmedChart returns a copy of the chart directory src without the chart
// files no template can read (chart.CopyWithoutUnreadFiles: READMEs, example
// values files), made once per test process and removed when RunParallel's
// tests end. It is the chart the end-to-end tests give Helm, Argo CD's
// repo-server and the plugin: `helm template` of chart 0.30.0 takes about
// 1.4 CPU seconds from the copy instead of 5.0 from the fixture (sprig's
// deepCopy walks every byte of those files in 37 of its templates), and
// the tests run Helm about 250 times. TestHelmRendersTheTrimmedCharts holds
// Helm's rendering of each copy equal to that of its fixture.
func TrimmedChart(t testing.TB, src string) string {
	t.Helper()
	trimmed.mu.Lock()
	m, ok := trimmed.bySrc[src]
	if !ok {
		m = &memo{}
		trimmed.bySrc[src] = m
	}
	trimmed.mu.Unlock()
	return m.get(t, "", func() (string, error) {
		dir, err := scratchDir()
		if err != nil {
			return "", err
		}
		out, err := os.MkdirTemp(dir, "chart-")
		if err != nil {
			return "", err
		}
		// The copy keeps the directory's name: Helm names a chart by its
		// Chart.yaml, Argo CD and the tests by the path.
		out = filepath.Join(out, filepath.Base(src))
		return out, chart.CopyWithoutUnreadFiles(src, out)
	})
}

var trimmed = struct {
	mu    sync.Mutex
	bySrc map[string]*memo
}{bySrc: map[string]*memo{}}

// scratch is the test process's own directory under os.TempDir, made on
// first use and removed by RunParallel when the tests end.
var scratch struct {
	once sync.Once
	dir  string
	err  error
}

func scratchDir() (string, error) {
	scratch.once.Do(func() { scratch.dir, scratch.err = os.MkdirTemp("", "gitops-preflight-e2e-scratch-") })
	return scratch.dir, scratch.err
}

// removeScratch removes the scratch directory, if one was made.
func removeScratch() {
	if scratch.dir != "" {
		_ = os.RemoveAll(scratch.dir)
	}
}
