package reporters

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// unreachableReport is the report of a cluster that could not be reached:
// cluster-reachable failed, the rest skipped.
func unreachableReport(ctx, server string) *checks.Report {
	r := mixedReport()
	r.Cluster = checks.ClusterInfo{Context: ctx, Server: server}
	out := make([]checks.Outcome, len(r.Outcomes))
	for i, o := range r.Outcomes {
		o.Duration = 0
		o.Result = checks.Skip("the cluster could not be reached")
		if i == 0 {
			o.Fatal = true
			o.Result = checks.Fail("cannot reach %s: connection refused", server).WithHint("check the context")
		}
		out[i] = o
	}
	r.Outcomes = out
	return r
}

// passingReport is mixedReport with every check passing but the skipped.
func passingReport(ctx string) *checks.Report {
	r := mixedReport()
	r.Cluster.Context = ctx
	out := make([]checks.Outcome, len(r.Outcomes))
	for i, o := range r.Outcomes {
		if o.Status != checks.StatusSkip {
			o.Result = checks.Pass("fine")
		}
		out[i] = o
	}
	r.Outcomes = out
	return r
}

// bigFleet is seven clusters: failing, passing, unreachable, one whose
// kubeconfig entry is unusable, and a context named like an EKS ARN.
func bigFleet() *Fleet {
	f := &Fleet{Mode: checks.ModePre}
	withCtx := func(r *checks.Report, ctx string) *checks.Report { r.Cluster.Context = ctx; return r }
	f.Entries = append(f.Entries,
		FleetEntry{Context: "kind-dev", Exit: 1, Outcome: OutcomeFailed, Report: withCtx(mixedReport(), "kind-dev")},
		FleetEntry{Context: "staging-eu", Exit: 0, Outcome: OutcomeOK, Report: passingReport("staging-eu")},
		FleetEntry{Context: "staging-us", Exit: 0, Outcome: OutcomeOK, Report: passingReport("staging-us")},
		FleetEntry{Context: "arn:aws:eks:eu-west-1:123456789012:cluster/prod-eu", Exit: 1, Outcome: OutcomeFailed,
			Report: withCtx(mixedReport(), "arn:aws:eks:eu-west-1:123456789012:cluster/prod-eu")},
		FleetEntry{Context: "gone", Exit: 3, Outcome: OutcomeUnreachable, Report: unreachableReport("gone", "https://10.0.0.9:6443")},
		FleetEntry{Context: "broken", Exit: 2, Outcome: OutcomeNotChecked, Err: `kubeconfig context broken: cluster "old" not found`},
		FleetEntry{Context: "prod-us", Exit: 0, Outcome: OutcomeOK, Report: passingReport("prod-us")},
	)
	return f
}

// upgradeFleet is an --upgrade fleet: one cluster ready, one that needs a
// step first, one blocked, one unreachable.
func upgradeFleet() *Fleet {
	meta := func(id string) checks.Meta {
		return checks.Meta{ID: id, Category: checks.CategoryUpgrade, Modes: checks.ModeUpgrade, Title: id, Severity: checks.SeverityFail, Impact: registeredImpact(id)}
	}
	report := func(ctx, from string, pathRes, valuesRes checks.Result) *checks.Report {
		return &checks.Report{
			Mode:    checks.ModeUpgrade,
			Cluster: checks.ClusterInfo{Context: ctx, Server: "https://" + ctx + ":6443", Version: "v1.30.2"},
			Upgrade: &checks.UpgradeInfo{Release: "cf-gitops-runtime", Namespace: "codefresh", Revision: 3, From: from, To: "0.30.0"},
			Outcomes: []checks.Outcome{
				{Meta: meta("cluster-reachable"), Result: checks.Pass("answered")},
				{Meta: meta("upgrade-path"), Result: pathRes},
				{Meta: meta("upgrade-values"), Result: valuesRes},
			},
		}
	}
	ok := checks.Pass("fine")
	step := checks.Fail("chart 0.25.1 → 0.30.0 skips 0.26: upgrade to 0.26.x first; 0.26 removes the Argo Events resources (https://example.com)").
		WithStep(checks.UpgradeStep{From: "0.25.1", To: "0.30.0", Via: "0.26"}).WithHint("helm upgrade cf-gitops-runtime oci://quay.io/codefresh/gitops-runtime -n codefresh --version '~0.26'")
	skipped := checks.Skip("the cluster could not be reached")
	unreachable := report("offline", "", skipped, skipped)
	unreachable.Cluster.Version = ""
	unreachable.Outcomes[0].Fatal = true
	unreachable.Outcomes[0].Result = checks.Fail("cannot reach https://offline:6443: connection refused").WithHint("check the context")
	return &Fleet{Mode: checks.ModeUpgrade, Entries: []FleetEntry{
		{Context: "eu", Exit: 0, Outcome: OutcomeOK, Report: report("eu", "0.27.6", ok, ok)},
		{Context: "us", Exit: 1, Outcome: OutcomeFailed, Report: report("us", "0.25.1", step, ok)},
		{Context: "ap", Exit: 1, Outcome: OutcomeFailed, Report: report("ap", "0.27.6", ok, checks.Fail("global.runtime.name changes from a to b").WithHint("keep the name"))},
		{Context: "offline", Exit: 3, Outcome: OutcomeUnreachable, Report: unreachable},
	}}
}

