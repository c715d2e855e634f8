package run

import (
	"fmt"
	"strings"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// timeNow is the clock of the --wait rounds.
var timeNow = time.Now

// Kind is what a run's outcome amounts to.
type Kind int

// Kinds of verdict (README "Exit codes" says which exit code each is).
const (
	// OK: no check failed or errored (nor warned, nor a waiver expired or
	// matched nothing, with FailOnWarn; waived outcomes do not count), and
	// --fix, if asked, refused nothing and failed nowhere.
	OK Kind = iota
	// Failed: a check failed or errored (or warned, or a waiver expired or
	// matched nothing, with FailOnWarn), or
	// --fix refused an object or a patch failed, or --fix could not finish.
	Failed
	// Unreachable: the cluster could not be reached or the credentials were
	// rejected (a fatal check did not pass), or the run was interrupted
	// before the cluster was reached.
	Unreachable
	// Interrupted: a signal ended the run after the cluster was reached;
	// the report is partial.
	Interrupted
	// NothingVerified: no check failed, but every core check of the mode
	// ended skip for lack of permission, so nothing about the runtime was
	// verified.
	NothingVerified
	// NotChecked: the cluster could not be checked at all: its kubeconfig
	// entry is unusable (a fleet member whose Connect failed, a bundle
	// recorded without it). No report.
	NotChecked
)

// String names the kind ("ok", "failed", ...).
func (k Kind) String() string {
	switch k {
	case OK:
		return "ok"
	case Failed:
		return "failed"
	case Unreachable:
		return "unreachable"
	case Interrupted:
		return "interrupted"
	case NothingVerified:
		return "nothing-verified"
	case NotChecked:
		return "not-checked"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Verdict is a run's outcome.
type Verdict struct {
	Kind Kind
	// Err is the one line to print beside the report (nil when the report
	// says it all).
	Err error
	// Brief, when set, is Err for a reader who has the table report in
	// front of them: it refers to the check that said why instead of
	// repeating it (an Unreachable run's connection error).
	Brief error
	// Signal is the interruption, for Kind Interrupted (and for an
	// Unreachable run a signal cut short).
	Signal *Interrupt
}

// severity orders the kinds from the best outcome to the worst: a fleet's
// verdict is its worst member's, an interruption above all.
func severity(k Kind) int {
	switch k {
	case OK:
		return 0
	case Failed, NothingVerified:
		return 1
	case NotChecked:
		return 2
	case Unreachable:
		return 3
	}
	return 4 // Interrupted
}

// FleetVerdict is the verdict of a fleet (Fleet.Run, or a fleet archive's
// replay) from its members' verdicts: the worst of them (OK, then Failed
// and NothingVerified, NotChecked, Unreachable, Interrupted). When a signal
// cut any member short the report is partial, and Err says so; otherwise
// each member's report says what it found, and Err is nil.
func FleetVerdict(members []Verdict) Verdict {
	out := Verdict{Kind: OK}
	for _, m := range members {
		if severity(m.Kind) > severity(out.Kind) {
			out.Kind = m.Kind
		}
		if m.Signal != nil {
			out.Signal = m.Signal
		}
	}
	if out.Signal != nil {
		out.Err = fmt.Errorf("%w: the report is partial", out.Signal)
	}
	return out
}

// Unrecorded is v for a run (or fleet) whose report is whole but whose
// recording (--bundle) could not be written: at least Failed, with err as
// its line, unless a signal cut the run short (its line stays). A nil err
// leaves v as it is.
func (v Verdict) Unrecorded(err error) Verdict {
	if err == nil {
		return v
	}
	if severity(v.Kind) < severity(Failed) {
		v.Kind = Failed
	}
	if v.Signal == nil {
		v.Err, v.Brief = err, nil
	}
	return v
}

// decide is the verdict on report: the only place an outcome becomes one.
// namespace is the runtime namespace, for the NothingVerified line.
func decide(report *checks.Report, namespace string, failOnWarn, fixFailed bool, interrupted *Interrupt) Verdict {
	unreachable := report.Unreachable()
	failed := fixFailed
	for _, o := range report.Outcomes {
		if o.Status.Failed() || (failOnWarn && o.Status == checks.StatusWarn) {
			failed = true
		}
	}
	for _, w := range report.Waivers {
		if failOnWarn && w.Warning() {
			failed = true
		}
	}
	switch {
	case interrupted != nil && unreachable:
		return Verdict{Kind: Unreachable, Signal: interrupted, Err: fmt.Errorf("%w before the cluster %s was reached; nothing checked", interrupted, report.Cluster.Server)}
	case interrupted != nil:
		return Verdict{Kind: Interrupted, Signal: interrupted, Err: fmt.Errorf("%w: the report is partial", interrupted)}
	case unreachable:
		return Verdict{Kind: Unreachable, Err: unreachableError(report, false), Brief: unreachableError(report, true)}
	case failed:
		return Verdict{Kind: Failed}
	}
	if unverified := nothingVerified(report); len(unverified) > 0 {
		return Verdict{Kind: NothingVerified, Err: fmt.Errorf("nothing about the runtime was verified: %s ended skip for lack of permission; run with rights to read the runtime namespace %s (get/list Secrets, Deployments, StatefulSets, Pods, Events)", strings.Join(unverified, " and "), namespace)}
	}
	return Verdict{Kind: OK}
}

// unreachableError is the Unreachable line: what the fatal check found
// (server down, credentials rejected...) and which checks still ran, those
// that need no cluster (Offline), e.g.
//
//	cluster-reachable fail: https://x rejected the credentials (401 Unauthorized); only the checks that need no cluster ran: runtime-name, values
//
// brief leaves out what the check found, which the table report shows:
//
//	cluster-reachable failed (its message is above); only the checks that need no cluster ran: runtime-name, values
func unreachableError(r *checks.Report, brief bool) error {
	var fatal string
	var ran []string
	for _, o := range r.Outcomes {
		switch {
		case o.Fatal && o.Status != checks.StatusPass && fatal == "":
			fatal = fmt.Sprintf("%s %s: %s", o.ID, o.Status, strings.SplitN(o.Message, "\n", 2)[0])
			if brief {
				fatal = fmt.Sprintf("%s ended %s (the reason is above)", o.ID, o.Status)
			}
		case !o.Fatal && o.Offline && o.Status != checks.StatusSkip:
			ran = append(ran, o.ID)
		}
	}
	if len(ran) == 0 {
		return fmt.Errorf("%s; no other check could run", fatal)
	}
	return fmt.Errorf("%s; only the checks that need no cluster ran: %s", fatal, strings.Join(ran, ", "))
}

// nothingVerified returns the core checks (Meta.Core) of the report's mode
// when every one of them that ran ended skip for lack of permission
// (SkipForbidden); nil otherwise.
func nothingVerified(r *checks.Report) []string {
	var skipped []string
	ran := 0
	for _, o := range r.Outcomes {
		if !o.Core || !o.Modes.Has(r.Mode) {
			continue
		}
		ran++
		if o.Status == checks.StatusSkip && o.Cause == checks.SkipForbidden {
			skipped = append(skipped, o.ID)
		}
	}
	if ran == 0 || len(skipped) != ran {
		return nil
	}
	return skipped
}
