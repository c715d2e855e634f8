package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// Host is what the command needs from the process; main fills it.
type Host struct {
	// Getenv reads an environment variable.
	Getenv func(string) string
	// IsTerminal reports whether w is an interactive terminal.
	IsTerminal func(w io.Writer) bool
	// IsInputTerminal reports whether r is an interactive terminal (--fix
	// asks for confirmation only when stdin and stdout both are).
	IsInputTerminal func(r io.Reader) bool
	// TerminalWidth returns the width in columns of the terminal w is, or 0
	// when it cannot tell (then the width is taken as 80).
	TerminalWidth func(w io.Writer) int
}

// withDefaults returns h with a no-op for every hook not set: no
// environment, no terminal.
func (h Host) withDefaults() Host {
	if h.Getenv == nil {
		h.Getenv = func(string) string { return "" }
	}
	if h.IsTerminal == nil {
		h.IsTerminal = func(io.Writer) bool { return false }
	}
	if h.IsInputTerminal == nil {
		h.IsInputTerminal = func(io.Reader) bool { return false }
	}
	if h.TerminalWidth == nil {
		h.TerminalWidth = func(io.Writer) int { return 0 }
	}
	return h
}

// defaultTerminalWidth is the width assumed for a terminal that does not say.
const defaultTerminalWidth = 80

// console is the process's streams as the command writes to them: whether
// each is a terminal, how wide, whether it takes colour and a progress
// line, and the questions --fix asks on it.
type console struct {
	streams genericiooptions.IOStreams
	host    Host
}

// width is the column count of w when w is a terminal, else 0.
func (c console) width(w io.Writer) int {
	if !c.host.IsTerminal(w) {
		return 0
	}
	if n := c.host.TerminalWidth(w); n > 0 {
		return n
	}
	return defaultTerminalWidth
}

// outputWidth is the width the table report wraps to: the terminal's when
// stdout is one, 0 (full lines for tools) when it is piped.
func (c console) outputWidth() int { return c.width(c.streams.Out) }

// fleetWidth is the width the fleet table fits: the terminal's, else 80
// columns (the matrix folds to stay readable in a log too).
func (c console) fleetWidth() int {
	if w := c.outputWidth(); w > 0 {
		return w
	}
	return defaultTerminalWidth
}

// progressWidth is the width of the progress line on stderr, or 0 when no
// progress line may be written: stderr is not a terminal, or TERM is "dumb"
// (a terminal that cannot erase a line).
func (c console) progressWidth() int {
	if c.host.Getenv("TERM") == "dumb" {
		return 0
	}
	return c.width(c.streams.ErrOut)
}

// colorEnabled reports whether the report is coloured: stdout is a terminal
// that can show colour (TERM is not "dumb", as ncurses and git treat it), and
// neither --no-color (noColor) nor NO_COLOR (https://no-color.org) says no.
func (c console) colorEnabled(noColor bool) bool {
	return !noColor && c.host.Getenv("NO_COLOR") == "" && c.host.Getenv("TERM") != "dumb" && c.host.IsTerminal(c.streams.Out)
}

// interactive reports whether a person can confirm: stdin and stdout are
// both terminals.
func (c console) interactive() bool {
	return c.host.IsInputTerminal(c.streams.In) && c.host.IsTerminal(c.streams.Out)
}

// runOptions returns the runner options of a round of total checks: a
// progress line on stderr when stderr is a terminal other than TERM=dumb
// (never in CI logs or pipes), and the function to call once the checks
// are done.
func (c console) runOptions(total int) (checks.RunOptions, func()) {
	width := c.progressWidth()
	if width == 0 {
		return checks.RunOptions{}, func() {}
	}
	p := newProgress(c.streams.ErrOut, total, width)
	return p.runOptions(), p.Done
}

// planWriter is where the fix plan and results go: stdout for the table, and
// stderr for machine formats, so that stdout stays one JSON document.
// (The wide table is a table.) On a terminal the lines are word-wrapped to
// its width like the report's, continuations indented under their line.
func (c console) planWriter(format reporters.Format) io.Writer {
	w := c.streams.ErrOut
	if format == reporters.FormatTable || format == reporters.FormatWide {
		w = c.streams.Out
	}
	if width := c.width(w); width > 0 {
		return &wrapWriter{w: w, width: width}
	}
	return w
}

// confirm asks on w and reads one line from stdin; only "y" or "yes" agree.
func (c console) confirm(w io.Writer) (bool, error) {
	fmt.Fprint(w, "Apply these changes? [y/N]: ")
	if f, ok := w.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			return false, err
		}
	}
	line, err := bufio.NewReader(c.streams.In).ReadString('\n')
	if err != nil && line == "" {
		if err == io.EOF {
			return false, nil
		}
		return false, fmt.Errorf("reading confirmation: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// wrapWriter word-wraps each complete line written through it to width
// columns (reporters.Wrap; a continuation is indented 4 more than its
// line); Flush writes a pending partial line (a prompt) as it is.
type wrapWriter struct {
	w     io.Writer
	width int
	buf   []byte
}

func (ww *wrapWriter) Write(p []byte) (int, error) {
	ww.buf = append(ww.buf, p...)
	for {
		i := bytes.IndexByte(ww.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(ww.buf[:i])
		ww.buf = ww.buf[i+1:]
		for _, l := range reporters.Wrap(line, ww.width, 0, 4) {
			if _, err := io.WriteString(ww.w, l+"\n"); err != nil {
				return 0, err
			}
		}
	}
}

// Flush writes what is left of a line that has no newline yet.
func (ww *wrapWriter) Flush() error {
	if len(ww.buf) == 0 {
		return nil
	}
	_, err := ww.w.Write(ww.buf)
	ww.buf = nil
	return err
}