// TestFleetGolden renders fleets in every format and compares them with
// testdata/golden/fleet*.<format>: the table folded at 80 columns (no line
// wider), unfolded with -o wide, the upgrade waves, JSON, YAML and JUnit.
func TestFleetGolden(t *testing.T) {
	for _, tt := range []struct {
		name   string
		fleet  *Fleet
		format Format
		width  int
	}{
		{"fleet.table-80.txt", bigFleet(), FormatTable, 80},
		{"fleet.table-60.txt", bigFleet(), FormatTable, 60},
		{"fleet.wide.txt", bigFleet(), FormatWide, 80},
		{"fleet.json", bigFleet(), FormatJSON, 0},
		{"fleet.yaml", bigFleet(), FormatYAML, 0},
		{"fleet.junit.xml", bigFleet(), FormatJUnit, 0},
		{"fleet-upgrade.table-80.txt", upgradeFleet(), FormatTable, 80},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteFleet(&buf, tt.format, Options{Width: tt.width}, tt.fleet); err != nil {
				t.Fatal(err)
			}
			assertGolden(t, filepath.Join("testdata", "golden", tt.name), buf.Bytes())
			if tt.format == FormatTable {
				for _, l := range strings.Split(buf.String(), "\n") {
					if w := twwidth.Width(l); w > tt.width {
						t.Errorf("line of %d columns at width %d: %q", w, tt.width, l)
					}
				}
			}
		})
	}
}

// TestFleetMatrixFolds: at 80 columns the seven clusters do not fit beside
// the check names and fold into several matrices, each keeping every check
// row and every cluster exactly once over all; with no width limit (-o wide)
// they are one matrix.
func TestFleetMatrixFolds(t *testing.T) {
	f := bigFleet().redacted()
	for _, tt := range []struct {
		width, matrices int
	}{{80, 2}, {60, 3}, {0, 1}} {
		ms := FleetTable{Options: Options{Width: tt.width}}.matrices(f, Table{}.styles())
		if len(ms) != tt.matrices {
			t.Errorf("width %d: %d matrices, want %d:\n%s", tt.width, len(ms), tt.matrices, strings.Join(ms, "\n"))
		}
		columns := 0
		for _, m := range ms {
			lines := strings.Split(strings.TrimRight(m, "\n"), "\n")
			if got := len(lines); got != len(mixedReport().Outcomes)+2 {
				t.Errorf("width %d: a matrix of %d rows, want the checks, CHECK and exit", tt.width, got)
			}
			columns += len(strings.Fields(lines[0])) - 1
		}
		if columns != len(f.Entries) {
			t.Errorf("width %d: %d cluster columns over all matrices, want %d", tt.width, columns, len(f.Entries))
		}
	}
}

