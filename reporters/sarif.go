package reporters

import (
	"encoding/json"
	"io"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// SARIF renders the report as a SARIF 2.1.0 log
// (https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html) for
// code scanning (GitHub's upload-sarif). Its rules are the run's checks
// (ID, title, docs page as helpUri, impact and category as properties);
// its results are the findings whose source is a line of a file (a values
// file, a chart's Chart.yaml): GitHub code scanning refuses a result
// without a physical location, so findings about the cluster, or set by a
// flag, are in the other formats only. Each result carries its
// fingerprint (partialFingerprints) and, waived, a suppression with the
// waiver's reason. A fleet is one run per cluster, each with its own
// automationDetails.id.
type SARIF struct{}

// SARIFSchemaURI is the schema the log names ($schema).
const SARIFSchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"

// sarifFingerprintKey names the fingerprint in partialFingerprints.
const sarifFingerprintKey = "gitopsPreflightFinding/v1"

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool              sarifTool              `json:"tool"`
	AutomationDetails sarifAutomationDetails `json:"automationDetails"`
	Results           []sarifResult          `json:"results"`
	Properties        map[string]string      `json:"properties,omitempty"`
}

type sarifAutomationDetails struct {
	ID string `json:"id"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string             `json:"id"`
	ShortDescription     sarifText          `json:"shortDescription"`
	HelpURI              string             `json:"helpUri"`
	Help                 sarifText          `json:"help"`
	DefaultConfiguration sarifConfiguration `json:"defaultConfiguration"`
	Properties           sarifRuleProps     `json:"properties"`
}

type sarifConfiguration struct {
	Level string `json:"level"`
}

type sarifRuleProps struct {
	Category string   `json:"category"`
	Impact   string   `json:"impact"`
	Tags     []string `json:"tags"`
}

type sarifResult struct {
	RuleID              string             `json:"ruleId"`
	RuleIndex           int                `json:"ruleIndex"`
	Level               string             `json:"level"`
	Message             sarifText          `json:"message"`
	Locations           []sarifLocation    `json:"locations"`
	PartialFingerprints map[string]string  `json:"partialFingerprints"`
	Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
	Properties          map[string]string  `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical  `json:"physicalLocation"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

type sarifLogical struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification"`
}

// Report writes the SARIF log.
func (SARIF) Report(w io.Writer, r *checks.Report) error {
	return writeSARIF(w, []sarifRun{sarifRunOf(r, "")})
}

func writeSARIF(w io.Writer, runs []sarifRun) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: SARIFSchemaURI, Version: "2.1.0", Runs: runs})
}

// sarifLevel is a status's result level.
func sarifLevel(s checks.Status, waived *checks.Waived) string {
	if waived != nil {
		s = waived.Status
	}
	switch s {
	case checks.StatusWarn:
		return "warning"
	case checks.StatusFail, checks.StatusError:
		return "error"
	}
	return "note"
}

// sarifRunOf is one report as a run; label names a fleet member ("" for a
// single cluster).
func sarifRunOf(r *checks.Report, label string) sarifRun {
	ctx := firstNonEmpty(label, r.Cluster.Context)
	run := sarifRun{
		Tool:              sarifTool{Driver: sarifDriver{Name: "kubectl-gitops-preflight", InformationURI: projectURI}},
		AutomationDetails: sarifAutomationDetails{ID: "gitops-preflight/" + r.Mode.Phase() + "/" + ctx + "/"},
		Results:           []sarifResult{},
	}
	if ctx != "" {
		run.Properties = map[string]string{"context": ctx}
	}
	index := map[string]int{}
	for _, o := range r.Outcomes {
		if _, ok := index[o.ID]; ok {
			continue
		}
		index[o.ID] = len(run.Tool.Driver.Rules)
		level := "error"
		if o.Severity == checks.SeverityWarn {
			level = "warning"
		}
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID: o.ID, ShortDescription: sarifText{o.Title}, HelpURI: o.Docs(),
			Help:                 sarifText{o.Title + ". What a failure means and how to fix it: " + o.Docs()},
			DefaultConfiguration: sarifConfiguration{Level: level},
			Properties:           sarifRuleProps{Category: string(o.Category), Impact: string(o.Impact), Tags: []string{string(o.Category), string(o.Impact)}},
		})
	}
	for _, o := range r.Outcomes {
		if !isFinding(o) || o.Source == nil || !o.Source.Anchored() {
			continue
		}
		s := o.Source
		loc := sarifLocation{PhysicalLocation: sarifPhysical{
			ArtifactLocation: sarifArtifact{URI: artifactURI(s.File)},
			Region:           sarifRegion{StartLine: s.Line, StartColumn: s.Column},
		}}
		if s.Path != "" {
			loc.LogicalLocations = []sarifLogical{{FullyQualifiedName: s.Path, Kind: "member"}}
		}
		res := sarifResult{
			RuleID: o.ID, RuleIndex: index[o.ID], Level: sarifLevel(o.Status, o.Waiver),
			Message:             sarifText{findingText(o)},
			Locations:           []sarifLocation{loc},
			PartialFingerprints: map[string]string{sarifFingerprintKey: Fingerprint(ctx, o)},
			Properties:          map[string]string{"status": string(o.Status), "impact": string(o.Impact)},
		}
		if w := o.Waiver; w != nil {
			res.Suppressions = []sarifSuppression{{Kind: "external", Justification: w.Reason}}
		}
		run.Results = append(run.Results, res)
	}
	return run
}

// projectURI is the plugin's home page.
const projectURI = "https://github.com/gitops-preflight/kubectl-gitops-preflight"
