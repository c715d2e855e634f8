package run

import (
	"context"
	"sync"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// DefaultParallel is how many clusters of a fleet are checked at once
// unless Fleet.Parallel says otherwise (--parallel).
const DefaultParallel = 4

// Member is one cluster of a fleet: its kubeconfig context and how to reach
// it. Connect builds the member's own clients (its own REST config and
// credentials: no client is shared between members) under ctx, which is
// bounded by the member's timeout; it returns how the report names the
// cluster. A Connect error is the member's usage error (Entry.Err), and
// the member is not checked.
type Member struct {
	Context string
	Connect func(ctx context.Context) (*cluster.Clients, checks.ClusterInfo, error)
}

// Entry is what a fleet run found for one member: the session's report and
// verdict, or no report when the member could not be checked (the verdict,
// NotChecked when Connect failed, says why). Index is the member's position
// in Fleet.Members. Chart is the chart loader the member's session used (nil
// when none): a bundle of the session keeps the chart it loaded, or why it
// could not.
type Entry struct {
	Index   int
	Context string
	Report  *checks.Report
	Verdict Verdict
	Chart   *chart.Loader
}

// Fleet runs the same Config on many clusters (--contexts, --all-contexts):
// one Session per member, at most Parallel at once, each under its own
// Config.Timeout (plus Config.Wait), started in Members order. Done receives each
// member's entry as soon as its session ends, from the fleet's goroutines
// one at a time; a member's clients and snapshot are dropped when its
// session ends, so memory grows with Parallel, not with the fleet (only the
// reports Done keeps remain). An unreachable member does not stop the others.
type Fleet struct {
	Config  *Config
	Members []Member
	// Parallel bounds the sessions running at once (DefaultParallel when
	// not positive).
	Parallel int
	// Done receives every member's entry; calls never overlap.
	Done func(Entry)
	// Recorder, when set, returns the recorder of a member's session by
	// its context, once it connected (nil for none): the member's Connect
	// wrapped its clients' transport with it, and the session records its
	// host reads and probes into it (--bundle).
	Recorder func(context string) *bundle.Recorder
}

// Run checks every member and returns the fleet's verdict (FleetVerdict)
// when all are done or ctx ends (the members not started by then are
// reported with the Interrupted, or Unreachable, verdict their sessions
// give under the ended ctx).
func (f *Fleet) Run(ctx context.Context) Verdict {
	parallel := f.Parallel
	if parallel <= 0 {
		parallel = DefaultParallel
	}
	sem := make(chan struct{}, parallel)
	var mu sync.Mutex
	var wg sync.WaitGroup
	verdicts := make([]Verdict, len(f.Members))
	for i, m := range f.Members {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			e := f.runMember(ctx, i, m)
			mu.Lock()
			defer mu.Unlock()
			verdicts[i] = e.Verdict
			if f.Done != nil {
				f.Done(e)
			}
		}()
	}
	wg.Wait()
	return FleetVerdict(verdicts)
}

// runMember connects to one member and runs its session under the member's
// own deadline.
func (f *Fleet) runMember(ctx context.Context, i int, m Member) Entry {
	e := Entry{Index: i, Context: m.Context}
	if t := f.Config.Timeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t+max(f.Config.Wait, 0))
		defer cancel()
	}
	clients, info, err := m.Connect(ctx)
	if err != nil {
		e.Verdict = Verdict{Kind: NotChecked, Err: err}
		return e
	}
	info.Context = m.Context
	// Each member loads the chart itself: a load is bounded by the
	// member's deadline, and no rendering shares a chart with another.
	cfg := *f.Config
	if cfg.Chart != nil {
		cfg.Chart = chart.NewLoader(cfg.Chart.Source())
		e.Chart = cfg.Chart
	}
	if f.Recorder != nil {
		cfg.Record = f.Recorder(m.Context)
	}
	s := &Session{Config: &cfg, Clients: clients, Cluster: info}
	e.Report, e.Verdict = s.Run(ctx)
	return e
}