// TestColumnLabel: a context name wider than the limit keeps its end.
func TestColumnLabel(t *testing.T) {
	for _, tt := range []struct {
		in    string
		limit int
		want  string
	}{
		{"kind-dev", 24, "kind-dev"},
		{"arn:aws:eks:eu-west-1:123456789012:cluster/prod-eu", 24, "…6789012:cluster/prod-eu"},
		{"abcdef", 4, "…def"},
	} {
		if got := columnLabel(tt.in, tt.limit); got != tt.want || twwidth.Width(got) > tt.limit {
			t.Errorf("columnLabel(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
		}
	}
}

// TestFleetDocument: the JSON document has an entry per cluster, in order,
// with its exit code and report (none for the unusable context, which says
// why), and the summary sums the clusters' counts.
func TestFleetDocument(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteFleet(&buf, FormatJSON, Options{}, bigFleet()); err != nil {
		t.Fatal(err)
	}
	var doc FleetDocument
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Fleet) != 7 || doc.Fleet[0].Context != "kind-dev" || doc.Fleet[5].Report != nil || doc.Fleet[5].Error == "" || doc.Fleet[5].Exit != 2 {
		t.Fatalf("fleet = %+v", doc.Fleet)
	}
	mixed := NewDocument(mixedReport()).Summary
	if doc.Summary.Fail != 2*mixed.Fail+1 || doc.Summary.Error != 2*mixed.Error {
		t.Errorf("summary = %+v, want twice the mixed report's failures and the unreachable one", doc.Summary)
	}
	if c := doc.Summary.Clusters; c.Total != 7 || c.ByExit["0"] != 3 || c.ByExit["1"] != 2 || c.ByExit["2"] != 1 || c.ByExit["3"] != 1 {
		t.Errorf("clusters = %+v", c)
	}
}

// TestFleetJUnitSuites: one suite per cluster, named with its context, the
// counts of <testsuites> summed over them.
func TestFleetJUnitSuites(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteFleet(&buf, FormatJUnit, Options{}, bigFleet()); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Suites) != 7 {
		t.Fatalf("%d suites, want 7", len(doc.Suites))
	}
	tests, failures := 0, 0
	for i, e := range bigFleet().Entries {
		s := doc.Suites[i]
		if want := fmt.Sprintf("gitops-preflight pre-install (%s)", e.Context); s.Name != want {
			t.Errorf("suite %d named %q, want %q", i, s.Name, want)
		}
		tests += s.Tests
		failures += s.Failures
	}
	if doc.Tests != tests || doc.Failures != failures || doc.Suites[5].Errors != 1 {
		t.Errorf("testsuites counts %d tests, %d failures; suites sum to %d, %d", doc.Tests, doc.Failures, tests, failures)
	}
}

// TestFleetUpgradeWaves: ready, needs a step first (with the version),
// blocked (by which checks), not checked.
func TestFleetUpgradeWaves(t *testing.T) {
	got := upgradeWaves(upgradeFleet())
	want := []string{
		"ready: eu",
		"needs a step first: us (chart 0.25.1 → 0.30.0 skips 0.26: upgrade to 0.26.x first)",
		"blocked: ap (by upgrade-values)",
		"not checked: offline (exit 3)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("waves:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestUpgradeWavesReadTheStep: a cluster needs a step first when a failed
// result carries the upgrade step (Result.Step), whatever the messages say;
// a failure whose message merely reads like one blocks it.
func TestUpgradeWavesReadTheStep(t *testing.T) {
	entry := func(ctx string, r checks.Result) FleetEntry {
		return FleetEntry{Context: ctx, Exit: 1, Outcome: OutcomeFailed, Report: &checks.Report{Mode: checks.ModeUpgrade,
			Outcomes: []checks.Outcome{{Meta: checks.Meta{ID: "cluster-reachable"}, Result: checks.Pass("ok")}, {Meta: checks.Meta{ID: "some-check"}, Result: r}}}}
	}
	lookalike := checks.Fail("chart 0.25.1 → 0.30.0 skips 0.26: upgrade to 0.26.x first; it says so")
	step := checks.Fail("a message that names no step").WithStep(checks.UpgradeStep{From: "0.25.1", To: "0.30.0", Via: "0.26"})
	got := upgradeWaves(&Fleet{Mode: checks.ModeUpgrade, Entries: []FleetEntry{entry("a", lookalike), entry("b", step)}})
	want := []string{"needs a step first: b (chart 0.25.1 → 0.30.0 skips 0.26: upgrade to 0.26.x first)", "blocked: a (by some-check)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("upgradeWaves = %q, want %q", got, want)
	}
}
