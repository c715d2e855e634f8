package run

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log"

	rspb "helm.sh/helm/v3/pkg/release"
	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/argocd"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// Session is a Config bound to one cluster: how to reach it (REST, or the
// bundle of Config.Replay), its clients (one set per cluster, never
// shared) and how the report names it.
type Session struct {
	Config *Config
	// REST reaches the cluster: the kubeconfig context's (its exec
	// credentials resolved). A replay answers from Config.Replay instead.
	REST *rest.Config
	// Cluster names the cluster in the report (context and server; a
	// replay's are the recorded run's); Run adds the server's version.
	Cluster checks.ClusterInfo
	// Clients are the session's clients: built by Run (recording when
	// Config.Bundle is set), or given instead of REST. They count the
	// run's API requests.
	Clients *cluster.Clients
}

// Run runs the session: the selected checks on a fresh snapshot of the
// cluster, again for the failing ones while Config.Wait allows, then --fix;
// the outcomes a valid waiver covers are waived, and Report.Waivers says
// what became of each waiver. With Config.Bundle, it writes the bundle of
// the run.
// It returns the report and its verdict. The report is nil when the
// clients could not be built (NotChecked) or --fix could not finish (its
// plan or results could not be written, or the confirmation could not be
// read): the verdict says why. A bundle that could not be written makes the
// verdict at least Failed (Verdict.Unrecorded).
func (s *Session) Run(ctx context.Context) (*checks.Report, Verdict) {
	report, v, bundleErr := s.run(ctx, s.Config.Bundle)
	return report, v.Unrecorded(bundleErr)
}

// run is Run recording the run to the bundle path ("" for none); the
// bundle's error is apart from the verdict.
func (s *Session) run(ctx context.Context, path string) (*checks.Report, Verdict, error) {
	started := bundle.Now()
	var rec *bundle.Recorder
	if path != "" && s.Config.Replay == nil {
		rec = bundle.NewRecorder()
	}
	if err := s.connect(rec); err != nil {
		return nil, Verdict{Kind: NotChecked, Err: err}, nil
	}
	report, v := s.check(ctx, rec)
	if rec == nil || report == nil {
		return report, v, nil
	}
	return report, v, record(ctx, s.Config, rec, path, started, report)
}

// connect builds the session's clients, unless given: from the replayed
// bundle, or from REST, its transport recorded into rec when set.
func (s *Session) connect(rec *bundle.Recorder) error {
	if s.Clients != nil {
		return nil
	}
	cfg := s.REST
	if b := s.Config.Replay; b != nil {
		cfg = b.RESTConfig()
		s.Cluster.Context = cmp.Or(s.Cluster.Context, b.Manifest.Context)
	}
	if cfg == nil {
		return errors.New("internal error: a session with no cluster to reach")
	}
	if rec != nil {
		cfg = rest.CopyConfig(cfg)
		cfg.Wrap(rec.Wrap)
	}
	clients, err := cluster.NewClients(cfg)
	if err != nil {
		return err
	}
	s.Clients = clients
	s.Cluster.Server = cmp.Or(s.Cluster.Server, cfg.Host)
	return nil
}

// check runs the checks of the session, rec recording its host reads and
// probes when set.
func (s *Session) check(ctx context.Context, rec *bundle.Recorder) (*checks.Report, Verdict) {
	c := withBundle(s.Config, rec)
	var snap *cluster.Snapshot
	var env *checks.Env // the last round's, which --fix plans with
	interval := c.WaitInterval
	if interval <= 0 {
		interval = WaitInterval
	}
	w := waiter{wait: c.Wait, interval: interval, now: timeNow, progress: c.Hooks.Waiting}
	outcomes := w.run(ctx, c.Selected, func(ctx context.Context, cs []checks.Check) []checks.Outcome {
		snap = cluster.NewSnapshot(ctx, s.Clients) // each round reads the cluster afresh
		if c.Mode == checks.ModePost || c.InCluster {
			// Rights in the runtime namespace are enough after the install,
			// and for the gate, whose Secrets are readable there alone
			// (deploy/rbac's read tier).
			snap.SetNamespaceFallback(c.Inputs.Namespace)
		}
		if c.Mode == checks.ModeUpgrade {
			// upgrade-apply's three-way merges read the release's objects
			// whole: the other checks' lists of those kinds are the same
			// lists (each kind listed once).
			snap.SetWholeLists()
		}
		if rec != nil && c.Mode == checks.ModePost && s.Clients.Kube != nil {
			// The chart's validation hook Jobs, their pods' logs and events,
			// kept for the bundle as soon as the run sees them (Kubernetes
			// deletes a failed hook Job and its pod after its TTL), read
			// beside the checks so that they wait for nothing.
			hooksDone := make(chan struct{})
			go func() {
				defer close(hooksDone)
				rec.RecordHooks(ctx, s.Clients.Kube, c.Inputs.Namespace, plan.ValidationJobs())
			}()
			defer func() { <-hooksDone }()
		}
		env = newEnv(c, snap, startRender(ctx, c, snap))
		opts, done := checks.RunOptions{}, func() {}
		if c.Hooks.Round != nil {
			opts, done = c.Hooks.Round(len(cs))
		}
		// A check is bounded by the run's --timeout, not by a shorter
		// bound of its own: on a slow API server (or a loaded CI runner)
		// a check that takes longer is still right, and the run ends at
		// --timeout either way.
		opts.CheckTimeout = c.Timeout
		defer done()
		// Waived outcomes are not failures: --wait does not wait for them.
		out, _ := applyWaivers(checks.Run(ctx, env, cs, opts), c.Waivers, s.Cluster.Context, c.Inputs.Namespace, timeNow())
		return out
	})

	report := &checks.Report{Mode: c.Mode, Outcomes: outcomes, Cluster: s.Cluster}
	interrupted := Interruption(ctx)
	fixFailed := false
	if c.Fix.Enabled && !report.Unreachable() && interrupted == nil {
		var err error
		if report.Outcomes, fixFailed, err = s.fix(ctx, env, report.Outcomes); err != nil {
			return nil, Verdict{Kind: Failed, Err: err}
		}
	}
	report.Outcomes, report.Waivers = applyWaivers(report.Outcomes, c.Waivers, s.Cluster.Context, c.Inputs.Namespace, timeNow())
	if v, err := snap.ServerVersion(); err == nil {
		report.Cluster.Version = v.GitVersion
	}
	if c.Mode == checks.ModeUpgrade {
		report.Upgrade = upgradeInfo(c.Inputs, snap, env)
	}
	return report, decide(report, c.Inputs.Namespace, c.FailOnWarn, fixFailed, interrupted)
}

