package run

import (
	"os/exec"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// withBundle returns c with its host hooks and prober bound to c.Record
// (recording what they answer) or c.Replay (answering from the bundle, and
// never dialling: the prober is Offline and its clock is the recorded
// run's); c itself when neither is set.
func withBundle(c *Config) *Config {
	if c.Record == nil && c.Replay == nil {
		return c
	}
	cp := *c
	p := probe.Prober{}
	if c.Prober != nil {
		p = *c.Prober
	}
	if rec := c.Record; rec != nil {
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
	cp.Prober = &p
	return &cp
}
