package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/version"
)

// withBundle returns c with its host hooks and prober bound to rec
// (recording what they answer) or c.Replay (answering from the bundle, and
// never dialling: the prober is Offline and its clock is the recorded
// run's); c itself when neither is set.
func withBundle(c *Config, rec *bundle.Recorder) *Config {
	if rec == nil && c.Replay == nil {
		return c
	}
	cp := *c
	p := probe.Prober{}
	if c.Probe != nil {
		p = *c.Probe
	}
	if rec != nil {
		getenv := c.Getenv
		if getenv == nil {
			getenv = func(string) string { return "" }
		}
		lookPath, command := c.LookPath, c.Command
		if lookPath == nil {
			lookPath = exec.LookPath
		}
		if command == nil {
			command = checks.RunCommand
		}
		cp.Getenv, cp.LookPath, cp.Command = rec.Getenv(getenv), rec.LookPath(lookPath), rec.Command(command)
		p.Tape = rec
	} else {
		b := c.Replay
		cp.Getenv, cp.LookPath, cp.Command = b.Getenv, b.LookPath, b.Command
		p.Tape, p.Offline = b, bundle.ErrOffline
		at := b.Time()
		p.Now = func() time.Time { return at }
		// The recording keeps the last answer to each request: the last
		// --wait round's, which one round replays.
		cp.Wait = 0
	}
	cp.Probe = &p
	return &cp
}

// record writes the bundle of the session's run of c to path: what rec
// recorded, the manifest with the spec of the run (SpecOf) and the chart
// the run loaded (packaged; why it could not, when it could not). The
// error is one line.
func record(ctx context.Context, c *Config, rec *bundle.Recorder, path string, started time.Time, report *checks.Report) error {
	spec, err := json.Marshal(SpecOf(c))
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	m := bundle.Manifest{
		Plugin: version.Version, Time: started, Context: report.Cluster.Context, Server: report.Cluster.Server,
		ServerVersion: report.Cluster.Version, Mode: c.Mode.Phase(), Spec: spec,
	}
	files := map[string][]byte{}
	if l := c.Chart; l != nil {
		if ch, err := l.Get(ctx); err != nil {
			m.ChartError = err.Error()
		} else {
			b, err := bundle.ChartArchive(ch)
			if err != nil {
				return fmt.Errorf("bundle: %w", err)
			}
			files[bundle.ChartEntry] = b
		}
	}
	return rec.Write(path, m, files)
}
