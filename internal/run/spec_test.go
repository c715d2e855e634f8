package run

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// sampleConfig is a compiled pre-install run with values, a shortcut, a
// selection, waivers, probe rules and a request timeout.
func sampleConfig(t *testing.T) *Config {
	t.Helper()
	reg := registry(t)
	sel, err := reg.Select(checks.ModePre, []string{"values", "runtime-name"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := plan.Replayed(plan.Flags{RuntimeName: "rt-1", Namespace: "team-a", NamespaceExplicit: true, ReleaseName: "rel",
		Chart: "./chart", Shortcuts: plan.Shortcuts{IngressHost: "rt.example.com"}},
		map[string]any{"global": map[string]any{"codefresh": map[string]any{"userToken": map[string]any{"token": "s3cr3t-token"}}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := probe.ParseConnectTo("g.codefresh.io:443:127.0.0.1:9")
	probes := ProbeOptions{ConnectTo: []probe.ConnectTo{rule}, RequestTimeout: Duration(20 * time.Second)}
	p, err := probes.Prober("")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := ParseWaivers("team.yaml", []byte("- check: values\n  reason: lab\n  expires: 2099-12-31\n"), reg)
	if err != nil {
		t.Fatal(err)
	}
	return &Config{Mode: checks.ModePre, Registry: reg, Selected: sel, Selection: Selection{Only: []string{"values", "runtime-name"}},
		Inputs: in, Host: checks.Host{Probe: p}, Probes: probes, FailOnWarn: true, Timeout: 2 * time.Minute, Waivers: ws, HelmMajor: 4, Output: Output{Format: "json"}}
}

// specJSON is s as a bundle's manifest keeps it, read back.
func specJSON(t *testing.T, s Spec) (Spec, string) {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back, string(b)
}

// TestSpecRoundTrip: a run's spec, as JSON, builds the run again: its
// checks, judging, bounds, plan (from the redacted values), waivers, probe
// rules and output; the spec names no flag and keeps no secret.
func TestSpecRoundTrip(t *testing.T) {
	c := sampleConfig(t)
	s, raw := specJSON(t, SpecOf(c))
	if strings.Contains(raw, "s3cr3t-token") {
		t.Errorf("the spec keeps the token: %s", raw)
	}
	// The plan's sources name the flags that set values (as the report
	// shows them: "from --set ..."), which is what they say, not how the
	// run is compiled again: the rest of the spec names none.
	noSources := s
	noSources.Plan.Sources = plan.SourceIndex{}
	_, bare := specJSON(t, noSources)
	for _, flagName := range []string{"--", "fail-on", "connect-to", "request-timeout", "set-string"} {
		if strings.Contains(bare, flagName) {
			t.Errorf("the spec names the flag %q: %s", flagName, raw)
		}
	}
	got, err := FromSpec(s, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Mode != c.Mode || !slices.Equal(sortedIDs(got.Selected), sortedIDs(c.Selected)) || !got.FailOnWarn || got.Timeout != c.Timeout || got.HelmMajor != 4 {
		t.Errorf("run %+v", got)
	}
	if in := got.Inputs; in.RuntimeName != "rt-1" || in.Namespace != "team-a" || !in.NamespaceExplicit || in.IngressHost != "rt.example.com" ||
		in.AccessMode != plan.AccessIngress || !in.HasValues() || in.UserToken.Reveal() == "s3cr3t-token" || in.Chart != "./chart" {
		t.Errorf("plan %+v", in)
	}
	if len(got.Waivers) != 1 || got.Waivers[0].File != "team.yaml" || !got.Waivers[0].Expires.Equal(c.Waivers[0].Expires) {
		t.Errorf("waivers %+v", got.Waivers)
	}
	if got.Probe.Timeout != 20*time.Second || len(got.Probe.ConnectTo) != 1 || got.Probe.ConnectTo[0] != c.Probe.ConnectTo[0] || got.Output != c.Output {
		t.Errorf("prober %+v, output %+v", got.Probe, got.Output)
	}
}

// TestSpecHelmWait: whether Helm waits is recorded in all three states
// (true, false, absent when the run was not told) and replayed as it was;
// a spec without it (any older bundle) replays as not told.
func TestSpecHelmWait(t *testing.T) {
	for _, tc := range []struct {
		wait checks.HelmWait
		json string
	}{
		{checks.HelmWaitOn, `"helmWait":true`},
		{checks.HelmWaitOff, `"helmWait":false`},
		{checks.HelmWaitUnknown, ""},
	} {
		c := sampleConfig(t)
		c.HelmWait = tc.wait
		s, raw := specJSON(t, SpecOf(c))
		if tc.json != "" && !strings.Contains(raw, tc.json) || tc.json == "" && strings.Contains(raw, "helmWait") {
			t.Errorf("HelmWait %d recorded as %s, want %q", tc.wait, raw, tc.json)
		}
		got, err := FromSpec(s, Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		if got.HelmWait != tc.wait {
			t.Errorf("HelmWait %d replayed as %d", tc.wait, got.HelmWait)
		}
		// replay --helm-wait=false judges the run again without --wait.
		off := checks.HelmWaitOff
		again, err := FromSpec(s, Overrides{HelmWait: &off})
		if err != nil {
			t.Fatal(err)
		}
		if again.HelmWait != off {
			t.Errorf("HelmWait %d replayed with --helm-wait=false as %d", tc.wait, again.HelmWait)
		}
	}
}

// TestFromSpecOverrides: what a replay changes of the recorded run, and
// what it refuses in one line.
func TestFromSpecOverrides(t *testing.T) {
	s, _ := specJSON(t, SpecOf(sampleConfig(t)))
	only := []string{"kubernetes-version"}
	warn := false
	got, err := FromSpec(s, Overrides{Only: &only, FailOnWarn: &warn, Timeout: time.Minute, Format: "table"})
	if err != nil {
		t.Fatal(err)
	}
	if ids := sortedIDs(got.Selected); !slices.Equal(ids, []string{"cluster-reachable", "kubernetes-version"}) || got.FailOnWarn || got.Timeout != time.Minute || got.Output.Format != "table" {
		t.Errorf("overridden run: checks %v, fail on warn %v, timeout %s, output %+v", ids, got.FailOnWarn, got.Timeout, got.Output)
	}
	// --upgrade: the selection as asked, again in upgrade mode (values and
	// runtime-name run before an install only: asked for, they are refused).
	if _, err := FromSpec(s, Overrides{Upgrade: true}); err == nil || !strings.Contains(err.Error(), "runs only in pre-install mode") {
		t.Errorf("an upgrade of a selection of pre-install checks: %v", err)
	}
	s.Only = nil
	up, err := FromSpec(s, Overrides{Upgrade: true, Chart: ChartRef{Ref: "./newer", Version: "0.31.0"}})
	if err != nil {
		t.Fatal(err)
	}
	if up.Mode != checks.ModeUpgrade || !slices.Contains(sortedIDs(up.Selected), "upgrade-path") || up.Inputs.Chart != "./newer" || up.Chart == nil || up.Chart.Source().Version != "0.31.0" {
		t.Errorf("retargeted: mode %s, checks %v, chart %q %v", up.Mode, sortedIDs(up.Selected), up.Inputs.Chart, up.Chart)
	}
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"a newer spec", func(s *Spec) { s.Version = SpecVersion + 1 }, "newer than this plugin reads"},
		{"an unknown mode", func(s *Spec) { s.Mode = "sideways" }, `mode "sideways" is none this plugin knows`},
		{"an unknown check", func(s *Spec) { s.Checks = append(s.Checks, "no-such-check") }, `ran check "no-such-check", which this plugin does not have`},
	} {
		bad := s
		tc.edit(&bad)
		if _, err := FromSpec(bad, Overrides{}); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", tc.name, err, tc.want)
		}
	}
}

// TestSpecOfFlags: a format-1 bundle's flags, values and waivers file read
// into a spec, with the command's defaults of then; a bad value names its
// flag.
func TestSpecOfFlags(t *testing.T) {
	s, err := specOfFlags([]bundle.Flag{
		{Name: "only", Values: []string{"values", "runtime-name"}}, {Name: "fail-on", Values: []string{"warn"}},
		{Name: "namespace", Values: []string{"team-a"}}, {Name: "access-mode", Values: []string{"ingress"}},
		{Name: "request-timeout", Values: []string{"20"}}, {Name: "waivers", Values: []string{"team.yaml"}},
		{Name: "connect-to", Values: []string{"a:443:127.0.0.1:9", "b:443:127.0.0.1:9"}}, {Name: "no-such-flag", Values: []string{"x"}},
	}, []byte("global:\n  runtime:\n    name: from-values\n"), []byte("- check: values\n  reason: lab\n  expires: 2099-12-31\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != "pre-install" || !s.FailOnWarn || s.Timeout != Duration(5*time.Minute) || s.Output.Format != "table" || time.Duration(s.Probes.RequestTimeout) != 20*time.Second ||
		len(s.Probes.ConnectTo) != 2 || !slices.Equal(s.Checks, []string{"cluster-reachable", "runtime-name", "values"}) {
		t.Errorf("spec %+v", s)
	}
	if len(s.Waivers) != 1 || s.Waivers[0].File != "team.yaml" {
		t.Errorf("waivers %+v", s.Waivers)
	}
	c, err := FromSpec(s, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if in := c.Inputs; in.Namespace != "team-a" || !in.NamespaceExplicit || in.AccessMode != plan.AccessIngress || in.RuntimeName != "from-values" || in.Chart != plan.DefaultChart {
		t.Errorf("plan %+v", in)
	}
	if _, err := specOfFlags([]bundle.Flag{{Name: "timeout", Values: []string{"soon"}}}, nil, nil); err == nil || !strings.Contains(err.Error(), `flag --timeout "soon"`) {
		t.Errorf("a bad recorded duration: %v", err)
	}
}

// TestSessionRecordsABundleThatReplays: a session with Config.Bundle
// writes a bundle of format 2 whose spec is the run's; its replay runs the
// recorded checks with the recorded host reads, and reports the same.
func TestSessionRecordsABundleThatReplays(t *testing.T) {
	c := sampleConfig(t)
	sel, err := c.Registry.Select(checks.ModePre, []string{"helm-version", "runtime-name"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Selected, c.Selection = sel, Selection{Only: []string{"helm-version", "runtime-name"}}
	c.Getenv = func(k string) string { return map[string]string{"HELM_BIN": "/opt/helm"}[k] }
	c.LookPath = func(string) (string, error) { return "/opt/helm", nil }
	c.Command = func(context.Context, string, ...string) ([]byte, error) { return []byte("v3.17.0+gabc\n"), nil }
	c.Bundle = filepath.Join(t.TempDir(), "run.tgz")
	s := &Session{Config: c, REST: &rest.Config{Host: "https://127.0.0.1:1"}, Cluster: checks.ClusterInfo{Server: "https://127.0.0.1:1", Context: "lab"}}
	live, lv := s.Run(context.Background())
	if live == nil || lv.Kind != Unreachable {
		t.Fatalf("live verdict %v (%v)", lv.Kind, lv.Err)
	}
	b, err := bundle.Open(c.Bundle)
	if err != nil {
		t.Fatal(err)
	}
	if b.Manifest.Format != bundle.FormatVersion || len(b.Manifest.Spec) == 0 || len(b.Manifest.Flags) != 0 || b.Manifest.Context != "lab" {
		t.Errorf("manifest: format %d, spec %d bytes, flags %v, context %q", b.Manifest.Format, len(b.Manifest.Spec), b.Manifest.Flags, b.Manifest.Context)
	}
	if _, ok := b.File(bundle.ValuesEntry); ok {
		t.Error("a format-2 bundle keeps values.yaml: the spec has the values")
	}
	spec, err := BundleSpec(b)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Replay(b, spec, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	rep, rv := (&Session{Config: cfg}).Run(context.Background())
	if rep == nil || rv.Kind != lv.Kind || rep.Cluster != live.Cluster || len(rep.Outcomes) != len(live.Outcomes) {
		t.Fatalf("replay: %v (%v), cluster %+v, %d outcomes; live %+v, %d", rv.Kind, rv.Err, rep.Cluster, len(rep.Outcomes), live.Cluster, len(live.Outcomes))
	}
	for i, o := range rep.Outcomes {
		if l := live.Outcomes[i]; o.ID != l.ID || o.Status != l.Status || o.Message != l.Message {
			t.Errorf("%s: replay %s %q, live %s %q", o.ID, o.Status, o.Message, l.Status, l.Message)
		}
	}
}

// sortedIDs returns the IDs of cs, in their order.
func sortedIDs(cs []checks.Check) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// goldenConfig is the run testdata/spec-v1.json records: sampleConfig as an
// --upgrade run with every input the spec holds set.
func goldenConfig(t *testing.T) *Config {
	t.Helper()
	c := sampleConfig(t)
	only, skip := []string{"upgrade-path", "cluster-admin"}, []string{"helm-version"}
	sel, err := c.Registry.Select(checks.ModeUpgrade, only, skip)
	if err != nil {
		t.Fatal(err)
	}
	c.Mode, c.Selected, c.Selection = checks.ModeUpgrade, sel, Selection{Only: only, Skip: skip}
	c.Upgrade = chart.UpgradeValues{Reuse: true}
	c.HelmWait = checks.HelmWaitOff
	c.Images = checks.ImageOptions{Mirror: "mirror.example.com/gitops", RegistryCheck: true}
	c.ArgoCD = ArgoCD{App: "argocd/runtime", Sources: map[string]string{"values": "/src/values"}}
	c.Installer = &checks.Identity{User: "system:serviceaccount:argocd:argocd-application-controller",
		Groups: []string{"system:authenticated", "system:serviceaccounts", "system:serviceaccounts:argocd"}}
	c.Inputs.ArgoCDVersionRange = ">=2.12"
	c.Output = Output{Format: "json", NoColor: true}
	return c
}

// TestSpecVersion1: a spec of version 1, as a plugin of that version
// recorded it (testdata/spec-v1.json), replays every input it holds; and a
// run records that same JSON (the shape of a version does not change:
// another shape is another SpecVersion).
func TestSpecVersion1(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "spec-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := decodeSpec(raw)
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromSpec(s, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	want := goldenConfig(t)
	if got.Mode != checks.ModeUpgrade || !slices.Equal(sortedIDs(got.Selected), sortedIDs(want.Selected)) ||
		!slices.Equal(got.Selection.Only, want.Selection.Only) || !slices.Equal(got.Selection.Skip, want.Selection.Skip) ||
		!got.FailOnWarn || got.Timeout != 2*time.Minute || got.Upgrade != want.Upgrade || got.HelmMajor != 4 || got.HelmWait != checks.HelmWaitOff {
		t.Errorf("run %+v", got)
	}
	if !reflect.DeepEqual(got.Probes, want.Probes) || got.Probe.Timeout != 20*time.Second || !slices.Equal(got.Probe.ConnectTo, want.Probes.ConnectTo) {
		t.Errorf("probes %+v, prober %+v", got.Probes, got.Probe)
	}
	if got.Output != want.Output || got.Images != want.Images || !reflect.DeepEqual(got.ArgoCD, want.ArgoCD) || !reflect.DeepEqual(got.Installer, want.Installer) || got.InCluster {
		t.Errorf("output %+v, images %+v, Argo CD %+v, installer %+v", got.Output, got.Images, got.ArgoCD, got.Installer)
	}
	if len(got.Waivers) != 1 || got.Waivers[0].File != "team.yaml" || got.Waivers[0].Check != "values" {
		t.Errorf("waivers %+v", got.Waivers)
	}
	in := got.Inputs
	if in.RuntimeName != "rt-1" || in.Namespace != "team-a" || !in.NamespaceExplicit || in.ReleaseName != "rel" || in.Chart != "./chart" ||
		in.IngressHost != "rt.example.com" || in.AccessMode != plan.AccessIngress || !in.HasValues() || in.ArgoCDVersionRange != ">=2.12" ||
		in.RuntimeNameSource.Flag != "--runtime-name rt-1" || in.Sources.Len() != want.Inputs.Sources.Len() {
		t.Errorf("plan %+v", in)
	}
	if in.UserToken.Reveal() == "s3cr3t-token" {
		t.Error("the replayed plan has the token")
	}

	recorded, err := json.Marshal(SpecOf(want))
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(recorded, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the run records\n%s\nnot the spec of version %d in testdata/spec-v1.json", recorded, SpecVersion)
	}
}
