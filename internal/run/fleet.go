package run

import (
	"context"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

// DefaultParallel is how many clusters of a fleet are checked at once
// unless Fleet.Parallel says otherwise (--parallel).
const DefaultParallel = 4

// Member is one cluster of a fleet: its kubeconfig context and how to reach
// it. Connect returns the member's own REST config (its own credentials: no
// client is shared between members) under ctx, which is bounded by the
// member's timeout, and how the report names the cluster. A Connect error
// is the member's NotChecked verdict, and the member is not checked.
type Member struct {
	Context string
	Connect func(ctx context.Context) (*rest.Config, checks.ClusterInfo, error)
}

// Entry is what a fleet run found for one member: the session's report and
// verdict, or no report when the member could not be checked (the verdict,
// NotChecked when Connect failed, says why). Index is the member's position
// in Fleet.Members. Requests and Pages count the session's API requests and
// the further pages of its paginated lists (--debug-request-count).
type Entry struct {
	Index           int
	Context         string
	Report          *checks.Report
	Verdict         Verdict
	Requests, Pages int64
}

// Fleet runs the same Config on many clusters (--contexts, --all-contexts):
// one Session per member, at most Parallel at once, each under its own
// Config.Timeout (plus Config.Wait), started in Members order. Done
// receives each member's entry as soon as its session ends, from the
// fleet's goroutines one at a time; a member's clients and snapshot are
// dropped when its session ends, so memory grows with Parallel, not with
// the fleet (only the reports Done keeps remain). An unreachable member does
// not stop the others. With Config.Bundle, each member's session is
// recorded, its bundle written to a file as it ends, and the fleet archive
// assembled at the end (bundle.FleetWriter).
type Fleet struct {
	Config  *Config
	Members []Member
	// Parallel bounds the sessions running at once (DefaultParallel when
	// not positive).
	Parallel int
	// Done receives every member's entry; calls never overlap.
	Done func(Entry)
}

// Run checks every member and returns the fleet's verdict (FleetVerdict,
// at least Failed when its archive could not be written whole) when all
// are done or ctx ends (the members not started by then are reported with
// the Interrupted, or Unreachable, verdict their sessions give under the
// ended ctx). The error, one line, is that the recording could not start:
// then nothing ran.
func (f *Fleet) Run(ctx context.Context) (Verdict, error) {
	var rec *fleetRecording
	if f.Config.Bundle != "" {
		var err error
		if rec, err = newFleetRecording(f.Config); err != nil {
			return Verdict{}, err
		}
		defer rec.close()
	}
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
			e := f.runMember(ctx, i, m, rec)
			mu.Lock()
			defer mu.Unlock()
			verdicts[i] = e.Verdict
			if f.Done != nil {
				f.Done(e)
			}
		}()
	}
	wg.Wait()
	v := FleetVerdict(verdicts)
	if rec != nil {
		names := make([]string, len(f.Members))
		for i, m := range f.Members {
			names[i] = m.Context
		}
		v = v.Unrecorded(rec.finish(names))
	}
	return v, nil
}

// runMember connects to one member and runs its session under the member's
// own deadline, recording it into rec when set.
func (f *Fleet) runMember(ctx context.Context, i int, m Member, rec *fleetRecording) Entry {
	e := Entry{Index: i, Context: m.Context}
	ctx, cancel := Deadline(ctx, f.Config)
	defer cancel()
	restCfg, info, err := m.Connect(ctx)
	if err != nil {
		e.Verdict = Verdict{Kind: NotChecked, Err: err}
		rec.done(e, "", nil)
		return e
	}
	info.Context = m.Context
	// Each member loads the chart itself: a load is bounded by the
	// member's deadline, and no rendering shares a chart with another.
	cfg := *f.Config
	if cfg.Chart != nil {
		cfg.Chart = chart.NewLoader(cfg.Chart.Source())
	}
	s := &Session{Config: &cfg, REST: restCfg, Cluster: info}
	path := rec.path()
	report, v, bundleErr := s.run(ctx, path)
	e.Report, e.Verdict = report, v
	if s.Clients != nil {
		e.Requests, e.Pages = s.Clients.Requests.Load(), s.Clients.Pages.Load()
	}
	rec.done(e, path, bundleErr)
	return e
}
