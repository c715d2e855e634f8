package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// fleetRecording is --bundle over a fleet: each member's session records
// into a recorder of its own, from its Connect (wrap) to the end of its
// session (done), when its bundle is written to a file and the recorder
// dropped; finish assembles the fleet archive (bundle.FleetWriter). Memory
// holds the recorders of the sessions under way (--parallel), not the
// fleet's.
type fleetRecording struct {
	o       *Options
	w       *bundle.FleetWriter
	started time.Time

	mu       sync.Mutex
	live     map[string]*memberRecording // by context, sessions under way
	files    map[string]string           // context -> its bundle's file
	clusters map[string]bundle.FleetCluster
	failed   []string // contexts whose bundle could not be written
}

type memberRecording struct {
	rec     *bundle.Recorder
	started time.Time
}

func newFleetRecording(o *Options, n int) (*fleetRecording, error) {
	w, err := bundle.NewFleetWriter(o.bundle)
	if err != nil {
		return nil, err
	}
	return &fleetRecording{o: o, w: w, started: bundle.Now(), live: map[string]*memberRecording{},
		files: map[string]string{}, clusters: make(map[string]bundle.FleetCluster, n)}, nil
}

// wrap starts recording the member name: cfg's copy records every exchange.
func (r *fleetRecording) wrap(name string, cfg *rest.Config) *rest.Config {
	m := &memberRecording{rec: bundle.NewRecorder(), started: bundle.Now()}
	r.mu.Lock()
	r.live[name] = m
	r.mu.Unlock()
	cp := rest.CopyConfig(cfg)
	cp.Wrap(m.rec.Wrap)
	return cp
}

// recorder is the recorder of the member name's session (run.Fleet.Recorder).
func (r *fleetRecording) recorder(name string) *bundle.Recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.live[name]; m != nil {
		return m.rec
	}
	return nil
}

// done writes the bundle of a member whose session ended, exactly as a run
// with --context and --bundle writes it, to a file of its own; a member
// that was not checked (its kubeconfig entry unusable) has its error in
// the fleet manifest instead.
func (r *fleetRecording) done(ctx context.Context, e run.Entry) {
	r.mu.Lock()
	m := r.live[e.Context]
	delete(r.live, e.Context)
	r.mu.Unlock()
	c := bundle.FleetCluster{Context: e.Context}
	switch {
	case e.Report == nil || m == nil:
		c.Error = "not checked"
		if e.Verdict.Err != nil {
			c.Error = checks.RedactSecrets(e.Verdict.Err.Error())
		}
	default:
		path := r.w.Path()
		cfg := *r.o.config
		cfg.Chart = e.Chart
		err := writeBundle(ctx, m.rec, path, &cfg, r.o.recorded, m.started, e.Report)
		if err != nil {
			c.BundleError = err.Error()
			r.failed = append(r.failed, e.Context)
			break
		}
		c.Bundle = bundle.FleetEntryName(e.Context)
		r.files[e.Context] = path
	}
	r.clusters[e.Context] = c
}

// finish writes the fleet archive of the contexts names, in order. The
// error is one line: the archive could not be written, or some clusters'
// bundles could not (their errors are in its manifest).
func (r *fleetRecording) finish(names []string) error {
	o := r.o
	m := bundle.FleetManifest{Plugin: CurrentVersion().Version, Time: r.started, Mode: o.config.Mode.Phase(), Flags: o.recorded}
	for _, n := range names {
		c, ok := r.clusters[n]
		if !ok {
			c = bundle.FleetCluster{Context: n, Error: "not checked"}
		}
		m.Clusters = append(m.Clusters, c)
	}
	if err := r.w.Finish(m, r.files); err != nil {
		return err
	}
	if len(r.failed) > 0 {
		return fmt.Errorf("bundle %s: written without the bundle of context %s (over the %d MiB bound, or not writable: see its fleet.json)", o.bundle, strings.Join(r.failed, ", "), bundle.MaxSize>>20)
	}
	return nil
}

