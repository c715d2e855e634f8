package reporters

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// anchoredReport is mixedReport with findings caused by values: a fail at
// a line of a values file, a warn set by --set (not anchored to a file), a
// waived fail at a line of a chart's Chart.yaml, and a finding whose values
// file path needs escaping in a workflow command.
func anchoredReport() *checks.Report {
	r := mixedReport()
	meta := func(id string, cat checks.Category, title string, sev checks.Severity) checks.Meta {
		return checks.Meta{ID: id, Category: cat, Modes: checks.ModePre, Title: title, Severity: sev, Impact: registeredImpact(id)}
	}
	r.Outcomes = append(r.Outcomes,
		checks.Outcome{Meta: meta("runtime-name", checks.CategoryInputs, "Runtime name is valid", checks.SeverityFail),
			Result: checks.Fail("runtime name %q must start with a lower-case letter, %s", "Bad_Name", "100% sure").
				WithHint("choose a name matching ^[a-z][a-z0-9]{0,37}$").
				WithSource(&checks.Source{Path: "global.runtime.name", File: "./envs/prod/values.yaml", Line: 3, Column: 5})},
		checks.Outcome{Meta: meta("validation-hooks", checks.CategoryInputs, "The chart's pre-install validation hooks will run", checks.SeverityWarn),
			Result: checks.Warn("installer.skipValidation=true: no validate-values hook").
				WithSource(&checks.Source{Path: "installer.skipValidation", Flag: "--set installer.skipValidation=true"})},
		checks.Outcome{Meta: meta("ingress-class", checks.CategoryIngress, "The IngressClass exists and its controller is supported", checks.SeverityFail),
			Result: checks.Fail("IngressClass missing not found; the cluster has: none").
				WithSource(&checks.Source{Path: "global.runtime.ingress.className", File: "envs/a,b:c/values.yaml", Line: 12, Column: 7})},
	)
	// The mixed report's ingress-class skip goes: one outcome per check.
	for i, o := range r.Outcomes {
		if o.ID == "ingress-class" && o.Status == checks.StatusSkip {
			r.Outcomes = append(r.Outcomes[:i], r.Outcomes[i+1:]...)
			break
		}
	}
	up := meta("upgrade-path", checks.CategoryUpgrade, "The chart supports this upgrade step", checks.SeverityFail)
	r.Outcomes = append(r.Outcomes, checks.Outcome{Meta: up,
		Result: checks.Fail("chart 0.26.8 → 0.30.0 skips 0.27: upgrade to 0.27.x first").
			WithSource(&checks.Source{File: "charts/runtime/Chart.yaml", Line: 9, Column: 5}),
		Waiver: &checks.Waived{Reason: "staged upgrade in progress", Expires: "2026-12-31", Status: checks.StatusFail}})
	r.Outcomes[len(r.Outcomes)-1].Status = checks.StatusWaived
	return r
}

// TestGoldenCI renders the anchored report (and the passing post report)
// in each CI format and compares with testdata/golden/<report>.<format>.
func TestGoldenCI(t *testing.T) {
	ci := []Format{FormatGitHub, FormatMarkdown, FormatSARIF, FormatCodeQuality}
	// The anchored report in the other formats too: how each shows the
	// source (the post report's are TestGolden's).
	formats := map[string][]Format{"anchored": append(ci, FormatJSON, FormatTable, FormatJUnit), "post": ci}
	reports := map[string]*checks.Report{"anchored": anchoredReport(), "post": postReport()}
	for rname, r := range reports {
		for _, f := range formats[rname] {
			t.Run(rname+"."+string(f), func(t *testing.T) {
				rep, err := New(f, Options{Width: 100})
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if err := rep.Report(&buf, r); err != nil {
					t.Fatal(err)
				}
				assertGolden(t, filepath.Join("testdata", "golden", rname+"."+string(f)), buf.Bytes())
			})
		}
	}
}

