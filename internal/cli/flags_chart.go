package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// chartFlags are the chart the run renders (--chart, --chart-version, as
// helm install takes them), helm upgrade's values flags, the Helm major
// version that will install or upgrade and whether it waits (--helm-wait).
type chartFlags struct {
	ref, version string
	// upgrade are helm upgrade's values flags, as run.Config takes them.
	upgrade   chart.UpgradeValues
	helmMajor int
	helmWait  optionalBool
}

// optionalBool is a boolean flag that may be left unset: "" (not given),
// "true" or "false"; the flag alone is "true".
type optionalBool string

func (b *optionalBool) String() string { return string(*b) }

// Set takes what strconv.ParseBool takes.
func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true or false")
	}
	*b = optionalBool(strconv.FormatBool(v))
	return nil
}

// Type is "bool": the help shows the flag alone, as a boolean's.
func (b *optionalBool) Type() string { return "bool" }

func newChartFlags() *chartFlags {
	return &chartFlags{ref: plan.DefaultChart}
}

// AddFlags declares the chart flags on fs.
func (f *chartFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.ref, "chart", f.ref, "the gitops-runtime chart to render, as helm install takes it: directory, .tgz, oci:// reference or repo/name")
	describe(fs, "chart", placement{sectionPlan, 4}, recorded)
	replayable(fs, "chart", "the chart to render (default: the recorded run's, from the bundle)")
	fs.StringVar(&f.version, "chart-version", "", "chart version constraint (helm --version; default: the latest)")
	describe(fs, "chart-version", placement{sectionPlan, 5}, recorded)
	replayable(fs, "chart-version", "chart version constraint, with --chart")
	fs.BoolVar(&f.upgrade.Reuse, "reuse-values", false, "with --upgrade: as helm upgrade --reuse-values")
	fs.BoolVar(&f.upgrade.Reset, "reset-values", false, "with --upgrade: as helm upgrade --reset-values")
	fs.BoolVar(&f.upgrade.ResetThenReuse, "reset-then-reuse-values", false, "with --upgrade: as helm upgrade --reset-then-reuse-values")
	fs.IntVar(&f.helmMajor, "helm-major", 0, "the Helm major version (3 or 4) that will run helm install or helm upgrade: Helm 4 applies server-side (default: the helm client found)")
	fs.Var(&f.helmWait, "helm-wait", "whether helm install or upgrade will run with --wait (the installation guide's command does): true judges runtime pods the cluster refuses as failing the install after Helm's --timeout (install-fails), false as Helm reporting success without them (runtime-breaks); unset, the message says both")
	fs.Lookup("helm-wait").NoOptDefVal = "true"
	replayable(fs, "helm-wait", "whether helm install or upgrade will run with --wait, judging the recorded refusals again (default: the recorded run's)")
	for i, n := range []string{"reuse-values", "reset-values", "reset-then-reuse-values", "helm-major", "helm-wait"} {
		describe(fs, n, placement{sectionPlan, 13 + i}, recorded)
	}
}

// helmWaitState is what --helm-wait says: on, off or, not given, unknown.
func (f *chartFlags) helmWaitState() checks.HelmWait {
	switch f.helmWait {
	case "true":
		return checks.HelmWaitOn
	case "false":
		return checks.HelmWaitOff
	}
	return checks.HelmWaitUnknown
}

// upgradeValues reports whether one of helm upgrade's values flags is given.
func (f *chartFlags) upgradeValues() bool {
	return f.upgrade != chart.UpgradeValues{}
}

// Validate checks --helm-major.
func (f *chartFlags) Validate() error {
	if f.helmMajor != 0 && f.helmMajor != 3 && f.helmMajor != 4 {
		return usageError("--helm-major must be 3 or 4, not %d", f.helmMajor)
	}
	return nil
}

// ToConfig compiles the chart of the plan, helm upgrade's values flags, the
// Helm major version and the chart's loader: the chart of --chart and
// --chart-version, pulled with Helm's environment (HELM_* variables, set by
// Helm itself under `helm gitops-preflight`) through the --connect-to
// rules, bounded by --request-timeout (chart.DefaultTimeout when it is not
// given: 0). It reads the probes' settings and the prober (the connection
// flags compile first).
func (f *chartFlags) ToConfig(_ context.Context, c *run.Config) error {
	c.Inputs.Chart, c.Inputs.ChartVersion = f.ref, f.version
	c.Inputs.ChartVersionSource = plan.ChartVersionSourceOf(f.ref, f.version)
	c.Upgrade = f.upgrade
	c.HelmMajor = f.helmMajor
	c.HelmWait = f.helmWaitState()
	c.Chart = run.ChartLoader(c, chart.Source{Ref: f.ref, Version: f.version, Timeout: time.Duration(c.Probes.RequestTimeout), DialContext: c.Probe.DialContext})
	return nil
}