func (r *fleetRecording) close() { _ = r.w.Close() }

// runFleetReplay is `replay FILE` of a fleet archive: each cluster's
// bundle replayed in turn (one in memory at a time), as `replay` replays
// a bundle, and the fleet's report, as the live fleet run writes it, with
// its exit code. A context the live run could not check is reported as it
// was (exit 2, its error).
func runFleetReplay(cmd *cobra.Command, streams genericiooptions.IOStreams, host Host, file string, f replayFlags) error {
	if f.hooks {
		return usageError("--hooks prints one cluster's hook Jobs: %s is a fleet archive (--contexts, --all-contexts); replay it without --hooks", file)
	}
	fl, err := bundle.OpenFleet(file)
	if err != nil {
		return usageError("%v", err)
	}
	defer fl.Close()
	// The report's options: the recorded flags and those given here.
	rs, err := replayOptions(cmd, streams, host, file, fl.Manifest.Flags, nil, f)
	rs.cleanup()
	if err != nil {
		return err
	}
	if err := rs.flags.output.Validate(); err != nil {
		return err
	}
	base := &Options{term: console{streams: streams, host: host.withDefaults()}, name: cmd.Root().DisplayName(),
		config: &run.Config{Output: run.Output{Format: rs.flags.output.format, NoColor: rs.flags.output.noColor}}}
	base.format, _ = reporters.ParseFormat(rs.flags.output.format)
	out := &reporters.Fleet{Mode: rs.flags.Mode(), Entries: make([]reporters.FleetEntry, len(fl.Manifest.Clusters))}
	verdicts := make([]run.Verdict, len(fl.Manifest.Clusters))
	for i, c := range fl.Manifest.Clusters {
		e := run.Entry{Index: i, Context: c.Context}
		switch {
		case c.Bundle != "":
			b, err := fl.Bundle(c)
			if err != nil {
				return usageError("%v", err)
			}
			if e.Report, e.Verdict, err = replayMember(cmd, streams, host, file, b, f); err != nil {
				return err
			}
		case c.BundleError != "":
			e.Verdict = run.Verdict{Kind: run.NotChecked, Err: fmt.Errorf("context %s: not replayed: its bundle was not written (%s)", c.Context, c.BundleError)}
		default:
			e.Verdict = run.Verdict{Kind: run.NotChecked, Err: errors.New(c.Error)}
		}
		out.Entries[i], verdicts[i] = base.fleetEntry(e), e.Verdict
	}
	return base.writeFleet(out, run.FleetVerdict(verdicts))
}

// replayMember replays one cluster's bundle of a fleet archive as the
// live fleet ran the cluster's session: no progress hooks, under its own
// --timeout, named by its context and server. The error is a usage error
// (the flags do not apply to the bundle).
func replayMember(cmd *cobra.Command, streams genericiooptions.IOStreams, host Host, file string, b *bundle.Bundle, f replayFlags) (*checks.Report, run.Verdict, error) {
	rs, err := replayOptions(cmd, streams, host, file, b.Manifest.Flags, b, f)
	defer rs.cleanup()
	if err != nil {
		return nil, run.Verdict{}, err
	}
	ctx, cancel := rs.flags.selection.deadline(cmd.Context())
	defer cancel()
	cfg, err := completeReplay(ctx, rs, b)
	if err != nil {
		return nil, run.Verdict{}, err
	}
	restCfg := b.RESTConfig()
	clients, err := cluster.NewClients(restCfg)
	if err != nil {
		return nil, run.Verdict{}, usageError("%v", err)
	}
	s := &run.Session{Config: cfg, Clients: clients, Cluster: checks.ClusterInfo{Server: restCfg.Host, Context: b.Manifest.Context}}
	report, verdict := s.Run(ctx)
	return report, verdict, nil
}
