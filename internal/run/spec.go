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
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// SpecVersion is the version of the Spec this plugin records, and the
// newest it replays.
const SpecVersion = 1

// Spec is a run as it was compiled (a Config, the hooks aside), in the form
// a bundle keeps it (the "spec" of its manifest.json): the way Helm keeps a
// release's computed values, not the command line that produced them.
// FromSpec builds the Config of its replay. No field names a flag: the
// command that compiled the run may change its flags, a recorded run stays
// what it was.
type Spec struct {
	// Version is SpecVersion when recorded.
	Version int `json:"version"`
	// Mode is the run's mode: pre-install, post-install or upgrade
	// (checks.Mode.Phase).
	Mode string `json:"mode"`
	// Checks are the IDs of the selected checks, in catalogue order: the
	// checks a replay runs again. Only and Skip are the selection as it
	// was asked, which a replay in another mode, or with another selection
	// given, selects by again.
	Checks []string `json:"checks"`
	Only   []string `json:"only,omitempty"`
	Skip   []string `json:"skip,omitempty"`
	// FailOnWarn makes warnings fail the run.
	FailOnWarn bool `json:"failOnWarn,omitempty"`
	// Wait and Timeout are the run's --wait and --timeout, e.g. "5m0s".
	Wait    Duration `json:"wait,omitempty"`
	Timeout Duration `json:"timeout,omitempty"`
	// Upgrade are helm upgrade's values flags of an upgrade run.
	Upgrade UpgradeSpec `json:"upgrade,omitzero"`
	// HelmMajor is the Helm major version that would install or upgrade
	// (0: the client found).
	HelmMajor int `json:"helmMajor,omitempty"`
	// HelmWait is whether helm install or upgrade would run with --wait:
	// true or false; absent when the run was not told.
	HelmWait *bool `json:"helmWait,omitempty"`
	// Plan is the planned install, with its values.
	Plan PlanSpec `json:"plan"`
	// Probes are the network probes' settings.
	Probes ProbeSpec `json:"probes,omitzero"`
	// Waivers are the run's parsed waivers, named by the file the run was
	// given.
	Waivers []Waiver `json:"waivers,omitempty"`
	// Output is how the run printed its report: a replay prints so too.
	Output OutputSpec `json:"output"`
	// Images are the image checks' options (--registry-mirror,
	// --registry-check).
	Images ImagesSpec `json:"images,omitzero"`
	// ArgoCDApp is the Argo CD Application the run was told manages the
	// runtime ("namespace/name"; "" = detected).
	ArgoCDApp string `json:"argoCDApp,omitempty"`
	// ArgoCDSources are the checkouts of the Application's sources by ref
	// (--argocd-source): a replay reads them again where they are.
	ArgoCDSources map[string]string `json:"argoCDSources,omitempty"`
	// Installer is who the run judged as the identity that installs (nil:
	// the runner's own).
	Installer *IdentitySpec `json:"installer,omitempty"`
	// InCluster is a run from a pod of the cluster (the gate).
	InCluster bool `json:"inCluster,omitempty"`
	// ArgoCDUndetected is a run that did not look for the Argo CD
	// Application that syncs the runtime (a bundle of format 1, whose
	// plugin did not): its replay does not either.
	ArgoCDUndetected bool `json:"argoCDUndetected,omitempty"`
}

// ImagesSpec are the image checks' options (checks.ImageOptions).
type ImagesSpec struct {
	Mirror        string `json:"mirror,omitempty"`
	RegistryCheck bool   `json:"registryCheck,omitempty"`
}

// IdentitySpec is an identity (checks.Identity): a user name and groups.
type IdentitySpec struct {
	User   string   `json:"user"`
	Groups []string `json:"groups,omitempty"`
}

// UpgradeSpec are helm upgrade's values flags (chart.UpgradeValues).
type UpgradeSpec struct {
	ReuseValues          bool `json:"reuseValues,omitempty"`
	ResetValues          bool `json:"resetValues,omitempty"`
	ResetThenReuseValues bool `json:"resetThenReuseValues,omitempty"`
}

