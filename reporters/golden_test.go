package reporters

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

var update = flag.Bool("update", false, "rewrite reporters/testdata/golden/* from the current output")

// registeredImpact is the impact of the registered check id (Meta.Impact).
func registeredImpact(id string) checks.Impact {
	for _, c := range checks.All() {
		if c.ID == id {
			return c.Impact
		}
	}
	panic("no check " + id)
}

// mixedReport has every status, a multi-line message, a hint, objects and a
// fixable failure: the shapes each reporter must render.
func mixedReport() *checks.Report {
	meta := func(id string, cat checks.Category, title string) checks.Meta {
		return checks.Meta{ID: id, Category: cat, Modes: checks.ModePre, Title: title, Severity: checks.SeverityFail, Impact: registeredImpact(id)}
	}
	fixable := meta("argo-crds-ownership", checks.CategoryConflicts, "Argo CRDs are owned by the runtime release")
	fixable.Fixable = true
	return &checks.Report{
		Mode:    checks.ModePre,
		Cluster: checks.ClusterInfo{Context: "kind-dev", Server: "https://127.0.0.1:6443", Version: "v1.30.2"},
		Outcomes: []checks.Outcome{
			{Meta: meta("cluster-reachable", checks.CategoryCluster, "Kubernetes API server is reachable with the given credentials"),
				Result: checks.Pass("https://127.0.0.1:6443 answered: Kubernetes v1.30.2"), Duration: 12 * time.Millisecond},
			{Meta: meta("node-resources", checks.CategoryCluster, "A Ready, schedulable node has at least 2 CPU and 5000M memory allocatable"),
				Result: checks.Fail("no node qualifies (1 Ready, schedulable of 1); best: node-1 with allocatable cpu 1, memory 2000M (1.9Gi)").
					WithHint("add a node with at least 2 CPU and 5000M allocatable memory").
					WithObjects(checks.ObjectRef{Kind: "Node", Name: "node-1"}), Duration: 40 * time.Millisecond},
			{Meta: meta("helm-version", checks.CategoryTools, "Helm client is 3.8.0 or newer"),
				Result: checks.Warn("no helm client found (HELM_BIN unset, helm not on PATH)").
					WithHint("install Helm 3.8.0 or newer: https://helm.sh/docs/intro/install/"), Duration: 3 * time.Millisecond},
			{Meta: fixable,
				Result: checks.Fail("2 argoproj.io CRDs are not owned by release cf-gitops-runtime:\napplications.argoproj.io\nrollouts.argoproj.io").
					WithHint("kubectl gitops-preflight --fix --yes\nor label and annotate them by hand").
					WithObjects(checks.ObjectRef{Kind: "CustomResourceDefinition", Name: "applications.argoproj.io"}), Duration: 25 * time.Millisecond},
			{Meta: meta("ingress-class", checks.CategoryIngress, "The IngressClass exists and its controller is supported"),
				Result: checks.Skip("access mode is tunnel")},
			{Meta: meta("runtime-namespace", checks.CategoryInputs, "Runtime namespace is valid and usable"),
				Result: checks.Result{Status: checks.StatusError, Message: "listing deployments: the server is currently unable to handle the request <& \"quoted\">"}, Duration: 1500 * time.Millisecond},
		},
	}
}

// waivedReport is a run with --waivers: a failure a waiver covers (waived,
// with reason, owner and expiry), a failure whose waiver expired, and a
// waiver that matched nothing.
func waivedReport() *checks.Report {
	r := mixedReport()
	r.Outcomes = r.Outcomes[:4]
	r.Outcomes[1].Waiver = &checks.Waived{Reason: "lab cluster, small nodes on purpose", Owner: "platform-team", Expires: "2026-12-31", Status: checks.StatusFail}
	r.Outcomes[1].Status = checks.StatusWaived
	r.Waivers = []checks.WaiverUse{
		{File: "waivers.yaml", Index: 1, Check: "node-resources", Reason: "lab cluster, small nodes on purpose", Expires: "2026-12-31", Owner: "platform-team", State: checks.WaiverApplied},
		{File: "waivers.yaml", Index: 2, Check: "argo-crds-ownership", Reason: "migrating", Expires: "2026-01-31", State: checks.WaiverExpired},
		{File: "waivers.yaml", Index: 3, Check: "ingress-tls", Reason: "self-signed in staging", Expires: "2027-01-01", State: checks.WaiverUnmatched},
	}
	return r
}

// postReport is a passing post-install run on an unnamed context.
func postReport() *checks.Report {
	return &checks.Report{
		Mode:    checks.ModePost,
		Cluster: checks.ClusterInfo{Server: "https://10.0.0.1"},
		Outcomes: []checks.Outcome{
			{Meta: checks.Meta{ID: "cluster-reachable", Category: checks.CategoryCluster, Modes: checks.ModePre | checks.ModePost,
				Title: "Kubernetes API server is reachable with the given credentials", Severity: checks.SeverityFail, Impact: registeredImpact("cluster-reachable")},
				Result: checks.Pass("https://10.0.0.1 answered: Kubernetes v1.29.3-eks-4f4795d"), Duration: time.Millisecond},
		},
	}
}

