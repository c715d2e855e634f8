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
