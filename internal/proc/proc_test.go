//go:build unix

package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestRunOutput(t *testing.T) {
	out, _, err := Run(context.Background(), exec.Command("sh", "-c", "echo v3.22.0"), Options{})
	if err != nil || strings.TrimSpace(string(out)) != "v3.22.0" {
		t.Fatalf("Run = %q, %v", out, err)
	}
}

// A child whose own child keeps stdout open must not hold Run past the
// deadline: the group is killed and WaitDelay closes the pipes.
func TestRunKillsGroupAtDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := Run(ctx, exec.Command("sh", "-c", "sleep 60 & sleep 60"), Options{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Run returned after %s, want about the deadline", d)
	}
}

// A grandchild left behind after the child exits keeps the pipe open: Run
// still returns within WaitDelay.
func TestRunOrphanHoldingStdout(t *testing.T) {
	start := time.Now()
	out, _, err := Run(context.Background(), exec.Command("sh", "-c", "echo v3.9.0; sleep 60 &"), Options{})
	if d := time.Since(start); d > WaitDelay+2*time.Second {
		t.Fatalf("Run returned after %s", d)
	}
	if !strings.Contains(string(out), "v3.9.0") {
		t.Fatalf("out = %q (err %v)", out, err)
	}
}

func TestRunCapsOutput(t *testing.T) {
	start := time.Now()
	out, _, err := Run(context.Background(), exec.Command("yes"), Options{MaxStdout: 1024})
	var le *OutputLimitError
	if !errors.As(err, &le) || le.Stream != "stdout" {
		t.Fatalf("err = %v, want an OutputLimitError on stdout", err)
	}
	if len(out) != 1024 {
		t.Fatalf("kept %d bytes, want 1024", len(out))
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Run returned after %s", d)
	}
}

func TestRunCapsStderr(t *testing.T) {
	_, errOut, err := Run(context.Background(), exec.Command("sh", "-c", "yes >&2"), Options{MaxStderr: 100})
	var le *OutputLimitError
	if !errors.As(err, &le) || le.Stream != "stderr" || len(errOut) != 100 {
		t.Fatalf("err = %v, stderr %d bytes", err, len(errOut))
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int]string{64 << 10: "64 KiB", 10 << 20: "10 MiB", 100: "100 bytes"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestRunLeavesNoDescendant(t *testing.T) {
	out, _, err := Run(context.Background(), exec.Command("sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(out))
	time.Sleep(100 * time.Millisecond)
	// Gone, or a zombie waiting for its new parent to reap it.
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err == nil && !strings.Contains(string(stat), ") Z ") {
		t.Fatalf("descendant %s still running after Run returned: %s", pid, stat)
	}
}
