package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

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
	width   int // the terminal's columns: lines are kept shorter, on one row
}

// eraseLine returns the cursor to column 0 and clears the row (ANSI EL).
const eraseLine = "\r\x1b[K"

// newProgress returns a progress line for a terminal of width columns.
func newProgress(w io.Writer, total, width int) *progress {
	return &progress{w: w, total: total, running: map[string]bool{}, width: width}
}

// fitLine cuts line to fewer than width columns (ending in "…" when cut):
// a line as wide as the terminal would wrap on some terminals, and the
// erase that follows would clear only the last of its rows.
func fitLine(line string, width int) string {
	limit := width - 1
	if limit < 1 {
		return ""
	}
	if r := []rune(line); len(r) > limit {
		return string(r[:limit-1]) + "…"
	}
	return line
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
	fmt.Fprint(p.w, eraseLine+fitLine(line, p.width))
}

// terminalProgress returns a progress function that keeps one status line
// on a terminal w: "waiting 42s more for: release-deployed, runtime-workloads".
// The line is cut to the terminal's width columns.
func terminalProgress(w io.Writer, width int) func([]string, time.Duration) {
	return func(ids []string, left time.Duration) {
		if len(ids) == 0 {
			fmt.Fprint(w, eraseLine)
			return
		}
		fmt.Fprint(w, eraseLine+fitLine(fmt.Sprintf("waiting %s more for: %s", left.Round(time.Second), strings.Join(ids, ", ")), width))
	}
}
