package run

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/version"
)

// fleetRecording is Config.Bundle over a fleet: each member's session
// records into a recorder of its own and writes its bundle to a file of the
// archive's writer as it ends (path, done); finish assembles the fleet
// archive (bundle.FleetWriter). Memory holds the recorders of the sessions
// under way (Fleet.Parallel), not the fleet's. Its methods do nothing on a
// nil recording.
type fleetRecording struct {
	file    string // the archive, Config.Bundle
	w       *bundle.FleetWriter
	started time.Time
	mode    string
	spec    json.RawMessage

	mu       sync.Mutex
	files    map[string]string // context -> its bundle's file
	clusters map[string]bundle.FleetCluster
	failed   []string // contexts whose bundle could not be written
}

func newFleetRecording(c *Config) (*fleetRecording, error) {
	spec, err := json.Marshal(SpecOf(c))
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	w, err := bundle.NewFleetWriter(c.Bundle)
	if err != nil {
		return nil, err
	}
	return &fleetRecording{file: c.Bundle, w: w, started: bundle.Now(), mode: c.Mode.Phase(), spec: spec,
		files: map[string]string{}, clusters: map[string]bundle.FleetCluster{}}, nil
}

// path is a new file for a member's bundle ("" without a recording).
func (r *fleetRecording) path() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.w.Path()
}

// done notes the member of e, whose session wrote its bundle to file (err
// when it could not), exactly as a run with --context and --bundle writes
// it; a member that was not checked (its kubeconfig entry unusable) has
// its error in the fleet manifest instead.
func (r *fleetRecording) done(e Entry, file string, err error) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := bundle.FleetCluster{Context: e.Context}
	switch {
	case e.Report == nil:
		c.Error = "not checked"
		if e.Verdict.Err != nil {
			c.Error = checks.RedactSecrets(e.Verdict.Err.Error())
		}
	case err != nil:
		c.BundleError = err.Error()
		r.failed = append(r.failed, e.Context)
	default:
		c.Bundle = bundle.FleetEntryName(e.Context)
		r.files[e.Context] = file
	}
	r.clusters[e.Context] = c
}

// finish writes the fleet archive of the contexts names, in order. The
// error is one line: the archive could not be written, or some clusters'
// bundles could not (their errors are in its manifest).
func (r *fleetRecording) finish(names []string) error {
	m := bundle.FleetManifest{Plugin: version.Version, Time: r.started, Mode: r.mode, Spec: r.spec}
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
		return fmt.Errorf("bundle %s: written without the bundle of context %s (over the %d MiB bound, or not writable: see its fleet.json)", r.file, strings.Join(r.failed, ", "), bundle.MaxSize>>20)
	}
	return nil
}

func (r *fleetRecording) close() { _ = r.w.Close() }
