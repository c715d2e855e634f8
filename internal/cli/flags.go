package cli

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// flagGroup is a group of the command's flags, kubectl's XxxFlags: it
// declares its flags (AddFlags, each described with its help section and
// whether a bundle records it), checks their values before anything is read
// (Validate) and compiles them, once, into its part of the run's config
// (ToConfig), reading what the groups before it compiled.
//
// A new run input is a type of its own (its JSON names on it), a group in
// a file of its own (flags_<topic>.go: its flags described with their help
// section, rank and whether a bundle records them, bound to that type's
// fields where no compiling is needed) feeding a field of run.Config of
// that type, and one line in newFlags' list of groups. A bundle records the
// input as it is (a field of run.Spec of the same type); the checks that
// read it see it as it is (a field of checks.Env).
type flagGroup interface {
	AddFlags(fs *pflag.FlagSet)
	Validate() error
	ToConfig(ctx context.Context, c *run.Config) error
}

// Flags are the root command's flags in their groups. The groups that read
// each other's flags hold each other (the plan reads the namespace of the
// connection flags); a group that reads another's input reads it compiled,
// from the config (the chart's loader reads the probes' settings).
type Flags struct {
	conn      *connectionFlags
	selection *selectionFlags
	plan      *planFlags
	chart     *chartFlags
	fix       *fixFlags
	fleet     *fleetFlags
	output    *outputFlags
	argoCD    *argoCDFlags
	images    *imagesFlags
	installer *installerFlags
	inCluster *inClusterFlags
	// groups are every group, in the order they compile: each reads what
	// those before it put in the config (the fix flags read the selected
	// checks; the chart's loader dials through the prober).
	groups []flagGroup
}

// newFlags returns the flags with their defaults (Helm's environment among
// them when the binary runs as a Helm plugin: host.Getenv).
func newFlags(streams genericiooptions.IOStreams, host Host) *Flags {
	conn := newConnectionFlags(host.Getenv)
	term := console{streams: streams, host: host}
	f := &Flags{
		conn:      conn,
		selection: newSelectionFlags(),
		plan:      &planFlags{conn: conn, stdin: streams.In},
		chart:     newChartFlags(),
		fix:       &fixFlags{interactive: term.interactive},
		fleet:     &fleetFlags{parallel: run.DefaultParallel},
		output:    newOutputFlags(),
		argoCD:    &argoCDFlags{},
		images:    &imagesFlags{},
		installer: &installerFlags{},
		inCluster: &inClusterFlags{},
	}
	f.groups = []flagGroup{
		f.output, f.selection, f.fleet, f.fix, f.plan, f.conn, f.chart,
		f.argoCD, f.images, f.installer, f.inCluster,
		// A new input's group: one line here (it reads what those above
		// compiled).
	}
	return f
}

// AddFlags declares every group's flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	for _, g := range f.groups {
		g.AddFlags(fs)
	}
}

// Mode is the run's mode: pre-install, --post or --upgrade.
func (f *Flags) Mode() checks.Mode { return f.selection.Mode() }

// Validate checks the flags before anything is read (files, stdin, the
// cluster): each group's values, then the rules between groups. Every
// error is a one-line usage error (exit 2).
func (f *Flags) Validate() error {
	for _, g := range f.groups {
		if err := g.Validate(); err != nil {
			return err
		}
	}
	s, fix := f.selection, f.fix
	switch {
	case s.post && s.upgrade:
		return usageError("--post and --upgrade are different runs: give one of them")
	case !s.upgrade && f.chart.upgradeValues():
		return usageError("--reuse-values, --reset-values and --reset-then-reuse-values are helm upgrade's: use them with --upgrade")
	case s.post && f.chart.helmMajor != 0:
		return usageError("--helm-major says which Helm will install or upgrade: it has no use with --post")
	case s.post && f.chart.helmWait != "":
		return usageError("--helm-wait says how Helm will install or upgrade: it has no use with --post")
	case s.wait > 0 && !s.post:
		return usageError("--wait re-runs post-install checks: use it with --post")
	}
	if err := f.fleet.conflicts(f.conn, fix.fix, s.listChecks); err != nil {
		return err
	}
	if err := fix.given(); err != nil {
		return err
	}
	if err := f.inCluster.conflicts(fix.fix, f.fleet.active()); err != nil {
		return err
	}
	switch {
	case fix.fix && s.listChecks:
		return usageError("--fix cannot be combined with --list-checks")
	case fix.fix && f.output.bundle != "":
		return usageError("--fix changes the cluster: a run with --bundle, or a replay, only reads it")
	}
	return nil
}

// ToConfig validates the flags and compiles them, once, into the run's
// config: every error is a usage error (exit 2), or exit 3 when reading the
// values was interrupted. ctx bounds reading the values (files, stdin).
// Nothing touches the cluster.
func (f *Flags) ToConfig(ctx context.Context) (*run.Config, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	reg, err := checks.NewRegistry(checks.All())
	if err != nil {
		return nil, fmt.Errorf("internal error: %w", err)
	}
	c := &run.Config{Registry: reg, Host: checks.Host{Getenv: f.conn.getenv}}
	for _, g := range f.groups {
		if err := g.ToConfig(ctx, c); err != nil {
			return nil, err
		}
	}
	return c, nil
}