// PlanSpec is the planned install as a replay derives it again
// (plan.Replayed): its names, the chart, the effective values (Helm's merge
// of -f and --set with the shortcuts over it), redacted, and whether the
// run was given values (-f, --set) or only shortcuts.
type PlanSpec struct {
	RuntimeName        string         `json:"runtimeName"`
	Namespace          string         `json:"namespace"`
	NamespaceExplicit  bool           `json:"namespaceExplicit,omitempty"`
	ReleaseName        string         `json:"releaseName"`
	Chart              string         `json:"chart,omitempty"`
	ChartVersion       string         `json:"chartVersion,omitempty"`
	Values             map[string]any `json:"values,omitempty"`
	ValuesGiven        bool           `json:"valuesGiven,omitempty"`
	ArgoCDVersionRange string         `json:"argoCDVersionRange,omitempty"`
	// Sources say where each value came from (a values file's line, a
	// flag, redacted): a replay anchors its findings where the run did.
	Sources plan.SourceIndex `json:"sources,omitzero"`
	// shortcuts apply over Values as the run applied them; a spec read
	// from a format-1 bundle's flags has them (its values were recorded
	// without the shortcuts given alone), a recorded spec never.
	shortcuts plan.Shortcuts
}

// ProbeSpec are the network probes' settings: the --connect-to rules
// (HOST:PORT:ADDR:PORT) and --request-timeout ("" when not given).
type ProbeSpec struct {
	ConnectTo      []string `json:"connectTo,omitempty"`
	RequestTimeout Duration `json:"requestTimeout,omitempty"`
}

