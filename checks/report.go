package checks

import "time"

// SchemaVersion is the version of the JSON contract (README "JSON output").
const SchemaVersion = "v1"

// Outcome is one check's metadata with its result.
type Outcome struct {
	Meta
	Result
	// Duration is how long the check ran (zero when skipped before running).
	Duration time.Duration
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
}

// UpgradeInfo is what an --upgrade run judged: release, namespace, its
// latest revision, the deployed chart version (From, "0.26.8") and the
// target chart version (To); a version is "" when it could not be read.
type UpgradeInfo struct {
	Release, Namespace string
	Revision           int
	From, To           string
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
