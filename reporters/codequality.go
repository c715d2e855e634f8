package reporters

import (
	"encoding/json"
	"io"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// CodeQuality renders the report as a GitLab Code Quality report: the
// subset of the Code Climate issue format GitLab reads
// (https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format:
// description, check_name, fingerprint, severity, location.path,
// location.lines.begin), a JSON array for `artifacts: reports: codequality`.
// Like SARIF it holds the findings whose source is a line of a file (a
// merge request shows them on that line); findings about the cluster are
// in the JUnit report GitLab reads beside it. Severity: a fail or error
// that makes helm install or upgrade fail, or loses data, is critical, any
// other fail or error major, a warn minor; waived findings are left out.
type CodeQuality struct{}

type codeQualityIssue struct {
	Description string              `json:"description"`
	CheckName   string              `json:"check_name"`
	Fingerprint string              `json:"fingerprint"`
	Severity    string              `json:"severity"`
	Location    codeQualityLocation `json:"location"`
}

type codeQualityLocation struct {
	Path  string           `json:"path"`
	Lines codeQualityLines `json:"lines"`
}

type codeQualityLines struct {
	Begin int `json:"begin"`
}

// Report writes the issues as a JSON array.
func (CodeQuality) Report(w io.Writer, r *checks.Report) error {
	return writeCodeQuality(w, codeQualityIssues(r, ""))
}

func writeCodeQuality(w io.Writer, issues []codeQualityIssue) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(issues)
}

// codeQualityIssues are one report's anchored findings; label names a
// fleet member ("" for a single cluster) and starts each description.
func codeQualityIssues(r *checks.Report, label string) []codeQualityIssue {
	ctx := firstNonEmpty(label, r.Cluster.Context)
	out := []codeQualityIssue{}
	for _, o := range r.Outcomes {
		if !isFinding(o) || o.Status == checks.StatusWaived || o.Source == nil || !o.Source.Anchored() {
			continue
		}
		sev := "minor"
		if o.Status.Failed() {
			sev = "major"
			switch o.Impact {
			case checks.ImpactInstallFails, checks.ImpactUpgradeFails, checks.ImpactDataLoss:
				sev = "critical"
			}
		}
		desc := o.ID + ": " + o.Message
		if label != "" {
			desc = "[" + label + "] " + desc
		}
		if o.Hint != "" {
			desc += " → " + o.Hint
		}
		out = append(out, codeQualityIssue{
			Description: desc, CheckName: "gitops-preflight/" + o.ID, Fingerprint: Fingerprint(ctx, o), Severity: sev,
			Location: codeQualityLocation{Path: repoPath(o.Source.File), Lines: codeQualityLines{Begin: o.Source.Line}},
		})
	}
	return out
}
