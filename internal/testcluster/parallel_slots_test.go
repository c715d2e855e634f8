package testcluster

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSlotPoolAdmitsLongTestsFirst: tests that ask at once are admitted
// after the settle time, the longest first, then the long ones, a test of two slots not starved
// by those of one behind it, the rest in the order they asked; never more
// slots at once than the pool has.
func TestSlotPoolAdmitsLongTestsFirst(t *testing.T) {
	p := newSlotPool(2, 50*time.Millisecond)
	var (
		mu            sync.Mutex
		order         []string
		inUse, maxUse int
		wg            sync.WaitGroup
	)
	start := time.Now()
	var first time.Duration
	run := func(name string, tk *ticket) {
		defer wg.Done()
		<-tk.ready
		mu.Lock()
		if len(order) == 0 {
			first = time.Since(start)
		}
		order = append(order, name)
		inUse += tk.slots
		maxUse = max(maxUse, inUse)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		inUse -= tk.slots
		mu.Unlock()
		p.release(tk)
	}
	tickets := []struct {
		name string
		tk   *ticket
	}{
		{"a", &ticket{slots: 1}},
		{"b", &ticket{slots: 1}},
		{"long", &ticket{slots: 1, weight: 1}},
		{"long-of-two", &ticket{slots: 2, weight: 1}},
		{"e", &ticket{slots: 1}},
		{"longest", &ticket{slots: 2, weight: 2}},
	}
	for _, x := range tickets {
		x.tk.ready = make(chan struct{})
		p.enqueue(x.tk) // asked in this order
		wg.Add(1)
		go run(x.name, x.tk)
	}
	wg.Wait()
	// a and b are admitted together, when long-of-two ends: either may
	// note it first.
	if len(order) == 6 {
		slices.Sort(order[3:5])
	}
	if got := strings.Join(order, ","); got != "longest,long,long-of-two,a,b,e" {
		t.Errorf("admitted %s, want longest (asked last), long, long-of-two, then a and b, then e", got)
	}
	if maxUse > 2 {
		t.Errorf("%d slots in use at once, the pool has 2", maxUse)
	}
	if first < 50*time.Millisecond {
		t.Errorf("first admitted after %s, before the settle time (50ms)", first)
	}
}

// TestSlotPoolRunsQuietTestsAlone: the quiet tests are admitted first, all
// together whatever the slots, and no other test starts until every quiet
// one has ended; then the others as before.
func TestSlotPoolRunsQuietTestsAlone(t *testing.T) {
	p := newSlotPool(2, 20*time.Millisecond)
	var (
		mu          sync.Mutex
		quietNow    int
		maxQuiet    int
		otherBeside bool
		order       []string
		wg          sync.WaitGroup
	)
	run := func(name string, tk *ticket, hold time.Duration) {
		defer wg.Done()
		<-tk.ready
		mu.Lock()
		order = append(order, name)
		if tk.quiet {
			quietNow++
			maxQuiet = max(maxQuiet, quietNow)
		} else if quietNow > 0 {
			otherBeside = true
		}
		mu.Unlock()
		time.Sleep(hold)
		mu.Lock()
		if tk.quiet {
			quietNow--
		}
		mu.Unlock()
		p.release(tk)
	}
	tickets := []struct {
		name string
		tk   *ticket
		hold time.Duration
	}{
		{"a", &ticket{slots: 1}, 10 * time.Millisecond},
		{"quiet-1", &ticket{}, 40 * time.Millisecond},
		{"longest", &ticket{slots: 2, weight: 2}, 10 * time.Millisecond},
		{"quiet-2", &ticket{}, 60 * time.Millisecond},
		{"quiet-3", &ticket{}, 20 * time.Millisecond},
	}
	for _, x := range tickets {
		if strings.HasPrefix(x.name, "quiet") {
			Quiet(x.tk)
		}
		x.tk.ready = make(chan struct{})
		p.enqueue(x.tk)
		wg.Add(1)
		go run(x.name, x.tk, x.hold)
	}
	wg.Wait()
	if maxQuiet != 3 {
		t.Errorf("at most %d quiet tests at once, want all 3 together", maxQuiet)
	}
	if otherBeside {
		t.Errorf("a test started while a quiet one ran: %v", order)
	}
	if got := strings.Join(order[3:], ","); got != "longest,a" {
		t.Errorf("after the quiet tests %s, want longest,a", got)
	}
	if p.free != 2 || p.quiet != 0 {
		t.Errorf("after all: %d slots free, %d quiet running; want 2 and 0", p.free, p.quiet)
	}
}
