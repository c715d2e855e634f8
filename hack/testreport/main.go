// Command testreport turns `go test -json` into what make test shows, and
// ends make test with the table of its phases and its slowest tests:
//
//	go test -json ... 2>&1 | testreport stream -mode unit|e2e -log FILE -times FILE
//	testreport summary -phases FILE -times FILE [-top 10]
//
// stream reads the events of cmd/test2json from stdin. Every test's output
// goes to -log as `go test -v` prints it. The terminal gets, in unit mode,
// each package's "ok"/"FAIL" line and the whole output of a test that
// fails; in e2e mode, each test's RUN and PASS/FAIL lines and the tests' log
// lines (file.go:line: ...), prefixed with the top-level test they belong
// to when tests run in parallel, and the lines of the harness
// ("testcluster: ..."). A line that is not an event (a build error, a
// panic of go test itself) is printed as it is. Each top-level test that
// ends appends "package<TAB>test<TAB>seconds<TAB>pass|fail|skip" to -times
// (its own running time: a parallel test's wait for a slot is not counted).
// stream exits 0 unless it cannot read or write; go test's exit status is
// the pipeline's (make runs it with pipefail).
//
// summary prints the phases hack/progress.sh recorded (PROGRESS_LOG:
// "phase<TAB>seconds<TAB>exit status" lines) and the -top slowest tests of
// -times, seconds each.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testreport stream|summary [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "stream":
		err = streamCmd(os.Args[2:])
	case "summary":
		err = summaryCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (stream or summary)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(1)
	}
}

func streamCmd(args []string) error {
	fs := flag.NewFlagSet("stream", flag.ContinueOnError)
	mode := fs.String("mode", "unit", "unit: package lines and failed tests' output; e2e: RUN/PASS lines and the tests' log lines")
	logPath := fs.String("log", "", "file for the whole output, as go test -v prints it")
	timesPath := fs.String("times", "", "file each ended top-level test is appended to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *mode != "unit" && *mode != "e2e" {
		return fmt.Errorf("-mode %q: unit or e2e", *mode)
	}
	var logW, timesW io.Writer = io.Discard, io.Discard
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			return err
		}
		defer f.Close()
		logW = f
	}
	if *timesPath != "" {
		f, err := os.OpenFile(*timesPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		timesW = f
	}
	s := newStream(*mode == "e2e", os.Stdout, logW, timesW)
	return s.run(os.Stdin)
}

func newStream(e2e bool, out, log, times io.Writer) *stream {
	return &stream{e2e: e2e, out: out, log: log, times: times, held: map[string][]string{},
		started: map[string]time.Time{}, pausedAt: map[string]time.Time{}, waited: map[string]time.Duration{}, slotWaited: map[string]time.Duration{}, slotRan: map[string]time.Duration{}}
}

// event is one line of cmd/test2json's output.
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// stream routes the events of one `go test -json` run.
type stream struct {
	e2e             bool
	out, log, times io.Writer
	held            map[string][]string // unit mode: a running test's output ("package test"), printed if it fails
	parallel        bool                // e2e mode: a test paused, so log lines get their test's name
	// A top-level test's ("package test") start, the time it paused for
	// go test's parallel slot, how long it waited for one, and how long it
	// then waited for the suite's slots (testcluster.Parallel, inside the
	// test: go test's Elapsed counts it).
	started, pausedAt           map[string]time.Time
	waited, slotWaited, slotRan map[string]time.Duration
}

// shown is what e2e mode prints of a test's output: the seed of -shuffle on
// (-test.shuffle N: -shuffle N runs that order again), a test's start (RUN)
// and, for a parallel one, when it got its slot (CONT), its end, and the
// tests' log lines.
var shown = regexp.MustCompile(`^(-test\.shuffle |=== (RUN|CONT)|\s*--- (PASS|FAIL|SKIP)|ok |FAIL|PASS$|panic:|testcluster: )|[a-z_0-9]+\.go:[0-9]+: `)

// slotWait is the line testcluster.Parallel logs when a test waited for
// its slots (after go test's own pause and cont): that wait is not the
// test's time either.
var slotWait = regexp.MustCompile(`testcluster: waited (\S+) for \d+ of \d+ slots`)

