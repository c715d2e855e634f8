package testcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

var pluginBinary memo

// Binary returns the path of the plugin binary: $PREFLIGHT_BIN when set (the
// Makefile passes the one it built), else one built once per test process.
func Binary(t testing.TB) string {
	t.Helper()
	return pluginBinary.get(t, "PREFLIGHT_BIN", func() (string, error) {
		root, err := repoRoot()
		if err != nil {
			return "", err
		}
		dir, err := os.MkdirTemp("", "gitops-preflight-e2e-")
		if err != nil {
			return "", err
		}
		path := filepath.Join(dir, "kubectl-gitops_preflight")
		cmd := exec.Command("go", "build", "-trimpath", "-o", path, "./cmd/kubectl-gitops_preflight")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as make build and make dist build it
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", errors.New("go build: " + err.Error() + "\n" + string(out))
		}
		return path, nil
	})
}

// Result is one run of the plugin.
type Result struct {
	Stdout, Stderr string
	Code           int
	Elapsed        time.Duration
}

// JSON decodes Stdout as the report contract, failing the test when it is not.
func (r Result) JSON(t testing.TB) reporters.Document {
	t.Helper()
	var doc reporters.Document
	dec := json.NewDecoder(bytes.NewReader([]byte(r.Stdout)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not a JSON report (exit %d after %s): %v\nstdout:\n%s\nstderr:\n%s", r.Code, r.Elapsed.Round(time.Second), err, r.Stdout, r.Stderr)
	}
	return doc
}

// Check returns the named check of a report, failing the test when absent.
func Check(t testing.TB, doc reporters.Document, id string) reporters.CheckDocument {
	t.Helper()
	for _, c := range doc.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("check %s not in report (%d checks)", id, len(doc.Checks))
	return reporters.CheckDocument{}
}

// Blackhole are --connect-to rules that send the tunnel-mode probes of the
// default platform hosts (g.codefresh.io and register-tunnels.cf-cd.com, the
// chart's defaults) to a closed port on 127.0.0.1, so that no test ever
// dials out of this machine. Run appends them to every check run; --connect-to
// rules match first to last, so a test's own mappings still win. quay.io is
// where the default chart (oci://quay.io/codefresh/gitops-runtime) is pulled
// from: its pull fails at once and the chart checks skip, unless the test
// passes --chart.
var Blackhole = []string{
	"--connect-to", "g.codefresh.io:443:127.0.0.1:9",
	"--connect-to", "register-tunnels.cf-cd.com:443:127.0.0.1:9",
	"--connect-to", "quay.io:443:127.0.0.1:9",
}

// PluginGOGC is the GOGC environment entry of the plugin's runs through Run:
// a run that renders the chart allocates 500 to 700 MB, and at 400 it took
// about 12 % less CPU than at Go's default (a replay: 1.8–1.9 CPU-s instead
// of 2.2) for a peak RSS of about 270–310 MB instead of 150. The suite's
// CPU is its time (2 cores, busy throughout); what users run is Go's
// default, and the runs that bound the plugin's peak RSS (TestHostileCluster
// and its kin) start it with Go's default too.
const PluginGOGC = "GOGC=400"

// runBound is the longest a run of the plugin may take before the harness
// kills it (exit -1).
const runBound = 7 * time.Minute

// Run runs the plugin binary with args and env (KEY=VALUE, added to a minimal
// environment: PATH, HOME and PluginGOGC only, so the developer's KUBECONFIG
// or HELM_BIN never leak in). Runs of the checks (args starting with a flag)
// get the Blackhole rules appended. It never fails the test on a non-zero
// exit.
func Run(t testing.TB, env []string, args ...string) Result {
	t.Helper()
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		args = append(append([]string(nil), args...), Blackhole...)
	}
	// The plugin's own --timeout (5 minutes unless a test sets it) bounds
	// its run and still prints the report, with the checks it stopped as
	// errors saying what they waited on; the harness's bound is above it,
	// for a run that hangs.
	ctx, cancel := context.WithTimeout(context.Background(), runBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, Binary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), PluginGOGC}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String(), Elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	default:
		t.Fatalf("running plugin: %v", err)
	}
	return res
}

// RunJSON runs the plugin as admin on c with -o json and returns the result and
// the decoded report.
func (c *Cluster) RunJSON(t testing.TB, env []string, args ...string) (Result, reporters.Document) {
	t.Helper()
	res := Run(t, env, append([]string{"--kubeconfig", c.admin, "-o", "json"}, args...)...)
	return res, res.JSON(t)
}

// replayDiffers reports whether a replay of the check id may differ from
// the live run (Meta.ReplayDiffers: it reads a value the bundle redacts).
func replayDiffers(id string) bool {
	for _, c := range checks.All() {
		if c.ID == id {
			return c.ReplayDiffers != ""
		}
	}
	return false
}

