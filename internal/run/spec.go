package run

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// SpecVersion is the version of the Spec this plugin records, and the
// newest it replays. Its JSON shape is the types' (their json tags):
// testdata/spec-v1.json is a run as version 1 records it, and a change of
// shape is a new version, with the older ones still replayed.
const SpecVersion = 1

// Spec is a run as it was compiled (a Config, the hooks aside), in the form
// a bundle keeps it (the "spec" of its manifest.json): the way Helm keeps a
// release's computed values, not the command line that produced them.
// Each input is recorded as the Config holds it, in its own type (its JSON
// names are on the type); FromSpec builds the Config of its replay. No
// field names a flag: the command that compiled the run may change its
// flags, a recorded run stays what it was.
type Spec struct {
	// Version is SpecVersion when recorded.
	Version int `json:"version"`
	// Mode is the run's mode: pre-install, post-install or upgrade
	// (checks.Mode.Phase).
	Mode string `json:"mode"`
	// Checks are the IDs of the selected checks, in catalogue order: the
	// checks a replay runs again. Selection ("only", "skip") is the
	// selection as it was asked, which a replay in another mode, or with
	// another selection given, selects by again.
	Checks []string `json:"checks"`
	Selection
	// FailOnWarn makes warnings fail the run.
	FailOnWarn bool `json:"failOnWarn,omitempty"`
	// Wait and Timeout are the run's --wait and --timeout, e.g. "5m0s".
	Wait    Duration `json:"wait,omitempty"`
	Timeout Duration `json:"timeout,omitempty"`
	// Upgrade are helm upgrade's values flags of an upgrade run.
	Upgrade chart.UpgradeValues `json:"upgrade,omitzero"`
	// HelmMajor is the Helm major version that would install or upgrade
	// (0: the client found).
	HelmMajor int `json:"helmMajor,omitempty"`
	// HelmWait is whether helm install or upgrade would run with --wait:
	// true or false; absent when the run was not told.
	HelmWait checks.HelmWait `json:"helmWait,omitzero"`
	// Plan is the planned install as it was given (plan.Given): its names,
	// the chart, the effective values (Helm's merge of -f and --set with
	// the shortcuts over it) and where each came from, redacted.
	Plan plan.Given `json:"plan"`
	// Probes are the network probes' settings.
	Probes ProbeOptions `json:"probes,omitzero"`
	// Waivers are the run's parsed waivers, named by the file the run was
	// given.
	Waivers []Waiver `json:"waivers,omitempty"`
	// Output is how the run printed its report: a replay prints so too.
	Output Output `json:"output"`
	// Images are the image checks' options (--registry-mirror,
	// --registry-check).
	Images checks.ImageOptions `json:"images,omitzero"`
	// ArgoCD is the Argo CD Application the run was told manages the
	// runtime ("argoCDApp"), the checkouts of its sources
	// ("argoCDSources"), and whether the run did not look for one
	// ("argoCDUndetected": a bundle of format 1, whose plugin did not).
	ArgoCD
	// Installer is who the run judged as the identity that installs (nil:
	// the runner's own).
	Installer *checks.Identity `json:"installer,omitempty"`
	// InCluster is a run from a pod of the cluster (the gate).
	InCluster bool `json:"inCluster,omitempty"`
}

// Duration is a time.Duration in a spec: its String form, "1m30s".
type Duration time.Duration

// MarshalJSON writes d as "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "1m30s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// SpecOf is the spec of the run c: what a bundle of it records. Its values
// and the flags its sources name are redacted as a bundle's (bundle.Values,
// bundle.Text).
func SpecOf(c *Config) Spec {
	given := c.Inputs.Given()
	given.Values, given.Sources = bundle.Values(given.Values), redactedSources(given.Sources)
	s := Spec{
		Version: SpecVersion, Mode: c.Mode.Phase(), Selection: c.Selection, FailOnWarn: c.FailOnWarn,
		Wait: Duration(c.Wait), Timeout: Duration(c.Timeout), Upgrade: c.Upgrade, HelmMajor: c.HelmMajor, HelmWait: c.HelmWait,
		Plan: given, Probes: c.Probes, Waivers: c.Waivers, Output: c.Output, Images: c.Images, ArgoCD: c.ArgoCD,
		Installer: c.Installer, InCluster: c.InCluster,
	}
	for _, chk := range c.Selected {
		s.Checks = append(s.Checks, chk.ID)
	}
	return s
}

// Overrides are what a replay's command line changes of the recorded run;
// the zero value changes nothing.
type Overrides struct {
	// Only and Skip, when set, select the checks again (--only, --skip).
	Only, Skip *[]string
	// FailOnWarn, when set, replaces --fail-on.
	FailOnWarn *bool
	// Waivers, when set, replace the recorded waivers (--waivers).
	Waivers *[]Waiver
	// Timeout, when positive, bounds the replay (--timeout).
	Timeout time.Duration
	// Upgrade judges an upgrade of the recorded release (--upgrade): the
	// mode is upgrade, and nothing waits.
	Upgrade bool
	// Chart, when its Ref is set, is the chart to render instead of the
	// recorded one (--chart, --chart-version): an upgrade to another chart.
	Chart ChartRef
	// HelmWait, when set, is whether Helm waits in place of the recorded
	// run's (--helm-wait): the refusals are judged again for it.
	HelmWait *checks.HelmWait
	// Format and NoColor, when set, print the report another way (-o,
	// --no-color).
	Format  string
	NoColor *bool
}

