package checks

import (
	"fmt"
	"time"
)

// SchemaVersion is the version of the JSON contract (docs/json.md).
const SchemaVersion = "v1"

// Outcome is one check's metadata with its result.
type Outcome struct {
	Meta
	Result
	// Duration is how long the check ran (zero when skipped before running).
	Duration time.Duration
	// Waiver is the waiver that covers this outcome (Status is then
	// StatusWaived); nil otherwise.
	Waiver *Waived
}

// Waived is what a waived outcome shows: the waiver's reason, owner ("" when
// not given) and last valid day (YYYY-MM-DD, UTC), and the status the check
// ended with before the waiver covered it (warn, fail or error).
type Waived struct {
	Reason, Owner, Expires string
	Status                 Status
}

// WaiverState is what became of one waiver of --waivers in a run.
type WaiverState string

// Waiver states.
const (
	// WaiverApplied: the waiver covered at least one outcome.
	WaiverApplied WaiverState = "applied"
	// WaiverExpired: the waiver's last valid day has passed; the outcomes it
	// would cover count again.
	WaiverExpired WaiverState = "expired"
	// WaiverUnmatched: the waiver is valid but no warn, fail or error of the
	// run matched it (stale, or out of this run's scope).
	WaiverUnmatched WaiverState = "unmatched"
)

// WaiverUse is one waiver of the --waivers file and what became of it:
// File and Index (1-based, in file order) name it; Expires is its last valid
// day (YYYY-MM-DD, UTC); Owner is "" when not given.
type WaiverUse struct {
	File    string
	Index   int
	Check   string
	Reason  string
	Expires string
	Owner   string
	State   WaiverState
}

// Warning reports whether the waiver's state is a warning (expired or
// unmatched); they make the run fail only with --fail-on=warn.
func (w WaiverUse) Warning() bool { return w.State != WaiverApplied }

// String names the waiver and its state in one line, e.g.
// "waiver 2 of waivers.yaml (node-resources) expired on 2026-01-31".
func (w WaiverUse) String() string {
	name := fmt.Sprintf("waiver %d of %s (%s)", w.Index, w.File, w.Check)
	switch w.State {
	case WaiverExpired:
		return name + " expired on " + w.Expires + "; the results it covered count again"
	case WaiverUnmatched:
		return name + " matched no warn, fail or error of this run; remove it if it is stale"
	}
	return name + " applied (expires " + w.Expires + ")"
}

// ClusterInfo identifies the cluster a report is about.
type ClusterInfo struct {
	Context string
	Server  string
	Version string
}

// Summary counts outcomes by status.
type Summary map[Status]int

// Report is the result of one run: the model every reporter renders.
type Report struct {
	Mode     Mode
	Cluster  ClusterInfo
	Outcomes []Outcome
	// Upgrade names the release and chart versions of an --upgrade run;
	// nil in the other modes.
	Upgrade *UpgradeInfo
	// Waivers are the waivers of --waivers, in file order, with what became
	// of each; nil without --waivers.
	Waivers []WaiverUse
}

// UpgradeInfo is what an --upgrade run judged: release, namespace, its
// latest revision, the deployed chart version (From, "0.26.8") and the
// target chart version (To); a version is "" when it could not be read.
type UpgradeInfo struct {
	Release, Namespace string
	Revision           int
	From, To           string
	// Application is the Argo CD Application ("namespace/name") that
	// performs the upgrade when it syncs the commit; "" for helm upgrade.
	Application string
}

// Summary counts the report's outcomes by status (every status present).
func (r *Report) Summary() Summary {
	s := Summary{}
	for _, st := range Statuses {
		s[st] = 0
	}
	for _, o := range r.Outcomes {
		s[o.Status]++
	}
	return s
}

// Unreachable reports whether a fatal check (cluster-reachable) did not pass.
func (r *Report) Unreachable() bool {
	for _, o := range r.Outcomes {
		if o.Fatal && o.Status != StatusPass {
			return true
		}
	}
	return false
}