// SameReport fails the test when two JSON reports differ, apart from the
// checks whose replay may differ (Meta.ReplayDiffers) and the summary.
func SameReport(t testing.TB, live, replay reporters.Document) {
	t.Helper()
	norm := func(d reporters.Document) string {
		var cs []reporters.CheckDocument
		for _, c := range d.Checks {
			if !replayDiffers(c.ID) {
				cs = append(cs, c)
			}
		}
		d.Checks = cs
		d.Summary = reporters.SummaryDocument{}
		b, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if a, b := norm(live), norm(replay); a != b {
		t.Errorf("replay report differs from the live one: %s\nlive:\n%s\nreplay:\n%s", reportDiff(live, replay), a, b)
	}
}

// reportDiff names, on one line, what differs between two reports: each
// check whose status or message differs (live, then replay), each check
// only one of them has, else "the report's other fields".
func reportDiff(live, replay reporters.Document) string {
	got := map[string]reporters.CheckDocument{}
	for _, c := range replay.Checks {
		got[c.ID] = c
	}
	var diffs []string
	for _, l := range live.Checks {
		r, ok := got[l.ID]
		delete(got, l.ID)
		switch {
		case replayDiffers(l.ID):
		case !ok:
			diffs = append(diffs, l.ID+": not in the replay")
		case l.Status != r.Status || l.Message != r.Message:
			diffs = append(diffs, fmt.Sprintf("%s: live %s (%s), replay %s (%s)", l.ID, l.Status, l.Message, r.Status, r.Message))
		}
	}
	for id := range got {
		if !replayDiffers(id) {
			diffs = append(diffs, id+": only in the replay")
		}
	}
	if len(diffs) == 0 {
		return "the report's other fields"
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

// RunJSONReplayed is RunJSON that also records the run with --bundle and
// replays the bundle with no kubeconfig: the replay must exit with the same
// code and print the same JSON report (as SameReport compares them). It
// returns the live result and report. For read-only runs only: no --fix,
// no --wait.
func (c *Cluster) RunJSONReplayed(t testing.TB, env []string, args ...string) (Result, reporters.Document) {
	t.Helper()
	return RunJSONReplayed(t, env, append([]string{"--kubeconfig", c.admin}, args...)...)
}

// RunJSONReplayed runs the plugin with args (which name the kubeconfig) and
// -o json, recording the run with --bundle, then replays the bundle with no
// kubeconfig: the replay must exit with the same code and print the same
// JSON report (as SameReport compares them). It returns the live result and
// report.
func RunJSONReplayed(t testing.TB, env []string, args ...string) (Result, reporters.Document) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "run.tgz")
	live := Run(t, env, append(append([]string(nil), args...), "-o", "json", "--bundle", file)...)
	liveDoc := live.JSON(t)
	rep := replayOffline(t, env, file, live)
	SameReport(t, liveDoc, rep.JSON(t))
	return live, liveDoc
}

// replayOffline replays file with -o json and env less its KUBECONFIG
// (pointing nowhere instead): it must exit as live did.
func replayOffline(t testing.TB, env []string, file string, live Result) Result {
	t.Helper()
	offline := []string{"KUBECONFIG=" + filepath.Join(t.TempDir(), "no-kubeconfig")}
	for _, e := range env {
		if !strings.HasPrefix(e, "KUBECONFIG=") {
			offline = append(offline, e)
		}
	}
	rep := Run(t, offline, "replay", file, "-o", "json")
	if rep.Code != live.Code {
		t.Errorf("replay exit %d, live %d\nreplay stdout:\n%s\nreplay stderr:\n%s", rep.Code, live.Code, rep.Stdout, rep.Stderr)
	}
	return rep
}

// FleetJSON decodes Stdout as the fleet report contract, strictly, failing
// the test when it is not.
func (r Result) FleetJSON(t testing.TB) reporters.FleetDocument {
	t.Helper()
	var doc reporters.FleetDocument
	dec := json.NewDecoder(bytes.NewReader([]byte(r.Stdout)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not a fleet JSON report: %v\nstdout:\n%s\nstderr:\n%s", err, r.Stdout, r.Stderr)
	}
	return doc
}

// SameFleetReport fails the test when two fleet JSON reports differ: the
// same contexts in the same order, each with the same exit code, error
// and report (as SameReport compares them), and the same count of
// clusters by exit code.
func SameFleetReport(t testing.TB, live, replay reporters.FleetDocument) {
	t.Helper()
	if live.SchemaVersion != replay.SchemaVersion || len(live.Fleet) != len(replay.Fleet) {
		t.Fatalf("replay fleet (schema %q, %d clusters) differs from the live one (schema %q, %d clusters)", replay.SchemaVersion, len(replay.Fleet), live.SchemaVersion, len(live.Fleet))
	}
	for i, l := range live.Fleet {
		r := replay.Fleet[i]
		if l.Context != r.Context || l.Exit != r.Exit || l.Error != r.Error || (l.Report == nil) != (r.Report == nil) {
			t.Errorf("fleet entry %d: replay {%s exit %d error %q report %t}, live {%s exit %d error %q report %t}",
				i, r.Context, r.Exit, r.Error, r.Report != nil, l.Context, l.Exit, l.Error, l.Report != nil)
			continue
		}
		if l.Report != nil {
			SameReport(t, *l.Report, *r.Report)
		}
	}
	lc, _ := json.Marshal(live.Summary.Clusters)
	rc, _ := json.Marshal(replay.Summary.Clusters)
	if string(lc) != string(rc) {
		t.Errorf("replay clusters %s, live %s", rc, lc)
	}
}

// RunFleetJSONReplayed is RunJSONReplayed for a fleet run (args name the
// kubeconfig and --contexts or --all-contexts): the run is recorded with
// --bundle as one archive, replayed with no kubeconfig, and must exit with
// the same code and print the same fleet JSON report (SameFleetReport). It
// returns the live result and report, and the archive's path.
func RunFleetJSONReplayed(t testing.TB, env []string, args ...string) (Result, reporters.FleetDocument, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "fleet.tgz")
	live := Run(t, env, append(append([]string(nil), args...), "-o", "json", "--bundle", file)...)
	liveDoc := live.FleetJSON(t)
	rep := replayOffline(t, env, file, live)
	SameFleetReport(t, liveDoc, rep.FleetJSON(t))
	return live, liveDoc, file
}