// ChartRef is a chart as helm install takes it, and its version.
type ChartRef struct {
	Ref, Version string
}

// FromSpec builds the config of a replay of the run s, changed by ov: the
// recorded checks, judged as they were, on the plan derived again from its
// recorded values (plan.Given.Install), the recorded waivers, the probes'
// rules (offline once bound to a bundle: Replay). Nothing is re-parsed from
// flags. The error is one line: a spec of a newer version, a mode or
// check the plugin does not know, a selection that does not apply.
func FromSpec(s Spec, ov Overrides) (*Config, error) {
	if s.Version > SpecVersion {
		return nil, fmt.Errorf("the recorded run is of spec version %d, newer than this plugin reads (%d): upgrade the plugin", s.Version, SpecVersion)
	}
	reg, err := checks.NewRegistry(checks.All())
	if err != nil {
		return nil, fmt.Errorf("internal error: %w", err)
	}
	c := &Config{
		Registry: reg, Selection: s.Selection, FailOnWarn: s.FailOnWarn, Wait: time.Duration(s.Wait), Timeout: time.Duration(s.Timeout),
		Upgrade: s.Upgrade, HelmMajor: s.HelmMajor, HelmWait: s.HelmWait, Probes: s.Probes, Waivers: s.Waivers, Output: s.Output,
		Images: s.Images, ArgoCD: s.ArgoCD, Installer: s.Installer, InCluster: s.InCluster,
	}
	if c.Mode, err = modeOf(s.Mode); err != nil {
		return nil, err
	}
	overrideRun(c, ov)
	if c.Selected, err = selected(c, s.Checks, s.Mode, ov); err != nil {
		return nil, err
	}
	given := s.Plan
	if ov.Chart.Ref != "" {
		// replay --chart: the chart, and where its version is written, are
		// the new chart's.
		given.Chart, given.ChartVersion = ov.Chart.Ref, ov.Chart.Version
		given.Sources.ChartVersion = plan.ChartVersionSourceOf(given.Chart, given.ChartVersion)
	}
	if c.Inputs, err = given.Install(); err != nil {
		return nil, err
	}
	if c.Probe, err = c.Probes.Prober(""); err != nil {
		return nil, err
	}
	c.Chart = ChartLoader(c, chart.Source{Ref: given.Chart, Version: given.ChartVersion, Timeout: time.Duration(c.Probes.RequestTimeout), DialContext: c.Probe.DialContext})
	return c, nil
}

// overrideRun applies the overrides that change how the run is judged,
// bounded and printed.
func overrideRun(c *Config, ov Overrides) {
	if ov.FailOnWarn != nil {
		c.FailOnWarn = *ov.FailOnWarn
	}
	if ov.Waivers != nil {
		c.Waivers = *ov.Waivers
	}
	if ov.Timeout > 0 {
		c.Timeout = ov.Timeout
	}
	if ov.Upgrade {
		c.Mode, c.Wait = checks.ModeUpgrade, 0
	}
	if ov.Only != nil {
		c.Selection.Only = *ov.Only
	}
	if ov.Skip != nil {
		c.Selection.Skip = *ov.Skip
	}
	if ov.HelmWait != nil {
		c.HelmWait = *ov.HelmWait
	}
	if ov.Format != "" {
		c.Output.Format = ov.Format
	}
	if ov.NoColor != nil {
		c.Output.NoColor = *ov.NoColor
	}
}

// selected are the checks of the replay: the recorded ones, unless the
// replay runs in another mode than recorded (phase) or selects again.
func selected(c *Config, ids []string, phase string, ov Overrides) ([]checks.Check, error) {
	if c.Mode.Phase() != phase || ov.Only != nil || ov.Skip != nil {
		return c.Registry.Select(c.Mode, c.Selection.Only, c.Selection.Skip)
	}
	out := make([]checks.Check, 0, len(ids))
	for _, id := range ids {
		chk, ok := c.Registry.Get(id)
		if !ok {
			return nil, fmt.Errorf("the recorded run ran check %q, which this plugin does not have", id)
		}
		out = append(out, chk)
	}
	return out, nil
}

// modeOf is the mode of a phase ("pre-install", "post-install", "upgrade").
func modeOf(phase string) (checks.Mode, error) {
	for _, m := range []checks.Mode{checks.ModePre, checks.ModePost, checks.ModeUpgrade} {
		if m.Phase() == phase {
			return m, nil
		}
	}
	return 0, fmt.Errorf("the recorded run's mode %q is none this plugin knows (%s)", phase,
		strings.Join([]string{checks.ModePre.Phase(), checks.ModePost.Phase(), checks.ModeUpgrade.Phase()}, ", "))
}

// redactedSources is x with the flags that set values redacted as a
// bundle's text (a --set of a token names the key, never the value).
func redactedSources(x plan.SourceIndex) plan.SourceIndex {
	for i := range x.Values {
		x.Values[i].Source.Flag = bundle.Text(x.Values[i].Source.Flag)
	}
	x.RuntimeName.Flag, x.ChartVersion.Flag = bundle.Text(x.RuntimeName.Flag), bundle.Text(x.ChartVersion.Flag)
	return x
}
