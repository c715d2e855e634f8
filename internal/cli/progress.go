package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// progress keeps one status line on a terminal's stderr while checks run, so
// a slow cluster does not look hung: "[3/12] checking node-resources, cluster-admin".
// Each update rewrites the line in place (carriage return, erase line); Done
// erases it before the report is written. It is safe for concurrent use (the
// runner calls OnStart/OnDone from the checks' goroutines).
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	total   int
	done    int
	running map[string]bool
	width   int // longest line allowed, to keep it on one terminal row
}

// eraseLine returns the cursor to column 0 and clears the row (ANSI EL).
const eraseLine = "\r\x1b[K"

func newProgress(w io.Writer, total int) *progress {
	return &progress{w: w, total: total, running: map[string]bool{}, width: 100}
}

// runOptions returns runner hooks that drive p.
func (p *progress) runOptions() checks.RunOptions {
	return checks.RunOptions{OnStart: p.start, OnDone: p.finish}
}

func (p *progress) start(m checks.Meta) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[m.ID] = true
	p.draw()
}

func (p *progress) finish(o checks.Outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.running, o.ID)
	p.done++
	p.draw()
}

// Done erases the line.
func (p *progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.w, eraseLine)
}

func (p *progress) draw() {
	ids := make([]string, 0, len(p.running))
	for id := range p.running {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	line := fmt.Sprintf("[%d/%d] ", p.done, p.total)
	if len(ids) > 0 {
		line += "checking " + strings.Join(ids, ", ")
	} else {
		line += "checking"
	}
	if r := []rune(line); len(r) > p.width {
		line = string(r[:p.width-1]) + "…"
	}
	fmt.Fprint(p.w, eraseLine+line)
}

// runOptions returns the runner options of this run: a progress line on
// stderr when stderr is a terminal (never in CI logs or pipes), and the
// function to call once the checks are done.
func (o *Options) runOptions(total int) (checks.RunOptions, func()) {
	if !o.Host.IsTerminal(o.Streams.ErrOut) {
		return checks.RunOptions{}, func() {}
	}
	p := newProgress(o.Streams.ErrOut, total)
	return p.runOptions(), p.Done
}
