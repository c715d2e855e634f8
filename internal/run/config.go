package run

import (
	"io"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// Config is one run's inputs, every one typed: what the command's flags
// (internal/cli) compile to. Each input is one typed value (chart.
// UpgradeValues, checks.ImageOptions, checks.Identity, ProbeOptions,
// Output, ...): a bundle records it as it is (Spec) and the checks see it
// through checks.Env (newEnv).
type Config struct {
	// Mode is pre-install, --post or --upgrade.
	Mode checks.Mode
	// Upgrade are `helm upgrade`'s values flags of an --upgrade run
	// (--reuse-values, --reset-values, --reset-then-reuse-values).
	Upgrade chart.UpgradeValues
	// ArgoCD names the runtime's Argo CD Application (--argocd-app).
	ArgoCD ArgoCD
	// HelmMajor is the Helm major version (3 or 4) that will run helm
	// install or helm upgrade (--helm-major); 0 means the client found.
	HelmMajor int
	// HelmWait is whether helm install or helm upgrade will run with
	// --wait (--helm-wait); checks.HelmWaitUnknown when not told.
	HelmWait checks.HelmWait
	// Registry is the catalogue; --fix looks the fixed checks up in it.
	Registry *checks.Registry
	// Selected are the checks to run, in catalogue order, as Selection
	// chose them.
	Selected []checks.Check
	// Selection is how the checks were chosen: a replay in another mode
	// chooses again by it.
	Selection Selection
	// Inputs is the planned install (internal/plan).
	Inputs checks.Inputs
	// Chart loads and renders the chart; nil when no selected check reads
	// it (NeedsChart).
	Chart *chart.Loader
	// Host is what the checks read beyond the cluster: the environment
	// (HELM_BIN, PATH for helm-version), the programs they find and run
	// (nil: the checks' defaults) and the network prober (--connect-to,
	// --ca-file, proxies; compiled from Probes). A bundle records what
	// they answer; a replay answers from it.
	checks.Host
	// Probes are the network probes' settings (--connect-to,
	// --request-timeout): the prober of Host is compiled from them.
	Probes ProbeOptions
	// Images are the image checks' options (--registry-mirror,
	// --registry-check).
	Images checks.ImageOptions
	// Installer is who will run helm install or upgrade when it is not
	// the runner (--installer, --installer-group): cluster-admin judges
	// it through SubjectAccessReviews and the dry-run checks impersonate
	// it (checks.Env.InstallerConfig); nil means the runner's identity.
	Installer *checks.Identity
	// InCluster is a run from a pod of the cluster (--in-cluster): the
	// checks are checks.InClusterChecks' and the probes leave from the
	// pod network.
	InCluster bool
	// FailOnWarn makes warnings fail the run (--fail-on=warn).
	FailOnWarn bool
	// Wait re-runs failing checks until they pass or it elapses (--wait);
	// WaitInterval is the pause between rounds (default WaitInterval).
	Wait, WaitInterval time.Duration
	// Timeout bounds the run, plus Wait (--timeout): the caller's deadline
	// of a session, each member's of a fleet.
	Timeout time.Duration
	// Waivers are the accepted findings of --waivers (ParseWaivers), in file
	// order; nil without --waivers. A warn, fail or error a valid one covers
	// is reported as waived; every waiver's fate is in Report.Waivers.
	Waivers []Waiver
	// Fix is --fix and its options; the zero value fixes nothing.
	Fix Fix
	// Hooks report progress; each may be nil.
	Hooks Hooks
	// Output is how the command prints the report: run does not read it;
	// a bundle keeps it, so that a replay prints as the recorded run did.
	Output Output
	// Bundle, when set, is the file the run's recording is written to
	// (--bundle): everything it reads of the cluster, the host and the
	// network, redacted, with the spec of the run (SpecOf). Over a fleet,
	// one archive of each cluster's bundle.
	Bundle string
	// Replay, when set, is the bundle the run answers from (replay FILE;
	// see Replay): its clients, host reads and probes, and the clock of the
	// recorded run. A replay records nothing.
	Replay *bundle.Bundle
}

// Selection is how the checks were chosen: --only and --skip, as given.
type Selection struct {
	Only []string `json:"only,omitempty"`
	Skip []string `json:"skip,omitempty"`
}

// Fix is what --fix does after the checks ran.
type Fix struct {
	// Enabled plans fixes for the failed fixable checks (--fix).
	Enabled bool
	// Yes applies the plan without asking (--yes); DryRun sends every change
	// as a server-side dry run and changes nothing (--dry-run).
	Yes, DryRun bool
	// Options are the fix options the planners read (--crds, --tls-secret).
	Options checks.FixOptions
	// PlanOut receives the plan and the per-object results.
	PlanOut io.Writer
	// Confirm asks, on PlanOut, whether to apply the plan (when neither Yes
	// nor DryRun); nil declines.
	Confirm func(w io.Writer) (bool, error)
}

// Output is how the report is printed (-o, --no-color).
type Output struct {
	// Format is the output format's name ("table", "json", ...).
	Format string `json:"format"`
	// NoColor never colours the report.
	NoColor bool `json:"noColor,omitempty"`
}

// ProbeOptions are the network probes' settings a run records: the
// --connect-to rules, first match wins, and --request-timeout as it was
// given (0: not given, and the probes are bounded by probe.DefaultTimeout,
// a chart's pull by chart.DefaultTimeout). --ca-file is not among them: a
// replay dials nothing.
type ProbeOptions struct {
	ConnectTo      []probe.ConnectTo `json:"connectTo,omitempty"`
	RequestTimeout Duration          `json:"requestTimeout,omitempty"`
}

// Prober returns the prober of o, trusting the PEM certificates of caFile
// too (when not empty). The error is one line (probe.New's).
func (o ProbeOptions) Prober(caFile string) (*probe.Prober, error) {
	return probe.New(cmpOr(time.Duration(o.RequestTimeout), probe.DefaultTimeout), o.ConnectTo, caFile)
}

// Hooks are the run's progress callbacks (a progress line on a terminal).
type Hooks struct {
	// Round is called before each round of checks with their number; it
	// returns the runner options of that round (OnStart, OnDone) and a
	// function called when the round ends.
	Round func(total int) (checks.RunOptions, func())
	// Waiting is told, between --wait rounds, which checks are still
	// waiting and how long is left; it is called with nil once waiting ends.
	Waiting func(waiting []string, left time.Duration)
}

// NeedsChart reports whether a check of selected reads the rendered chart
// (Meta.ReadsChart): only then is the chart loaded.
func NeedsChart(selected []checks.Check) bool {
	for _, c := range selected {
		if c.ReadsChart {
			return true
		}
	}
	return false
}

// NeedsIgnoredValues reports whether a check of selected reads which of
// the user's values the chart ignores (Meta.ReadsIgnoredValues): only then
// does the run start deciding it beside its render.
func NeedsIgnoredValues(selected []checks.Check) bool {
	for _, c := range selected {
		if c.ReadsIgnoredValues {
			return true
		}
	}
	return false
}

// ArgoCD is how the run finds the Argo CD Application that manages the
// runtime (docs/argocd.md). A bundle's spec records its fields beside the
// others ("argoCDApp", ...).
type ArgoCD struct {
	// App is --argocd-app, "namespace/name"; "" means: detected
	// (argocd.ManagingApplication).
	App string `json:"argoCDApp,omitempty"`
	// Undetected, without App, looks for no Application: the replay of a
	// bundle whose plugin did not look (format 1).
	Undetected bool `json:"argoCDUndetected,omitempty"`
	// Sources are checkouts of the Application's sources by their ref
	// (--argocd-source REF=DIR, absolute directories): where a value file
	// "$REF/PATH" is read; a replay reads them again where they are.
	Sources map[string]string `json:"argoCDSources,omitempty"`
}

// ChartLoader returns the loader of src for c (nil when no chart is used:
// src names none, the run is --post, or no selected check reads the
// chart).
func ChartLoader(c *Config, src chart.Source) *chart.Loader {
	if src.Ref == "" || c.Mode == checks.ModePost || !NeedsChart(c.Selected) {
		return nil
	}
	return chart.NewLoader(src)
}

// cmpOr is d, or def when d is not positive.
func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
