// Package proc runs child processes under a deadline: each in its own process
// group (so a grandchild that keeps stdout open dies with it), killed as a
// group when the context ends, with a WaitDelay so that Wait never blocks on a
// pipe a stray descendant holds, and with its output capped by bytes.
//
// It exists because os/exec's CommandContext kills only the direct child and,
// without WaitDelay, Wait blocks until every holder of the stdout pipe exits
// (https://pkg.go.dev/os/exec#Cmd, fields Cancel and WaitDelay).
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"time"
)

// MaxOutput is the default cap on what a child may write to stdout (and,
// separately, to stderr): 64 KiB. A child that writes more is killed and Run
// returns an *OutputLimitError.
const MaxOutput = 64 << 10

// WaitDelay is how long Run waits, once the child was killed (or exited), for
// its output pipes to close before it closes them itself.
const WaitDelay = 2 * time.Second

// OutputLimitError reports a child killed for writing more than Limit bytes
// to Stream ("stdout" or "stderr").
type OutputLimitError struct {
	Stream string
	Limit  int
}

func (e *OutputLimitError) Error() string {
	return fmt.Sprintf("%s exceeded %s; the process was stopped", e.Stream, FormatBytes(e.Limit))
}

// Options tune Run. The zero value caps stdout and stderr at MaxOutput each.
type Options struct {
	// MaxStdout and MaxStderr cap the captured output in bytes (0: MaxOutput).
	MaxStdout, MaxStderr int
	// Foreground keeps the child in the caller's process group (for an
	// interactive credential plugin that reads the terminal); it is still
	// killed when the context ends.
	Foreground bool
}

// Run starts cmd (whose Stdout must be unset; a Stderr already set is kept
// and not captured), waits for it and
// returns its stdout and stderr. When ctx ends, the child's whole process group
// is killed with SIGKILL; the error then wraps ctx.Err(). When an output cap is
// exceeded the group is killed as well and the error is an *OutputLimitError.
// A non-zero exit is an *exec.ExitError, as with cmd.Run.
func Run(ctx context.Context, cmd *exec.Cmd, opts Options) (stdout, stderr []byte, err error) {
	if opts.MaxStdout <= 0 {
		opts.MaxStdout = MaxOutput
	}
	if opts.MaxStderr <= 0 {
		opts.MaxStderr = MaxOutput
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var mu sync.Mutex
	var started, waited bool
	kill := func() error {
		mu.Lock()
		defer mu.Unlock()
		if !started || waited || cmd.Process == nil {
			return nil // never signal a pid that Wait may have released
		}
		return killGroup(cmd, opts.Foreground)
	}
	out := &capped{limit: opts.MaxStdout, stream: "stdout", over: func(e error) { cancel(e); _ = kill() }}
	errb := &capped{limit: opts.MaxStderr, stream: "stderr", over: func(e error) { cancel(e); _ = kill() }}
	cmd.Stdout = out
	if cmd.Stderr == nil {
		cmd.Stderr = errb // else the caller's (a terminal), uncaptured
	}
	if !opts.Foreground {
		setProcessGroup(cmd)
	}
	cmd.WaitDelay = WaitDelay
	mu.Lock()
	err = cmd.Start()
	started = err == nil
	mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-cctx.Done():
			_ = kill()
		case <-done:
		}
	}()
	err = cmd.Wait()
	mu.Lock()
	if !opts.Foreground {
		// Descendants left behind (a daemonised helper) go with their
		// leader: the group id stays reserved while any member lives.
		_ = killGroup(cmd, false)
	}
	waited = true
	mu.Unlock()
	close(done)
	if cause := context.Cause(cctx); cause != nil {
		var le *OutputLimitError
		if errors.As(cause, &le) {
			return out.bytes(), errb.bytes(), le
		}
		if ctx.Err() != nil {
			return out.bytes(), errb.bytes(), fmt.Errorf("stopped: %w", context.Cause(ctx))
		}
	}
	return out.bytes(), errb.bytes(), err
}

// capped is an io.Writer that keeps the first limit bytes and calls over
// once when more arrive.
type capped struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	limit  int
	stream string
	fired  bool
	over   func(error)
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.limit - c.buf.Len()
	if len(p) <= room {
		return c.buf.Write(p)
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	if !c.fired {
		c.fired = true
		go c.over(&OutputLimitError{Stream: c.stream, Limit: c.limit})
	}
	return len(p), nil // swallow the rest; the child is being killed
}

func (c *capped) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.buf.Bytes()...)
}

// FormatBytes writes n as "64 KiB", "10 MiB" or "123 bytes".
func FormatBytes(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