// TestGitHubWorkflowCommands: each finding is one workflow command line
// (escaped: no raw newline, %, or, in a property, : and ,); anchored ones
// name the file (forward slashes, no ./), line and column; passing and
// skipped checks are not annotations; the step summary receives the
// Markdown report.
func TestGitHubWorkflowCommands(t *testing.T) {
	var out, summary bytes.Buffer
	rep, err := New(FormatGitHub, Options{StepSummary: &summary})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Report(&out, anchoredReport()); err != nil {
		t.Fatal(err)
	}
	cmd := regexp.MustCompile(`^::(error|warning|notice) ([^:]*)::(.*)$`)
	got := map[string]string{}
	sc := bufio.NewScanner(&out)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	for _, l := range lines[:len(lines)-1] {
		m := cmd.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not a workflow command: %q", l)
		}
		if strings.ContainsAny(m[3], "\r\n") || regexp.MustCompile(`%[^0-9A-F]|%$`).MatchString(m[3]) {
			t.Errorf("message not escaped: %q", m[3])
		}
		id := regexp.MustCompile(`title=([a-z-]+)%3A`).FindStringSubmatch(m[2])
		if id == nil {
			t.Fatalf("no title in %q", m[2])
		}
		got[id[1]] = m[1] + " " + regexp.MustCompile(`,?title=.*$`).ReplaceAllString(m[2], "")
	}
	want := map[string]string{
		"node-resources": "error ", "helm-version": "warning ", "argo-crds-ownership": "error ", "runtime-namespace": "error ",
		"runtime-name":     "error file=envs/prod/values.yaml,line=3,col=5",
		"validation-hooks": "warning ",
		"ingress-class":    "error file=envs/a%2Cb%3Ac/values.yaml,line=12,col=7",
		"upgrade-path":     "notice file=charts/runtime/Chart.yaml,line=9,col=5",
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %q, want %q", id, got[id], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("annotations for %v, want exactly %v", got, want)
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "kubectl gitops-preflight: 1 pass, 2 warn, 4 fail, 1 error, 1 waived (pre-install, context kind-dev)") {
		t.Errorf("last line %q", last)
	}
	if !strings.HasPrefix(summary.String(), MarkdownMarker) || !strings.Contains(summary.String(), "`runtime-name`") {
		t.Errorf("step summary:\n%s", summary.String())
	}
}

// TestFingerprintsAreStable: a finding's fingerprint ignores what a re-run
// may change (message, line, column, status) and tells apart what makes it
// another finding (check, cluster, values key, objects).
func TestFingerprintsAreStable(t *testing.T) {
	r := anchoredReport()
	var o checks.Outcome
	for _, x := range r.Outcomes {
		if x.ID == "runtime-name" {
			o = x
		}
	}
	base := Fingerprint("prod", o)
	if len(base) != 32 {
		t.Fatalf("fingerprint %q", base)
	}
	same := o
	same.Message, same.Status = "something else", checks.StatusWarn
	src := *o.Source
	src.Line, src.Column = 40, 1
	same.Source = &src
	if Fingerprint("prod", same) != base {
		t.Error("the fingerprint changed with the message, status or line")
	}
	other := o
	src2 := *o.Source
	src2.Path = "global.runtime.other"
	other.Source = &src2
	for name, fp := range map[string]string{
		"context": Fingerprint("staging", o), "key": Fingerprint("prod", other),
		"check": Fingerprint("prod", checks.Outcome{Meta: checks.Meta{ID: "values"}, Result: o.Result}),
	} {
		if fp == base {
			t.Errorf("another %s, same fingerprint", name)
		}
	}
}

