package run

import (
	"errors"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// TestVerdictOnEveryPath: each way a run can end, and the one verdict it
// gets (the command maps each to its exit code: internal/cli's
// TestExitForEveryVerdict).
func TestVerdictOnEveryPath(t *testing.T) {
	out := func(id string, st checks.Status, cause checks.SkipCause, msg string) checks.Outcome {
		return checks.Outcome{Meta: registered(t, id), Result: checks.Result{Status: st, Message: msg, Cause: cause}}
	}
	reachable := out("cluster-reachable", checks.StatusPass, "", "https://k answered")
	refused := out("cluster-reachable", checks.StatusFail, "", "cannot reach https://k: connection refused")
	sigint := &Interrupt{Signal: "SIGINT"}
	for _, tc := range []struct {
		name        string
		mode        checks.Mode
		outs        []checks.Outcome
		failOnWarn  bool
		fixFailed   bool
		interrupted *Interrupt
		want        Kind
		wantErr     string // substring of Verdict.Err; "" for no error
	}{
		{name: "all pass", outs: []checks.Outcome{reachable, out("node-resources", checks.StatusPass, "", "ok")}, want: OK},
		{name: "a warning", outs: []checks.Outcome{reachable, out("helm-version", checks.StatusWarn, "", "no helm")}, want: OK},
		{name: "a warning with --fail-on=warn", failOnWarn: true, outs: []checks.Outcome{reachable, out("helm-version", checks.StatusWarn, "", "no helm")}, want: Failed},
		{name: "a failure", outs: []checks.Outcome{reachable, out("node-resources", checks.StatusFail, "", "small")}, want: Failed},
		{name: "an error", outs: []checks.Outcome{reachable, out("node-resources", checks.StatusError, "", "500")}, want: Failed},
		{name: "fix refused or failed", fixFailed: true, outs: []checks.Outcome{reachable}, want: Failed},
		{name: "unreachable", outs: []checks.Outcome{refused, out("runtime-name", checks.StatusPass, "", "ok"), out("node-resources", checks.StatusSkip, checks.SkipUnreachable, "not run")},
			want: Unreachable, wantErr: "cluster-reachable fail: cannot reach https://k: connection refused; only the checks that need no cluster ran: runtime-name"},
		{name: "unreachable, nothing offline ran", outs: []checks.Outcome{refused}, want: Unreachable, wantErr: "no other check could run"},
		{name: "interrupted before contact", interrupted: sigint, outs: []checks.Outcome{refused}, want: Unreachable, wantErr: "interrupted by SIGINT before the cluster https://k was reached; nothing checked"},
		{name: "interrupted after contact", interrupted: sigint, outs: []checks.Outcome{reachable, out("node-resources", checks.StatusError, "", "not run: context canceled")}, want: Interrupted, wantErr: "interrupted by SIGINT: the report is partial"},
		{name: "nothing verified", mode: checks.ModePost, outs: []checks.Outcome{reachable,
			out("release-deployed", checks.StatusSkip, checks.SkipForbidden, "no permission to list secrets"),
			out("runtime-workloads", checks.StatusSkip, checks.SkipForbidden, "no permission to list deployments")},
			want: NothingVerified, wantErr: "release-deployed and runtime-workloads ended skip for lack of permission; run with rights to read the runtime namespace codefresh"},
		{name: "nothing verified and a failure", mode: checks.ModePost, outs: []checks.Outcome{reachable,
			out("release-deployed", checks.StatusSkip, checks.SkipForbidden, "no permission to list secrets"),
			out("runtime-workloads", checks.StatusSkip, checks.SkipForbidden, "no permission to list deployments"),
			out("rollouts-controllers", checks.StatusError, "", "500")}, want: Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mode := tc.mode
			if mode == 0 {
				mode = checks.ModePre
			}
			r := &checks.Report{Mode: mode, Outcomes: tc.outs, Cluster: checks.ClusterInfo{Server: "https://k"}}
			v := decide(r, "codefresh", tc.failOnWarn, tc.fixFailed, tc.interrupted)
			if v.Kind != tc.want {
				t.Errorf("verdict %s, want %s (err %v)", v.Kind, tc.want, v.Err)
			}
			switch {
			case tc.wantErr == "" && v.Err != nil:
				t.Errorf("err %v, want none", v.Err)
			case tc.wantErr != "" && (v.Err == nil || !strings.Contains(v.Err.Error(), tc.wantErr)):
				t.Errorf("err %v, want it to contain %q", v.Err, tc.wantErr)
			}
			// The brief line never repeats the fatal check's message.
			if v.Brief != nil && (strings.Contains(v.Brief.Error(), "connection refused") || !strings.Contains(v.Brief.Error(), "cluster-reachable ended fail (the reason is above)")) {
				t.Errorf("brief %q repeats the report or does not name the check", v.Brief)
			}
			if tc.interrupted != nil {
				if v.Signal != tc.interrupted {
					t.Errorf("signal %v, want %v", v.Signal, tc.interrupted)
				}
				if !errors.Is(v.Err, tc.interrupted) {
					t.Errorf("err %v does not wrap the interruption", v.Err)
				}
			}
		})
	}
}

