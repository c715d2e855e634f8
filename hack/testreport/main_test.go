package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sample is a package of tests as make test runs them: one passes, one
// fails in a subtest, two run in parallel and log.
const sample = `package sample

import (
	"testing"
	"time"
)

func TestPasses(t *testing.T) { t.Log("quiet") }

func TestFails(t *testing.T) {
	t.Run("sub", func(t *testing.T) { t.Error("the reason it failed") })
}

func TestParallelA(t *testing.T) {
	t.Parallel()
	time.Sleep(300 * time.Millisecond)
	t.Log("from A")
}

func TestParent(t *testing.T) {
	for _, n := range []string{"x", "y"} {
		t.Run(n, func(t *testing.T) {
			t.Parallel()
			time.Sleep(400 * time.Millisecond)
		})
	}
}

func TestParallelB(t *testing.T) {
	t.Parallel()
	t.Log("from B")
}
`

// goTestJSON runs go test -json on sample and returns its output (a
// failing run: exit 1).
func goTestJSON(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":         "module sample\n\ngo 1.22\n",
		"sample_test.go": sample,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-json", "-count=1", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	out, err := cmd.Output()
	if err == nil {
		t.Fatalf("go test passed; the sample has a failing test:\n%s", out)
	}
	return out
}

func streamOf(t *testing.T, input []byte, e2e bool) (out, log, times string) {
	t.Helper()
	var o, l, tm bytes.Buffer
	s := newStream(e2e, &o, &l, &tm)
	if err := s.run(bytes.NewReader(input)); err != nil {
		t.Fatal(err)
	}
	return o.String(), l.String(), tm.String()
}

func TestStream(t *testing.T) {
	input := goTestJSON(t)
	t.Run("unit mode prints the package line and only the failed test's output", func(t *testing.T) {
		out, log, times := streamOf(t, input, false)
		for _, want := range []string{"the reason it failed", "--- FAIL: TestFails", "FAIL\tsample"} {
			if !strings.Contains(out, want) {
				t.Errorf("terminal lacks %q:\n%s", want, out)
			}
		}
		for _, not := range []string{"quiet", "from A", "TestPasses"} {
			if strings.Contains(out, not) {
				t.Errorf("terminal shows %q of a test that passed:\n%s", not, out)
			}
		}
		if !strings.Contains(log, "quiet") || !strings.Contains(log, "--- PASS: TestPasses") {
			t.Errorf("log lacks the passing test's output:\n%s", log)
		}
		lines := strings.Split(strings.TrimSpace(times), "\n")
		if len(lines) != 5 {
			t.Fatalf("times: %d lines, want 5 (top-level tests only):\n%s", len(lines), times)
		}
		got := map[string]string{}
		for _, l := range lines {
			f := strings.Split(l, "\t")
			if len(f) != 4 || f[0] != "sample" {
				t.Fatalf("times line %q", l)
			}
			got[f[1]] = f[3]
			sec, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				t.Fatalf("times line %q: %v", l, err)
			}
			// TestParallelA sleeps 0.3 s; TestParent waits for its
			// parallel subtests' 0.4 s, which go test's own elapsed
			// time of it leaves out.
			if min := map[string]float64{"TestParallelA": 0.3, "TestParent": 0.4}[f[1]]; sec < min {
				t.Errorf("%s took %s s, want at least %.1f s", f[1], f[2], min)
			}
		}
		want := map[string]string{"TestPasses": "pass", "TestFails": "fail", "TestParallelA": "pass", "TestParallelB": "pass", "TestParent": "pass"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("times: %s = %q, want %q", k, got[k], v)
			}
		}
	})
	t.Run("e2e mode prints RUN and PASS lines and names the parallel test of a log line", func(t *testing.T) {
		out, _, _ := streamOf(t, input, true)
		for _, want := range []string{"=== RUN   TestPasses", "--- PASS: TestParallelA", "[TestParallelA] sample_test.go:", "from A", "[TestParallelB]", "the reason it failed"} {
			if !strings.Contains(out, want) {
				t.Errorf("terminal lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("a line that is not an event is printed as it is", func(t *testing.T) {
		out, log, _ := streamOf(t, []byte("# sample\n./x.go:1:1: syntax error\n"), false)
		if out != "# sample\n./x.go:1:1: syntax error\n" || out != log {
			t.Errorf("terminal %q, log %q", out, log)
		}
	})
}

func TestSummary(t *testing.T) {
	phases := [][]string{{"vet", "30", "0"}, {"unit tests", "200", "0"}, {"end-to-end tests", "700", "1"}}
	tests := [][]string{
		{"github.com/gitops-preflight/kubectl-gitops-preflight/test/e2e", "TestSlow", "300.50", "pass"},
		{"github.com/gitops-preflight/kubectl-gitops-preflight/test/e2e", "TestFast", "2.00", "fail"},
		{"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan", "TestMiddle", "40.00", "pass"},
	}
	var b bytes.Buffer
	if err := summary(&b, phases, tests, 2); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"FAILED (exit 1)", "930", "15m30s", "the 2 slowest of 3 tests", "./test/e2e"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "TestSlow") > strings.Index(out, "TestMiddle") || strings.Contains(out, "TestFast") {
		t.Errorf("want TestSlow then TestMiddle, and not TestFast (third):\n%s", out)
	}
}

// A test that waited for the suite's slots (testcluster.Parallel's log
// line) ran for its time less that wait.
func TestSlotWaitIsNotTheTestsTime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ev := func(d time.Duration, action, test, output string) string {
		e := event{Time: t0.Add(d), Action: action, Package: "e2e", Test: test, Output: output}
		if action == "pass" {
			e.Elapsed = 90 // go test's: from cont, the wait for the suite's slots included
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	input := ev(0, "run", "TestLong", "") +
		ev(0, "pause", "TestLong", "") +
		ev(5*time.Second, "cont", "TestLong", "") +
		ev(65*time.Second, "output", "TestLong", "    parallel_slots.go:51: testcluster: waited 1m0s for 1 of 4 slots\n") +
		ev(65*time.Second, "output", "TestLong/sub", "    x_test.go:9: testcluster: waited 9s for 1 of 4 slots\n") +
		ev(95*time.Second, "pass", "TestLong", "")
	_, _, times := streamOf(t, []byte(input), true)
	if want := "e2e\tTestLong\t30.00\tpass\n"; times != want {
		t.Errorf("times %q, want %q (95 s less 5 s paused and 60 s waiting for slots)", times, want)
	}
	// With the line of its end (the suite's slots released after its
	// cleanups), that is its time, whenever go test reports its end.
	input = strings.Replace(input, ev(95*time.Second, "pass", "TestLong", ""),
		ev(93*time.Second, "output", "TestLong", "    x_test.go:3: testcluster: ran 28.3s in 1 of 4 slots\n")+ev(120*time.Second, "pass", "TestLong", ""), 1)
	_, _, times = streamOf(t, []byte(input), true)
	if want := "e2e\tTestLong\t28.30\tpass\n"; times != want {
		t.Errorf("times %q, want %q (the time of its slots)", times, want)
	}
}

// The seed of -shuffle on reaches the terminal, so that a failing order can
// be run again (-shuffle N).
func TestShuffleSeedIsShown(t *testing.T) {
	out, _, _ := streamOf(t, []byte(`{"Action":"output","Package":"e2e","Output":"-test.shuffle 1795937089499790896\n"}`+"\n"), true)
	if out != "-test.shuffle 1795937089499790896\n" {
		t.Errorf("terminal %q, want the seed line", out)
	}
}