// newEnv is what the checks of a round of c see: the run's inputs, each as
// c holds it, the round's snapshot and the chart's rendering (nil: none).
func newEnv(c *Config, snap *cluster.Snapshot, rendering *chart.Pending) *checks.Env {
	return &checks.Env{
		Inputs: c.Inputs, Mode: c.Mode, HelmMajor: c.HelmMajor, HelmWait: c.HelmWait, Installer: c.Installer, InCluster: c.InCluster,
		Fix: c.Fix.Options, Images: c.Images, ArgoCDApp: c.ArgoCD.App, ArgoCDUndetected: c.ArgoCD.Undetected,
		Cluster: snap, Host: c.Host, Chart: rendering,
	}
}

// startRender starts loading and rendering the chart in the background,
// concurrently with the checks' cluster reads; the capabilities come from
// the snapshot's /version and discovery document (shared with
// helm-ownership). It returns nil when no chart is used.
func startRender(ctx context.Context, c *Config, snap *cluster.Snapshot) *chart.Pending {
	loader, in := c.Chart, c.Inputs
	if loader == nil {
		return nil
	}
	// Helm's value coalescing logs chart warnings through the standard
	// logger ("destination for ... is a table"); they are the chart's, not
	// the user's, and would interleave with the report.
	log.SetOutput(io.Discard)
	caps := func() (chart.Capabilities, error) {
		v, err := snap.ServerVersion()
		if err != nil {
			return chart.Capabilities{}, err
		}
		api, err := snap.APIResources()
		if err != nil {
			return chart.Capabilities{}, err
		}
		vs, err := chart.APIVersions(api.Groups, api.Resources)
		if err != nil {
			return chart.Capabilities{}, err
		}
		return chart.Capabilities{KubeVersion: v.GitVersion, APIVersions: vs}, nil
	}
	if c.Mode == checks.ModeUpgrade {
		return chart.StartUpgradeOrSync(ctx, loader, in.ReleaseName, in.Namespace, in.RenderValues, c.Upgrade, func() ([]*rspb.Release, error) {
			return snap.HelmHistory(in.Namespace, in.ReleaseName)
		}, func() (*argocd.SyncBase, error) {
			// A runtime Argo CD syncs is upgraded by a commit: the base is
			// what Argo CD deployed, not the Helm release record.
			if c.ArgoCD.Undetected && c.ArgoCD.App == "" {
				return nil, nil
			}
			base, err := argocd.ReadSyncBase(snap, in.Namespace, c.ArgoCD.App)
			if base != nil {
				base.SetCheckouts(c.ArgoCD.Sources, loader.Source().Ref)
			}
			return base, err
		}, caps)
	}
	// chart-renders says which of the user's values the chart ignores:
	// deciding that starts beside the render.
	var judge func(key []string) bool
	if in.HasValues() {
		// The keys the shortcut flags write are the plugin's, not the
		// user's: they are rendered with, not judged.
		judge = func(key []string) bool {
			src, ok := in.Sources.OfKey(key)
			return !ok || !src.Shortcut()
		}
	}
	return chart.StartDeciding(ctx, loader, in.ReleaseName, in.Namespace, in.RenderValues, caps, judge, NeedsIgnoredValues(c.Selected))
}

// upgradeInfo names what an --upgrade run judged: the release, its latest
// revision, the chart version it upgrades from (already read by the checks: the snapshot
// memoises them) and the target chart version when the target rendered.
func upgradeInfo(in checks.Inputs, snap *cluster.Snapshot, env *checks.Env) *checks.UpgradeInfo {
	u := &checks.UpgradeInfo{Release: in.ReleaseName, Namespace: in.Namespace}
	if snap == nil {
		return u
	}
	if h, err := snap.HelmHistory(in.Namespace, in.ReleaseName); err == nil && len(h) > 0 {
		u.Revision = h[len(h)-1].Version
		// h[0] is the last deployed revision when there is one: the one
		// Helm upgrades from.
		if from := h[0]; from.Chart != nil && from.Chart.Metadata != nil {
			u.From = from.Chart.Metadata.Version
		}
	}
	if env != nil && env.Chart != nil {
		if r, ok := env.Chart.Ready(); ok {
			u.To = r.ChartVersion
		}
	}
	if env != nil {
		// Argo CD syncs the commit: it starts from the live chart, not
		// from the release record (memoised: the checks found it first).
		if ra, err := env.RuntimeApp(); err == nil && ra != nil {
			u.Application, u.From, u.Revision = ra.Named, ra.LiveChartVersion, 0
		}
	}
	return u
}
