package run

import (
	"context"
	"io"
	"log"

	rspb "helm.sh/helm/v3/pkg/release"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Session is a Config bound to one cluster: its clients (one set per
// cluster, never shared) and how the report names it.
type Session struct {
	Config  *Config
	Clients *cluster.Clients
	// Cluster names the cluster in the report (context and server); Run
	// adds the server's version.
	Cluster checks.ClusterInfo
}

// Run runs the session: the selected checks on a fresh snapshot of the
// cluster, again for the failing ones while Config.Wait allows, then --fix;
// the outcomes a valid waiver covers are waived, and Report.Waivers says
// what became of each waiver.
// It returns the report and its verdict. The report is nil only when --fix
// could not finish (its plan or results could not be written, or the
// confirmation could not be read): the verdict says why.
func (s *Session) Run(ctx context.Context) (*checks.Report, Verdict) {
	c := withBundle(s.Config)
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
		if c.Record != nil && c.Mode == checks.ModePost && s.Clients != nil && s.Clients.Kube != nil {
			// The chart's validation hook Jobs, their pods' logs and events,
			// kept for the bundle as soon as the run sees them (Kubernetes
			// deletes a failed hook Job and its pod after its TTL), read
			// beside the checks so that they wait for nothing.
			hooksDone := make(chan struct{})
			go func() {
				defer close(hooksDone)
				c.Record.RecordHooks(ctx, s.Clients.Kube, c.Inputs.Namespace, checks.ValidationJobs)
			}()
			defer func() { <-hooksDone }()
		}
		env = &checks.Env{Inputs: c.Inputs, Mode: c.Mode, HelmMajor: c.HelmMajor, Fix: c.Fix.Options, Images: c.Images, Cluster: snap, Getenv: c.Getenv, LookPath: c.LookPath, Command: c.Command, Probe: c.Prober, Chart: startRender(ctx, c, snap),
			ArgoCDApp: c.ArgoCD.App, Installer: c.Installer, InCluster: c.InCluster}
		opts, done := checks.RunOptions{}, func() {}
		if c.Hooks.Round != nil {
			opts, done = c.Hooks.Round(len(cs))
		}
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
		}, func() (*chart.SyncBase, error) {
			// A runtime Argo CD syncs is upgraded by a commit: the base is
			// what Argo CD deployed, not the Helm release record.
			return checks.ArgoSyncBase(snap, in, c.ArgoCD.App)
		}, caps)
	}
	return chart.Start(ctx, loader, in.ReleaseName, in.Namespace, in.RenderValues, caps)
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