// TestUnreachableLine: the exit-3 line says what the fatal check found and
// names the offline checks that did run.
func TestUnreachableLine(t *testing.T) {
	m := func(id string, fatal, offline bool) checks.Meta {
		return checks.Meta{ID: id, Fatal: fatal, Offline: offline}
	}
	r := &checks.Report{Outcomes: []checks.Outcome{
		{Meta: m("cluster-reachable", true, false), Result: checks.Result{Status: checks.StatusFail, Message: "https://x rejected the credentials (401 Unauthorized)"}},
		{Meta: m("node-resources", false, false), Result: checks.Result{Status: checks.StatusSkip, Message: "not run"}},
		{Meta: m("values", false, true), Result: checks.Result{Status: checks.StatusPass}},
		{Meta: m("runtime-name", false, true), Result: checks.Result{Status: checks.StatusFail}},
	}}
	want := "cluster-reachable fail: https://x rejected the credentials (401 Unauthorized); only the checks that need no cluster ran: values, runtime-name"
	if got := unreachableError(r, false).Error(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	r.Outcomes = r.Outcomes[:2]
	if got := unreachableError(r, false).Error(); !strings.HasSuffix(got, "; no other check could run") {
		t.Errorf("no offline check: %q", got)
	}
}

// TestFleetVerdict: a fleet's verdict is its worst member's, an
// interruption of any member makes the report partial, and an empty fleet
// is OK.
func TestFleetVerdict(t *testing.T) {
	sig := &Interrupt{Signal: "SIGTERM"}
	ok, failed, nothing := Verdict{Kind: OK}, Verdict{Kind: Failed}, Verdict{Kind: NothingVerified, Err: errors.New("nothing verified")}
	notChecked := Verdict{Kind: NotChecked, Err: errors.New("kubeconfig context x: no user")}
	unreachable := Verdict{Kind: Unreachable, Err: errors.New("cluster-reachable fail")}
	for _, tc := range []struct {
		name    string
		members []Verdict
		want    Kind
		partial bool
	}{
		{"empty", nil, OK, false},
		{"all ok", []Verdict{ok, ok}, OK, false},
		{"one failed", []Verdict{ok, failed, ok}, Failed, false},
		{"nothing verified counts as failed", []Verdict{nothing, ok}, NothingVerified, false},
		{"failed then nothing verified", []Verdict{failed, nothing}, Failed, false},
		{"not checked over failed", []Verdict{failed, notChecked}, NotChecked, false},
		{"unreachable over not checked", []Verdict{notChecked, unreachable, failed}, Unreachable, false},
		{"interrupted before contact", []Verdict{failed, {Kind: Unreachable, Signal: sig}}, Unreachable, true},
		{"interrupted over all", []Verdict{unreachable, {Kind: Interrupted, Signal: sig}, notChecked}, Interrupted, true},
	} {
		v := FleetVerdict(tc.members)
		if v.Kind != tc.want || (v.Signal != nil) != tc.partial {
			t.Errorf("%s: %v (signal %v), want %v (partial %v)", tc.name, v.Kind, v.Signal, tc.want, tc.partial)
		}
		if tc.partial != (v.Err != nil) || (tc.partial && v.Err.Error() != "interrupted by SIGTERM: the report is partial") {
			t.Errorf("%s: line %v", tc.name, v.Err)
		}
	}
}

// TestUnrecorded: a run whose bundle could not be written fails at least,
// says why, and an interrupted run keeps its own line.
func TestUnrecorded(t *testing.T) {
	bundleErr := errors.New("bundle x.tgz: over the 64 MiB bound")
	sig := &Interrupt{Signal: "SIGINT"}
	for _, tc := range []struct {
		v        Verdict
		want     Kind
		wantLine error
	}{
		{Verdict{Kind: OK}, Failed, bundleErr},
		{Verdict{Kind: Failed}, Failed, bundleErr},
		{Verdict{Kind: NothingVerified, Err: errors.New("n")}, NothingVerified, bundleErr},
		{Verdict{Kind: Unreachable, Err: errors.New("u"), Brief: errors.New("b")}, Unreachable, bundleErr},
		{Verdict{Kind: Interrupted, Signal: sig, Err: sig}, Interrupted, sig},
	} {
		got := tc.v.Unrecorded(bundleErr)
		if got.Kind != tc.want || !errors.Is(got.Err, tc.wantLine) || got.Brief != nil && tc.v.Signal == nil {
			t.Errorf("%v: %v (%v, brief %v), want %v (%v)", tc.v.Kind, got.Kind, got.Err, got.Brief, tc.want, tc.wantLine)
		}
	}
	if v := (Verdict{Kind: OK}).Unrecorded(nil); v.Kind != OK || v.Err != nil {
		t.Errorf("no bundle error: %+v", v)
	}
}
