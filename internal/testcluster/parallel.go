package testcluster

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// StartBareAuditedN starts n clusters as StartBareAudited does, all at
// once: n control planes take about as long to start as one.
func StartBareAuditedN(t testing.TB, n int) []*Cluster {
	t.Helper()
	return startN(t, n, false)
}

// StartAuditedN starts n clusters as StartAudited does (controller-manager,
// scheduler and kwok beside each), all at once.
func StartAuditedN(t testing.TB, n int) []*Cluster {
	t.Helper()
	return startN(t, n, true)
}

func startN(t testing.TB, n int, full bool) []*Cluster {
	t.Helper()
	AssetsDir(t) // its instructions, once, from the test's goroutine
	out := make([]*Cluster, n)
	var wg sync.WaitGroup
	g := &goroutineTB{TB: t}
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = startWith(g, full, true)
		}()
	}
	wg.Wait()
	if len(g.fatal) > 0 {
		t.Fatalf("starting %d control planes: %s", n, strings.Join(g.fatal, "; "))
	}
	return out
}

// goroutineTB is a testing.TB for a goroutine of the test's own: Fatal and
// FailNow end that goroutine (runtime.Goexit) and keep the message, for
// the test's goroutine to fail with; the rest is the test's (Cleanup,
// TempDir, Logf and Errorf are safe from any goroutine).
type goroutineTB struct {
	testing.TB
	mu    sync.Mutex
	fatal []string
}

func (g *goroutineTB) Helper() {}

func (g *goroutineTB) Fatalf(format string, args ...any) { g.stop(fmt.Sprintf(format, args...)) }

func (g *goroutineTB) Fatal(args ...any) { g.stop(fmt.Sprint(args...)) }

func (g *goroutineTB) FailNow() { g.stop("FailNow") }

func (g *goroutineTB) stop(msg string) {
	g.mu.Lock()
	g.fatal = append(g.fatal, msg)
	g.mu.Unlock()
	runtime.Goexit()
}