// slotRan is the line testcluster.Parallel logs when a test ends: how long
// it held its slots, from admission to the end of its cleanups. When a test
// logs it, that is its time (go test's Elapsed of a test with parallel
// subtests leaves them out, and the event of its end can come later than
// its end).
var slotRan = regexp.MustCompile(`testcluster: ran (\S+) in \d+ of \d+ slots`)

var logLine = regexp.MustCompile(`^\s+[a-z_0-9]+\.go:[0-9]+: `)

func (s *stream) run(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil || ev.Action == "" {
			// Not an event: go's own output (a build error), as it is.
			raw := string(line) + "\n"
			if _, err := io.WriteString(s.log, raw); err != nil {
				return err
			}
			if _, err := io.WriteString(s.out, raw); err != nil {
				return err
			}
			continue
		}
		if err := s.handle(ev); err != nil {
			return err
		}
	}
	return sc.Err()
}

func (s *stream) handle(ev event) error {
	switch ev.Action {
	case "output", "build-output":
		if _, err := io.WriteString(s.log, ev.Output); err != nil {
			return err
		}
		if ev.Test != "" && !strings.Contains(ev.Test, "/") {
			if m := slotWait.FindStringSubmatch(ev.Output); m != nil {
				if d, err := time.ParseDuration(m[1]); err == nil {
					s.slotWaited[ev.Package+" "+ev.Test] += d
				}
			}
			if m := slotRan.FindStringSubmatch(ev.Output); m != nil {
				if d, err := time.ParseDuration(m[1]); err == nil {
					s.slotRan[ev.Package+" "+ev.Test] = d
				}
			}
		}
		return s.show(ev)
	case "run", "pause", "cont":
		if ev.Test == "" || strings.Contains(ev.Test, "/") {
			return nil
		}
		key := ev.Package + " " + ev.Test
		switch ev.Action {
		case "run":
			s.started[key] = ev.Time
		case "pause":
			s.parallel = true
			s.pausedAt[key] = ev.Time
		case "cont":
			if p, ok := s.pausedAt[key]; ok {
				s.waited[key] += ev.Time.Sub(p)
				delete(s.pausedAt, key)
			}
		}
	case "pass", "fail", "skip":
		if ev.Test == "" {
			// A package that fails with output of a test that never
			// ended (a panic, a timeout): that output too.
			if !s.e2e && ev.Action == "fail" {
				return s.flush(ev.Package, "")
			}
			return nil
		}
		top := !strings.Contains(ev.Test, "/")
		if !s.e2e && top {
			if ev.Action == "fail" {
				if err := s.flush(ev.Package, ev.Test); err != nil {
					return err
				}
			}
			delete(s.held, ev.Package+" "+ev.Test)
		}
		if top {
			_, err := fmt.Fprintf(s.times, "%s\t%s\t%.2f\t%s\n", ev.Package, ev.Test, s.ran(ev).Seconds(), ev.Action)
			return err
		}
	}
	return nil
}

// ran is how long the top-level test that ev ends ran: from its start to
// its end less the time it waited for a parallel slot (go test's, and the
// suite's slots of testcluster.Parallel). go test's own
// Elapsed leaves out the parallel subtests a test waits for (the test that
// starts two clusters and runs a subtest on each reports its start-up
// alone); it is the answer only when the events carry no times.
func (s *stream) ran(ev event) time.Duration {
	key := ev.Package + " " + ev.Test
	start, ok := s.started[key]
	defer func() {
		delete(s.started, key)
		delete(s.waited, key)
		delete(s.pausedAt, key)
		delete(s.slotWaited, key)
		delete(s.slotRan, key)
	}()
	if d, ok := s.slotRan[key]; ok {
		return d
	}
	elapsed := time.Duration(ev.Elapsed*float64(time.Second)) - s.slotWaited[key]
	if !ok || start.IsZero() || ev.Time.IsZero() {
		return elapsed
	}
	return max(ev.Time.Sub(start)-s.waited[key]-s.slotWaited[key], elapsed)
}

// flush prints the held output of pkg's top-level test (every test of pkg
// when test is ""), in the order of the tests' names.
func (s *stream) flush(pkg, test string) error {
	var keys []string
	for k := range s.held {
		if k == pkg+" "+test || (test == "" && strings.HasPrefix(k, pkg+" ")) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, l := range s.held[k] {
			if _, err := io.WriteString(s.out, l); err != nil {
				return err
			}
		}
		delete(s.held, k)
	}
	return nil
}

