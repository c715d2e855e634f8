package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

// BundleSpec is the spec of the run a bundle recorded: its manifest's
// (format 2), or read once from the flags, the values and the waivers file
// a bundle of format 1 kept (specOfFlags).
func BundleSpec(b *bundle.Bundle) (Spec, error) {
	if len(b.Manifest.Spec) > 0 {
		return decodeSpec(b.Manifest.Spec)
	}
	values, _ := b.File(bundle.ValuesEntry)
	waivers, _ := b.File(bundle.WaiversEntry)
	return specOfFlags(b.Manifest.Flags, values, waivers)
}

// FleetSpec is the spec of the run a fleet archive recorded (its
// fleet.json's; a format-1 archive's flags read once).
func FleetSpec(fl *bundle.Fleet) (Spec, error) {
	if len(fl.Manifest.Spec) > 0 {
		return decodeSpec(fl.Manifest.Spec)
	}
	return specOfFlags(fl.Manifest.Flags, nil, nil)
}

// decodeSpec reads a recorded spec, strictly.
func decodeSpec(raw json.RawMessage) (Spec, error) {
	var s Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return Spec{}, fmt.Errorf("its spec is not valid: %w", err)
	}
	return s, nil
}

// Replay is the config of a replay of the bundle b, whose spec is s
// (BundleSpec), changed by ov: FromSpec of s, answering from b
// (Config.Replay: the clients, the host reads and the probes), rendering
// the chart b kept (the recorded run's, from its packaged archive: nothing
// is pulled), or failing to load it as the recorded run did, unless ov
// names another chart. The error is one line.
func Replay(b *bundle.Bundle, s Spec, ov Overrides) (*Config, error) {
	c, err := FromSpec(s, ov)
	if err != nil {
		return nil, err
	}
	c.Replay = b
	if c.Chart != nil && ov.Chart.Ref == "" {
		src := c.Chart.Source()
		if archive, ok := b.File(bundle.ChartEntry); ok {
			src.Archive = archive
			c.Chart = chart.NewLoader(src)
		} else if b.Manifest.ChartError != "" {
			// The recorded run could not load its chart: neither can the
			// replay (and it pulls nothing).
			c.Chart = chart.FailedLoader(src, errors.New(b.Manifest.ChartError))
		}
	}
	return c, nil
}

// ReplayFleet replays a fleet archive: each cluster's bundle in turn (one
// in memory at a time), as Replay replays a bundle with ov, under its own
// timeout, named by its context; a context the live run could not check,
// or whose bundle it could not write, is NotChecked, as it was. done
// receives each member's entry, in order. It returns the fleet's verdict;
// the error, one line, is a bundle of the archive that cannot be opened or
// replayed (nothing is reported then).
func ReplayFleet(ctx context.Context, fl *bundle.Fleet, ov Overrides, done func(Entry)) (Verdict, error) {
	verdicts := make([]Verdict, len(fl.Manifest.Clusters))
	for i, c := range fl.Manifest.Clusters {
		e := Entry{Index: i, Context: c.Context}
		switch {
		case c.Bundle != "":
			b, err := fl.Bundle(c)
			if err != nil {
				return Verdict{}, err
			}
			spec, err := BundleSpec(b)
			if err != nil {
				return Verdict{}, fmt.Errorf("bundle of context %s: %w", c.Context, err)
			}
			cfg, err := Replay(b, spec, ov)
			if err != nil {
				return Verdict{}, err
			}
			mctx, cancel := Deadline(ctx, cfg)
			s := &Session{Config: cfg, Cluster: checks.ClusterInfo{Server: b.Manifest.Server, Context: b.Manifest.Context}}
			e.Report, e.Verdict = s.Run(mctx)
			cancel()
		case c.BundleError != "":
			e.Verdict = Verdict{Kind: NotChecked, Err: fmt.Errorf("context %s: not replayed: its bundle was not written (%s)", c.Context, c.BundleError)}
		default:
			e.Verdict = Verdict{Kind: NotChecked, Err: errors.New(c.Error)}
		}
		verdicts[i] = e.Verdict
		if done != nil {
			done(e)
		}
	}
	return FleetVerdict(verdicts), nil
}

// Deadline bounds one cluster's run of c: Timeout, plus Wait's rounds (no
// bound when Timeout is not positive).
func Deadline(ctx context.Context, c *Config) (context.Context, context.CancelFunc) {
	if c.Timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, c.Timeout+max(c.Wait, 0))
}
