package testcluster

import (
	"container/heap"
	"flag"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The end-to-end tests run several at a time, each on control planes of its
// own. go test's -parallel N would admit them in an order of its own (the
// reverse of their declaration, or random with -shuffle on), so that a test
// of six minutes may start last and end the suite alone. Parallel admits
// them instead: N slots (go test's -parallel, see RunParallel), the tests
// that say they are long first, then the others in the order they asked.

// ParallelOption says what a test holds while it runs (Parallel).
type ParallelOption func(*ticket)

// Long marks a test that runs for minutes: it is admitted before every
// test that is not long, so that the suite does not end waiting for it.
func Long(tk *ticket) { tk.weight = max(tk.weight, 1) }

// Longest marks one of the few tests that run longest (ten minutes and
// more on a loaded machine): admitted before every Long test. go test
// releases its parallel tests at once and they ask in no set order, so
// among tests of the same weight one of the longest could start last.
func Longest(tk *ticket) { tk.weight = 2 }

// Quiet marks a test that bounds a run's time (--timeout plus a few
// seconds) and so must not share the machine with the heavy tests: the
// quiet tests are admitted first, all together and beside no other (they
// are light: each uses a fraction of a core), and no other test is
// admitted until they have all ended. A quiet test that asks after the
// others have started (go test releases its parallel tests at once, so
// none does) is admitted at once.
func Quiet(tk *ticket) { tk.quiet, tk.weight = true, 3 }

// Slots says that the test runs n control planes at once (subtests on
// clusters started together): it holds n of the suite's slots.
func Slots(n int) ParallelOption {
	return func(tk *ticket) { tk.slots = n }
}

// Parallel makes t a parallel test (t.Parallel) and then waits for its
// slots, held until t ends. Call it first in the test; go test runs the
// tests that do not call it one after the other, before the parallel ones
// start.
func Parallel(t *testing.T, opts ...ParallelOption) {
	t.Helper()
	t.Parallel()
	tk := &ticket{slots: 1, ready: make(chan struct{})}
	for _, o := range opts {
		o(tk)
	}
	s := suiteSlots()
	if tk.quiet {
		tk.slots = 0
	}
	if tk.slots > s.total {
		tk.slots = s.total
	}
	start := time.Now()
	s.acquire(tk)
	admitted := time.Now()
	if waited := admitted.Sub(start); waited > time.Second {
		t.Logf("testcluster: waited %s for %d of %d slots", waited.Round(100*time.Millisecond), tk.slots, s.total)
	}
	// The first cleanup registered runs last: the test's time is from its
	// admission to the end of its other cleanups (its clusters stopped),
	// which go test's own elapsed time of a test with parallel subtests,
	// and the time of its --- PASS line, do not tell (make test's table of
	// the slowest tests reads this line: hack/testreport).
	t.Cleanup(func() {
		t.Logf("testcluster: ran %s in %d of %d slots", time.Since(admitted).Round(100*time.Millisecond), tk.slots, s.total)
		s.release(tk)
	})
}

// parallelFlag is go test's -parallel as the suite's TestMain found it
// (RunParallel); 0 before.
var parallelFlag int

// RunParallel runs the tests of m (a package's TestMain) with the suite's
// slots: as many as go test's -parallel (default GOMAXPROCS), which it then
// raises for go test itself so that Parallel alone decides who runs.
func RunParallel(m *testing.M) int {
	flag.Parse()
	if f := flag.Lookup("test.parallel"); f != nil {
		n, err := strconv.Atoi(f.Value.String())
		if err == nil && n > 0 {
			parallelFlag = n
		}
		_ = f.Value.Set("1000")
	}
	code := m.Run()
	removeScratch()
	return code
}

var (
	slotsOnce sync.Once
	slots     *slotPool
)

func suiteSlots() *slotPool {
	slotsOnce.Do(func() {
		n := parallelFlag
		if n == 0 {
			n = runtime.GOMAXPROCS(0)
		}
		slots = newSlotPool(n, 200*time.Millisecond)
	})
	return slots
}

// ticket is one test's place in the queue.
type ticket struct {
	// weight orders admission: Quiet (3), Longest (2), Long (1), the
	// others (0).
	weight int
	// quiet tickets hold no slot; while one runs no other is admitted.
	quiet bool
	slots int
	seq   int // order of asking
	ready chan struct{}
}

// slotPool admits tickets to total slots: long ones first, then in the
// order they asked. Nothing is admitted until settle has passed since the
// first ask, so that every test released by go test at the same moment is
// in the queue before the first is chosen.
type slotPool struct {
	mu      sync.Mutex
	total   int
	free    int
	queue   ticketQueue
	seq     int
	settled bool
	settle  time.Duration
	// quiet is the number of quiet tickets admitted and not released.
	quiet int
}

func newSlotPool(total int, settle time.Duration) *slotPool {
	return &slotPool{total: total, free: total, settle: settle}
}

// acquire queues tk and waits until it is admitted.
func (p *slotPool) acquire(tk *ticket) {
	p.enqueue(tk)
	<-tk.ready
}

// enqueue queues tk; tk.ready is closed when it is admitted.
func (p *slotPool) enqueue(tk *ticket) {
	p.mu.Lock()
	tk.seq = p.seq
	p.seq++
	heap.Push(&p.queue, tk)
	if p.seq == 1 && !p.settled {
		time.AfterFunc(p.settle, func() {
			p.mu.Lock()
			p.settled = true
			p.admit()
			p.mu.Unlock()
		})
	}
	p.admit()
	p.mu.Unlock()
}

func (p *slotPool) release(tk *ticket) {
	p.mu.Lock()
	if tk.quiet {
		p.quiet--
	} else {
		p.free += tk.slots
	}
	p.admit()
	p.mu.Unlock()
}

// admit starts queued tickets in order while the first one fits: the quiet
// ones at once, the others once no quiet one runs; a ticket that needs more
// slots than are free waits, and so do those behind it (a test of two
// clusters is not starved by tests of one).
func (p *slotPool) admit() {
	if !p.settled {
		return
	}
	for p.queue.Len() > 0 {
		tk := p.queue[0]
		switch {
		case tk.quiet:
			p.quiet++
		case p.quiet == 0 && tk.slots <= p.free:
			p.free -= tk.slots
		default:
			return
		}
		heap.Pop(&p.queue)
		close(tk.ready)
	}
}

// ticketQueue is a heap: the heaviest tickets first, then by seq.
type ticketQueue []*ticket

func (q ticketQueue) Len() int { return len(q) }
func (q ticketQueue) Less(i, j int) bool {
	if q[i].weight != q[j].weight {
		return q[i].weight > q[j].weight
	}
	return q[i].seq < q[j].seq
}
func (q ticketQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *ticketQueue) Push(x any)   { *q = append(*q, x.(*ticket)) }
func (q *ticketQueue) Pop() any {
	old := *q
	tk := old[len(old)-1]
	*q = old[:len(old)-1]
	return tk
}
