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

// Impact says what a check's non-pass means for the install (docs/json.md
// "impact"): Helm refuses it, Helm installs but the runtime then misbehaves,
// or it is advice.
type Impact string

// Impacts.
const (
	// ImpactInstallFails: `helm install` will fail (the chart refuses the
	// values, an object cannot be adopted, the credentials cannot create
	// what the chart renders, the validate-values hook fails).
	ImpactInstallFails Impact = "install-fails"
	// ImpactRuntimeBreaks: Helm installs, and the runtime then misbehaves
	// (stray Argo controllers, a documented prerequisite missing).
	ImpactRuntimeBreaks Impact = "runtime-breaks"
	// ImpactAdvisory: worth knowing; neither Helm nor the runtime fails
	// because of it (the checks whose severity is warn).
	ImpactAdvisory Impact = "advisory"
	// ImpactUpgradeFails: `helm upgrade` will fail (the release is not
	// upgradable, the API server refuses a change, the target chart does not
	// render with the effective values) or its pre-upgrade hook will.
	ImpactUpgradeFails Impact = "upgrade-fails"
	// ImpactDataLoss: `helm upgrade` succeeds and deletes what users made
	// (a CRD it no longer renders, and every custom resource of that kind).
	ImpactDataLoss Impact = "data-loss"
)

// Impacts lists every impact in summary order.
var Impacts = []Impact{ImpactInstallFails, ImpactUpgradeFails, ImpactRuntimeBreaks, ImpactDataLoss, ImpactAdvisory}

// upgradeOnly are the impacts only --upgrade reports; the summary of the
// other modes leaves them out.
var upgradeOnly = map[Impact]bool{ImpactUpgradeFails: true, ImpactDataLoss: true}

// An install-fails impact is Helm's ownership rule (pkg/action/validate.go),
// the chart's templates and its validate-values pre-install hook
// (https://codefresh.io/docs/gitops/gitops-runtimes/gitops-values-yaml-validation),
// the rights to create cluster-scoped objects, a reachable API server, the
// Helm client's version; each check says so in its Meta.Impact.

// known reports whether i is one of Impacts.
func (i Impact) known() bool {
	for _, k := range Impacts {
		if i == k {
			return true
		}
	}
	return false
}

// ImpactSummary counts the checks that did not pass (warn, fail or error)
// by impact; every impact of the report's mode is present (upgrade-fails and
// data-loss only with --upgrade).
func (r *Report) ImpactSummary() map[Impact]int {
	out := make(map[Impact]int, len(Impacts))
	for _, i := range r.Impacts() {
		out[i] = 0
	}
	for _, o := range r.Outcomes {
		if o.Status == StatusWarn || o.Status.Failed() {
			out[o.Impact]++
		}
	}
	return out
}

// Impacts returns the impacts of the report's mode, in summary order.
func (r *Report) Impacts() []Impact {
	var out []Impact
	for _, i := range Impacts {
		if !upgradeOnly[i] || r.Mode == ModeUpgrade {
			out = append(out, i)
		}
	}
	return out
}