// show prints what the terminal gets of one output event.
func (s *stream) show(ev event) error {
	if !s.e2e {
		if ev.Test != "" {
			// Held until the test ends: printed only when it fails.
			top := ev.Test
			if i := strings.IndexByte(top, '/'); i >= 0 {
				top = top[:i]
			}
			key := ev.Package + " " + top
			s.held[key] = append(s.held[key], ev.Output)
			return nil
		}
		// A package's own lines: "ok", "FAIL", "?", build errors, a
		// panic outside any test.
		if strings.HasPrefix(ev.Output, "PASS") || strings.HasPrefix(ev.Output, "=== ") {
			return nil
		}
		_, err := io.WriteString(s.out, ev.Output)
		return err
	}
	text := strings.TrimSuffix(ev.Output, "\n")
	if !shown.MatchString(text) {
		return nil
	}
	if s.parallel && ev.Test != "" && logLine.MatchString(text) {
		top := ev.Test
		if i := strings.IndexByte(top, '/'); i >= 0 {
			top = top[:i]
		}
		text = "    [" + top + "] " + strings.TrimLeft(text, " \t")
	}
	_, err := io.WriteString(s.out, text+"\n")
	return err
}

func summaryCmd(args []string) error {
	fs := flag.NewFlagSet("summary", flag.ContinueOnError)
	phasesPath := fs.String("phases", "", "the phases hack/progress.sh recorded")
	timesPath := fs.String("times", "", "the tests stream recorded")
	top := fs.Int("top", 10, "how many of the slowest tests to list")
	if err := fs.Parse(args); err != nil {
		return err
	}
	phases, err := readTSV(*phasesPath, 3)
	if err != nil {
		return err
	}
	tests, err := readTSV(*timesPath, 4)
	if err != nil {
		return err
	}
	return summary(os.Stdout, phases, tests, *top)
}

// readTSV reads the tab-separated lines of path with at least n fields; a
// missing file is no lines (a phase that never ran).
func readTSV(path string, n int) ([][]string, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out [][]string
	for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < n {
			return nil, fmt.Errorf("%s:%d: %d fields, want %d", path, i+1, len(f), n)
		}
		out = append(out, f)
	}
	return out, nil
}

// summary writes the phase table (in the order they ran, with their total)
// and the top slowest tests.
func summary(w io.Writer, phases, tests [][]string, top int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "== make test: phases (seconds)")
	total := 0
	for _, p := range phases {
		sec, err := strconv.Atoi(p[1])
		if err != nil {
			return fmt.Errorf("phase %q: seconds %q", p[0], p[1])
		}
		total += sec
		result := "ok"
		if p[2] != "0" {
			result = "FAILED (exit " + p[2] + ")"
		}
		fmt.Fprintf(tw, "%s\t%d\t  %s\t\n", p[0], sec, result)
	}
	fmt.Fprintf(tw, "total\t%d\t  %s\t\n", total, (time.Duration(total) * time.Second).String())
	if err := tw.Flush(); err != nil {
		return err
	}
	type test struct {
		pkg, name, result string
		sec               float64
	}
	var ts []test
	for _, f := range tests {
		sec, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			return fmt.Errorf("test %s: seconds %q", f[1], f[2])
		}
		ts = append(ts, test{pkg: f[0], name: f[1], sec: sec, result: f[3]})
	}
	if len(ts) == 0 {
		return nil
	}
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].sec > ts[j].sec })
	if top > len(ts) {
		top = len(ts)
	}
	fmt.Fprintf(w, "== the %d slowest of %d tests (seconds each)\n", top, len(ts))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, t := range ts[:top] {
		fmt.Fprintf(tw, "%8.1f\t%s\t%s\t%s\n", t.sec, t.name, shortPackage(t.pkg), t.result)
	}
	return tw.Flush()
}

// shortPackage is a package path relative to the module ("./test/e2e").
func shortPackage(pkg string) string {
	const module = "github.com/gitops-preflight/kubectl-gitops-preflight"
	if rest, ok := strings.CutPrefix(pkg, module); ok {
		return "." + rest
	}
	return pkg
}
