package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// timeBin is GNU time, which reports a child's peak RSS. The bench's own
// rusage of a child cannot: Go starts children with vfork semantics, so the
// kernel carries the bench's own (large) RSS high-water mark into the
// child's ru_maxrss at exec; GNU time is a small C program, so the error is
// its own ~2 MiB.
const timeBin = "/usr/bin/time"

var timeSeq atomic.Int64

// timed runs cmd under GNU time and returns its wall time, peak RSS (KiB)
// and exit code.
func timed(cmd *exec.Cmd) (sample, error) {
	out := filepath.Join(os.TempDir(), fmt.Sprintf("gitops-preflight-bench-rss-%d-%d", os.Getpid(), timeSeq.Add(1)))
	defer os.Remove(out)
	cmd.Args = append([]string{timeBin, "-f", "%M", "-o", out}, cmd.Args...)
	cmd.Path = timeBin
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	var anon atomic.Int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if kb := childAnonKB(cmd.Process.Pid); kb > anon.Load() {
					anon.Store(kb)
				}
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	<-sampled
	s := sample{wall: time.Since(start), anonKB: anon.Load()}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return s, err
	}
	s.code = cmd.ProcessState.ExitCode()
	data, rerr := os.ReadFile(out)
	if rerr != nil {
		return s, fmt.Errorf("reading peak RSS from GNU time: %w", rerr)
	}
	// The last line is %M; GNU time writes "Command exited with non-zero
	// status N" before it.
	lines := strings.Fields(strings.TrimSpace(string(data)))
	if len(lines) > 0 {
		s.rssKB, _ = strconv.ParseInt(lines[len(lines)-1], 10, 64)
	}
	return s, nil
}

// childAnonKB reads RssAnon (kB) of the first child of pid (GNU time's
// child: the measured program) from /proc; 0 when it cannot.
func childAnonKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return 0
	}
	kids := strings.Fields(string(b))
	if len(kids) == 0 {
		return 0
	}
	st, err := os.ReadFile("/proc/" + kids[0] + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