// TestGolden renders each report in each format (table with colour forced off
// and on) and compares it with reporters/testdata/golden/<report>.<format>.
// Run `go test ./reporters -run TestGolden -update` to accept a change.
func TestGolden(t *testing.T) {
	reports := map[string]*checks.Report{"mixed": mixedReport(), "post": postReport(), "waived": waivedReport()}
	renders := []struct {
		name     string
		reporter Reporter
	}{
		{"table.txt", Table{Options: Options{Color: false}}},
		{"table-color.txt", Table{Options: Options{Color: true}}},
		{"table-80.txt", Table{Options: Options{Width: 80}}},
		{"table-200.txt", Table{Options: Options{Width: 200}}},
		{"table-80-color.txt", Table{Options: Options{Width: 80, Color: true}}},
		{"json", JSON{}},
		{"yaml", YAML{}},
		{"junit.xml", JUnit{}},
	}
	for rname, r := range reports {
		for _, rd := range renders {
			t.Run(rname+"."+rd.name, func(t *testing.T) {
				var buf bytes.Buffer
				if err := rd.reporter.Report(&buf, r); err != nil {
					t.Fatalf("Report: %v", err)
				}
				assertGolden(t, filepath.Join("testdata", "golden", rname+"."+rd.name), buf.Bytes())
			})
		}
	}
}

func assertGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run `go test ./reporters -run TestGolden -update` if intended)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// TestColourOnlyWhenAsked: the plain table has no escape sequences, the
// coloured one has them, and both have the same text once they are removed.
func TestColourOnlyWhenAsked(t *testing.T) {
	var plain, coloured bytes.Buffer
	if err := (Table{Options: Options{Color: false}}).Report(&plain, mixedReport()); err != nil {
		t.Fatal(err)
	}
	if err := (Table{Options: Options{Color: true}}).Report(&coloured, mixedReport()); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain.Bytes(), []byte("\x1b[")) {
		t.Errorf("table without colour contains ANSI escapes:\n%q", plain.String())
	}
	if !bytes.Contains(coloured.Bytes(), []byte("\x1b[31;1m")) {
		t.Errorf("table with colour has no bold red for fail:\n%q", coloured.String())
	}
}

// TestYAMLIsTheJSONDocument: -o yaml decodes to exactly the -o json document.
func TestYAMLIsTheJSONDocument(t *testing.T) {
	var j, y bytes.Buffer
	if err := (JSON{}).Report(&j, mixedReport()); err != nil {
		t.Fatal(err)
	}
	if err := (YAML{}).Report(&y, mixedReport()); err != nil {
		t.Fatal(err)
	}
	var fromJSON, fromYAML any
	if err := json.Unmarshal(j.Bytes(), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(y.Bytes(), &fromYAML); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fromJSON)
	b, _ := json.Marshal(fromYAML)
	if !bytes.Equal(a, b) {
		t.Errorf("yaml and json differ:\njson: %s\nyaml: %s", a, b)
	}
}

// TestJUnitCounts decodes the XML and checks the status mapping: fail is a
// failure, error an error (counted in errors), skip is skipped, pass and warn pass.
func TestJUnitCounts(t *testing.T) {
	var buf bytes.Buffer
	if err := (JUnit{}).Report(&buf, mixedReport()); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	if doc.Tests != 6 || doc.Failures != 2 || doc.Skipped != 1 || doc.Errors != 1 {
		t.Errorf("tests/failures/skipped/errors = %d/%d/%d/%d, want 6/2/1/1", doc.Tests, doc.Failures, doc.Skipped, doc.Errors)
	}
	if s := doc.Suites[0]; s.Tests != doc.Tests || s.Failures != doc.Failures || s.Errors != doc.Errors || s.Skipped != doc.Skipped {
		t.Errorf("suite counts %d/%d/%d/%d differ from the document's", s.Tests, s.Failures, s.Skipped, s.Errors)
	}
	got := map[string]string{}
	for _, c := range doc.Suites[0].Cases {
		switch {
		case c.Failure != nil:
			got[c.Name] = "failure:" + c.Failure.Type
		case c.Error != nil:
			got[c.Name] = "error:" + c.Error.Type
		case c.Skipped != nil:
			got[c.Name] = "skipped"
		default:
			got[c.Name] = "ok"
		}
	}
	want := map[string]string{
		"cluster-reachable": "ok", "node-resources": "failure:fail", "helm-version": "ok",
		"argo-crds-ownership": "failure:fail", "ingress-class": "skipped", "runtime-namespace": "error:error",
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %s, want %s", id, got[id], w)
		}
	}
	if !strings.Contains(buf.String(), "&lt;&amp; &#34;quoted&#34;&gt;") {
		t.Errorf("special characters not escaped:\n%s", buf.String())
	}
}

// TestListChecksFormats: yaml lists the catalogue, junit is refused.
func TestListChecksFormats(t *testing.T) {
	list := checks.All()
	var buf bytes.Buffer
	if err := ListChecks(&buf, FormatYAML, list, 0); err != nil {
		t.Fatal(err)
	}
	var infos []CheckInfo
	if err := yaml.UnmarshalStrict(buf.Bytes(), &infos); err != nil {
		t.Fatal(err)
	}
	if len(infos) != len(list) || infos[0].ID != list[0].ID {
		t.Errorf("yaml list has %d entries (first %+v), want %d starting with %s", len(infos), infos, len(list), list[0].ID)
	}
	if err := ListChecks(&buf, FormatJUnit, list, 80); err == nil {
		t.Error("junit list: no error")
	}
}