// schema compiles one of testdata/schemas, after checking it is the pinned
// file (SOURCES.md).
func schema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	p := filepath.Join("testdata", "schemas", name)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("file:///"+name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("file:///" + name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSchemasAreThePinnedOnes: each vendored schema has the sha256
// testdata/schemas/SOURCES.md gives with its source.
func TestSchemasAreThePinnedOnes(t *testing.T) {
	sources, err := os.ReadFile(filepath.Join("testdata", "schemas", "SOURCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sarif-2.1.0-rtm.5.json", "gitlab-codequality.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "schemas", name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(name) + "` .*`([0-9a-f]{64})` \\|$").FindSubmatch(sources)
		if row == nil || string(row[1]) != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: sha256 %x, SOURCES.md says %q", name, sum, row)
		}
	}
}

func validate(t *testing.T, s *jsonschema.Schema, out []byte) any {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if err := s.Validate(inst); err != nil {
		t.Fatalf("fails the schema: %v\n%s", err, out)
	}
	return inst
}

// TestSARIFIsValid: the log passes the SARIF 2.1.0 schema, single cluster
// and fleet; every result has a physical location with a line (GitHub
// rejects others) and a rule the run declares; findings that name no file
// are not results; a deliberately broken log fails the schema (the
// validation can fail).
func TestSARIFIsValid(t *testing.T) {
	s := schema(t, "sarif-2.1.0-rtm.5.json")
	var single, fleet bytes.Buffer
	if err := (SARIF{}).Report(&single, anchoredReport()); err != nil {
		t.Fatal(err)
	}
	if err := WriteFleet(&fleet, FormatSARIF, Options{}, testFleetCI()); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string][]byte{"single": single.Bytes(), "fleet": fleet.Bytes()} {
		validate(t, s, out)
		var log sarifLog
		if err := json.Unmarshal(out, &log); err != nil {
			t.Fatal(err)
		}
		results := 0
		for _, run := range log.Runs {
			for _, res := range run.Results {
				results++
				if len(res.Locations) == 0 || res.Locations[0].PhysicalLocation.ArtifactLocation.URI == "" || res.Locations[0].PhysicalLocation.Region.StartLine < 1 {
					t.Errorf("%s: result %s without a physical location", name, res.RuleID)
				}
				if run.Tool.Driver.Rules[res.RuleIndex].ID != res.RuleID {
					t.Errorf("%s: result %s points at rule %d", name, res.RuleID, res.RuleIndex)
				}
			}
		}
		if want := map[string]int{"single": 3, "fleet": 6}[name]; results != want {
			t.Errorf("%s: %d results, want %d (the anchored findings)", name, results, want)
		}
	}
	broken := bytes.Replace(single.Bytes(), []byte(`"version": "2.1.0"`), []byte(`"version": "2.0.0"`), 1)
	inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(broken))
	if s.Validate(inst) == nil {
		t.Error("a SARIF log of version 2.0.0 passed the schema: the validation proves nothing")
	}
}

// TestCodeQualityIsValid: the report passes the GitLab Code Quality schema,
// single cluster and fleet, with the anchored findings only (not waived),
// and the schema refuses an issue without a location.
func TestCodeQualityIsValid(t *testing.T) {
	s := schema(t, "gitlab-codequality.json")
	var single, fleet bytes.Buffer
	if err := (CodeQuality{}).Report(&single, anchoredReport()); err != nil {
		t.Fatal(err)
	}
	if err := WriteFleet(&fleet, FormatCodeQuality, Options{}, testFleetCI()); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string][]byte{"single": single.Bytes(), "fleet": fleet.Bytes()} {
		validate(t, s, out)
		var issues []codeQualityIssue
		if err := json.Unmarshal(out, &issues); err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"single": 2, "fleet": 4}[name]; len(issues) != want {
			t.Errorf("%s: %d issues, want %d", name, len(issues), want)
		}
	}
	inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(`[{"description":"x","check_name":"c","fingerprint":"f","severity":"major"}]`))
	if s.Validate(inst) == nil {
		t.Error("an issue without a location passed the schema")
	}
}

// testFleetCI is two clusters with the anchored report and one not checked.
func testFleetCI() *Fleet {
	a, b := anchoredReport(), anchoredReport()
	a.Cluster.Context, b.Cluster.Context = "prod-eu", "prod-us"
	return &Fleet{Mode: checks.ModePre, Entries: []FleetEntry{
		{Context: "prod-eu", Exit: 1, Report: a},
		{Context: "prod-us", Exit: 1, Report: b},
		{Context: "broken", Exit: 2, Err: "context broken: no cluster named x"},
	}}
}

// TestGoldenFleetCI: a fleet in each CI format, per cluster as a single run
// would be.
func TestGoldenFleetCI(t *testing.T) {
	for _, f := range []Format{FormatGitHub, FormatMarkdown} {
		t.Run(string(f), func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteFleet(&buf, f, Options{}, testFleetCI()); err != nil {
				t.Fatal(err)
			}
			assertGolden(t, filepath.Join("testdata", "golden", "fleet."+string(f)), buf.Bytes())
		})
	}
}