// OutputSpec is how the report is printed (Output).
type OutputSpec struct {
	Format  string `json:"format"`
	NoColor bool   `json:"noColor,omitempty"`
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
// are redacted as a bundle's (bundle.Values).
func SpecOf(c *Config) Spec {
	s := Spec{
		Version: SpecVersion, Mode: c.Mode.Phase(), Only: c.Selection.Only, Skip: c.Selection.Skip,
		FailOnWarn: c.FailOnWarn, Wait: Duration(c.Wait), Timeout: Duration(c.Timeout),
		Upgrade:   UpgradeSpec{ReuseValues: c.Upgrade.Reuse, ResetValues: c.Upgrade.Reset, ResetThenReuseValues: c.Upgrade.ResetThenReuse},
		HelmMajor: c.HelmMajor, Waivers: c.Waivers,
		Output:    OutputSpec{Format: c.Output.Format, NoColor: c.Output.NoColor},
		Images:    ImagesSpec{Mirror: c.Images.Mirror, RegistryCheck: c.Images.RegistryCheck},
		ArgoCDApp: c.ArgoCD.App, ArgoCDUndetected: c.ArgoCD.Undetected, InCluster: c.InCluster, ArgoCDSources: c.ArgoCD.Sources,
	}
	if id := c.Installer; id != nil {
		s.Installer = &IdentitySpec{User: id.User, Groups: id.Groups}
	}
	if c.HelmWait != checks.HelmWaitUnknown {
		on := c.HelmWait == checks.HelmWaitOn
		s.HelmWait = &on
	}
	for _, chk := range c.Selected {
		s.Checks = append(s.Checks, chk.ID)
	}
	in := c.Inputs
	s.Plan = PlanSpec{
		RuntimeName: in.RuntimeName, Namespace: in.Namespace, NamespaceExplicit: in.NamespaceExplicit,
		ReleaseName: in.ReleaseName, Chart: in.Chart, ChartVersion: in.ChartVersion,
		Values: bundle.Values(in.RenderValues), ValuesGiven: in.Values != nil, ArgoCDVersionRange: in.ArgoCDVersionRange,
		Sources: redactedSources(in.SourceIndex()),
	}
	if p := c.Probe; p != nil {
		for _, r := range p.ConnectTo {
			s.Probes.ConnectTo = append(s.Probes.ConnectTo, r.String())
		}
		// The chart's loader has --request-timeout as it was given (0 when
		// it was not); without one, the probes' bound says it unless it is
		// their default.
		switch {
		case c.Chart != nil:
			s.Probes.RequestTimeout = Duration(c.Chart.Source().Timeout)
		case p.Timeout != probe.DefaultTimeout:
			s.Probes.RequestTimeout = Duration(p.Timeout)
		}
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
// recorded values (plan.Replayed), the recorded waivers, the probes' rules
// (offline once bound to a bundle: Replay). Nothing is re-parsed from
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
	c := &Config{Registry: reg, FailOnWarn: s.FailOnWarn, Wait: time.Duration(s.Wait), Timeout: time.Duration(s.Timeout),
		HelmMajor: s.HelmMajor, Waivers: s.Waivers, Selection: Selection{Only: s.Only, Skip: s.Skip},
		Upgrade: chart.UpgradeValues{Reuse: s.Upgrade.ReuseValues, Reset: s.Upgrade.ResetValues, ResetThenReuse: s.Upgrade.ResetThenReuseValues},
		Output:  Output{Format: s.Output.Format, NoColor: s.Output.NoColor},
		Images:  checks.ImageOptions{Mirror: s.Images.Mirror, RegistryCheck: s.Images.RegistryCheck},
		ArgoCD:  ArgoCD{App: s.ArgoCDApp, Undetected: s.ArgoCDUndetected, Sources: s.ArgoCDSources}, InCluster: s.InCluster}
	if id := s.Installer; id != nil {
		c.Installer = &checks.Identity{User: id.User, Groups: id.Groups}
	}
	c.HelmWait = helmWaitOf(s.HelmWait)
	if c.Mode, err = modeOf(s.Mode); err != nil {
		return nil, err
	}
	overrideRun(c, ov)
	if c.Selected, err = selected(c, s.Checks, s.Mode, ov); err != nil {
		return nil, err
	}
	p := s.Plan
	if ov.Chart.Ref != "" {
		p.Chart, p.ChartVersion = ov.Chart.Ref, ov.Chart.Version
	}
	c.Inputs, err = plan.Replayed(plan.Flags{RuntimeName: p.RuntimeName, Namespace: p.Namespace, NamespaceExplicit: p.NamespaceExplicit,
		ReleaseName: p.ReleaseName, Chart: p.Chart, ChartVersion: p.ChartVersion, Shortcuts: p.shortcuts}, p.Values, p.ValuesGiven)
	if err != nil {
		return nil, err
	}
	c.Inputs.ArgoCDVersionRange = p.ArgoCDVersionRange
	idx := p.Sources
	if ov.Chart.Ref != "" {
		// replay --chart: the version is the new chart's.
		idx.ChartVersion = plan.ChartVersionSourceOf(p.Chart, p.ChartVersion)
	}
	c.Inputs = c.Inputs.WithSourceIndex(idx)
	var rules []probe.ConnectTo
	for _, r := range s.Probes.ConnectTo {
		rule, err := probe.ParseConnectTo(r)
		if err != nil {
			return nil, err
		}
		rules = append(rules, rule)
	}
	timeout := time.Duration(s.Probes.RequestTimeout)
	if c.Probe, err = probe.New(cmpOr(timeout, probe.DefaultTimeout), rules, ""); err != nil {
		return nil, err
	}
	c.Chart = ChartLoader(c, chart.Source{Ref: p.Chart, Version: p.ChartVersion, Timeout: timeout, DialContext: c.Probe.DialContext})
	return c, nil
}

// helmWaitOf is the HelmWait a spec's helmWait says: on (true), off
// (false) or unknown (absent).
func helmWaitOf(b *bool) checks.HelmWait {
	switch {
	case b == nil:
		return checks.HelmWaitUnknown
	case *b:
		return checks.HelmWaitOn
	}
	return checks.HelmWaitOff
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

// cmpOr is d, or def when d is not positive.
func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
