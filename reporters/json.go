package reporters

import (
	"encoding/json"
	"io"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// JSON renders the report as the versioned contract of README ("JSON
// output"): every field always present, checks in catalogue order.
type JSON struct{}

// Document is the JSON (and YAML) shape of a report, schemaVersion v1.
type Document struct {
	SchemaVersion string          `json:"schemaVersion"`
	Mode          string          `json:"mode"`
	Cluster       ClusterDocument `json:"cluster"`
	// Upgrade is the release and the chart versions of an --upgrade run.
	Upgrade *UpgradeDocument `json:"upgrade,omitempty"`
	Summary SummaryDocument  `json:"summary"`
	Checks  []CheckDocument  `json:"checks"`
	// Waivers are the waivers of --waivers, in file order, with what
	// became of each; absent without --waivers.
	Waivers []WaiverDocument `json:"waivers,omitempty"`
}

// WaiverDocument is one waiver of the --waivers file: where it is (file,
// 1-based index), what it waives and its state: "applied" (it covered a
// result), "expired" (its last day, expires, has passed: the results count
// again) or "unmatched" (no warn, fail or error of the run matched it).
type WaiverDocument struct {
	File    string `json:"file"`
	Index   int    `json:"index"`
	Check   string `json:"check"`
	Reason  string `json:"reason"`
	Expires string `json:"expires"`
	Owner   string `json:"owner"`
	Status  string `json:"status"`
}

// WaivedDocument is the waiver that covers a check whose status is
// "waived": its reason, owner, last valid day (YYYY-MM-DD, UTC) and the
// status the check ended with before it was waived (warn, fail or error).
type WaivedDocument struct {
	Reason         string `json:"reason"`
	Owner          string `json:"owner"`
	Expires        string `json:"expires"`
	OriginalStatus string `json:"originalStatus"`
}

// UpgradeDocument names what an --upgrade run judged: the release, its
// latest revision, the deployed chart version (From) and the target's (To);
// a version is "" when it could not be read.
type UpgradeDocument struct {
	Release   string `json:"release"`
	Namespace string `json:"namespace"`
	Revision  int    `json:"revision,omitempty"`
	From      string `json:"from,omitempty"`
	To        string `json:"to,omitempty"`
	// Application is the Argo CD Application that syncs the upgrade
	// ("namespace/name"); absent for helm upgrade.
	Application string `json:"application,omitempty"`
}

// ClusterDocument identifies the cluster.
type ClusterDocument struct {
	Context string `json:"context"`
	Server  string `json:"server"`
	Version string `json:"version"`
}

// SummaryDocument counts checks by status.
type SummaryDocument struct {
	Pass  int `json:"pass"`
	Warn  int `json:"warn"`
	Fail  int `json:"fail"`
	Skip  int `json:"skip"`
	Error int `json:"error"`
	// Waived counts the checks a waiver covers (--waivers).
	Waived int `json:"waived"`
	// Impact counts the checks that did not pass (warn, fail, error) by
	// what that means: install-fails, runtime-breaks, advisory.
	Impact map[string]int `json:"impact"`
}

// CheckDocument is one check's outcome.
type CheckDocument struct {
	ID       string             `json:"id"`
	Category string             `json:"category"`
	Title    string             `json:"title"`
	Status   string             `json:"status"`
	Message  string             `json:"message"`
	Hint     string             `json:"hint"`
	Docs     string             `json:"docs"`
	Objects  []checks.ObjectRef `json:"objects"`
	Fixable  bool               `json:"fixable"`
	// Impact is what a non-pass of this check means: install-fails,
	// runtime-breaks or advisory.
	Impact string `json:"impact"`
	// Waiver is the waiver that covers a "waived" check; absent otherwise.
	Waiver *WaivedDocument `json:"waiver,omitempty"`
	// Source is where the value that caused the result came from: a
	// values file's path (as given), line and column, or the flag that
	// set it ({"flag": "--set global.runtime.name=x"}), with the value's
	// key (path); absent when no value is the cause.
	Source *checks.Source `json:"source,omitempty"`
}

// NewDocument converts a report to its contract shape.
func NewDocument(r *checks.Report) Document {
	s := r.Summary()
	doc := Document{
		SchemaVersion: checks.SchemaVersion,
		Mode:          "pre",
		Cluster:       ClusterDocument{Context: r.Cluster.Context, Server: r.Cluster.Server, Version: r.Cluster.Version},
		Summary: SummaryDocument{
			Pass: s[checks.StatusPass], Warn: s[checks.StatusWarn], Fail: s[checks.StatusFail],
			Skip: s[checks.StatusSkip], Error: s[checks.StatusError], Waived: s[checks.StatusWaived],
			Impact: map[string]int{},
		},
		Checks: make([]CheckDocument, 0, len(r.Outcomes)),
	}
	switch r.Mode {
	case checks.ModePost:
		doc.Mode = "post"
	case checks.ModeUpgrade:
		doc.Mode = "upgrade"
		if u := r.Upgrade; u != nil {
			doc.Upgrade = &UpgradeDocument{Release: u.Release, Namespace: u.Namespace, Revision: u.Revision, From: u.From, To: u.To, Application: u.Application}
		}
	}
	for i, n := range r.ImpactSummary() {
		doc.Summary.Impact[string(i)] = n
	}
	for _, o := range r.Outcomes {
		objs := o.Objects
		if objs == nil {
			objs = []checks.ObjectRef{}
		}
		c := CheckDocument{
			ID: o.ID, Category: string(o.Category), Title: o.Title, Status: string(o.Status),
			Message: o.Message, Hint: o.Hint, Docs: o.Docs(), Objects: objs,
			// A check is fixable in a report when --fix can repair this failure.
			Fixable: o.Fixable && o.Status.Failed(),
			Impact:  string(o.Impact),
			Source:  o.Source,
		}
		if w := o.Waiver; w != nil {
			c.Waiver = &WaivedDocument{Reason: w.Reason, Owner: w.Owner, Expires: w.Expires, OriginalStatus: string(w.Status)}
		}
		doc.Checks = append(doc.Checks, c)
	}
	if r.Waivers != nil {
		doc.Waivers = make([]WaiverDocument, 0, len(r.Waivers))
		for _, w := range r.Waivers {
			doc.Waivers = append(doc.Waivers, WaiverDocument{File: w.File, Index: w.Index, Check: w.Check,
				Reason: w.Reason, Expires: w.Expires, Owner: w.Owner, Status: string(w.State)})
		}
	}
	return doc
}

// Report writes the report as indented JSON followed by a newline.
func (JSON) Report(w io.Writer, r *checks.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(NewDocument(r))
}
