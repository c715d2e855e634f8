package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// newReplayCommand is `replay FILE`: the recorded run's checks on the
// bundle, with no cluster. Its flags are the root command's that change a
// recorded run (replayable), from the same groups.
func newReplayCommand(streams genericiooptions.IOStreams, host Host) *cobra.Command {
	host = host.withDefaults()
	f := newFlags(streams, host)
	var hooks bool
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Run the checks on a bundle written by --bundle, with no cluster",
		Long: `replay runs the checks on what a run with --bundle FILE read, with no
cluster and no network: the report equals the recorded run's (timestamps
aside), except for the checks that read a redacted value (see
docs/bundles.md). The recorded run applies, as it was compiled, unless a
flag here changes it; --upgrade --chart NEWER asks whether the recorded
release would take another chart version.

A fleet archive (--bundle with --contexts or --all-contexts) replays each
cluster's bundle and prints the fleet's report (matrix table, fleet JSON
or YAML, a JUnit suite per cluster) with the live fleet run's exit code.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r := &replay{term: console{streams: streams, host: host}, name: cmd.Root().DisplayName(), file: args[0], hooks: hooks}
			ov, err := replayOverrides(cmd.Flags(), f)
			if err != nil {
				return err
			}
			if bundle.IsFleet(r.file) {
				return r.fleet(cmd, ov)
			}
			return r.bundle(cmd, ov)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError("%v", err) })
	fs := cmd.Flags()
	addReplayFlags(fs, f)
	fs.BoolVar(&hooks, "hooks", false, "print the validation hook Jobs a --post run recorded (their pods, logs and events) instead of running the checks; -o json for JSON")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formatNames(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"fail", "warn"}, cobra.ShellCompDirectiveNoFileComp))
	ids := func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeCheckIDs(checks.ModePre|checks.ModePost|checks.ModeUpgrade, toComplete)
	}
	_ = cmd.RegisterFlagCompletionFunc("only", ids)
	_ = cmd.RegisterFlagCompletionFunc("skip", ids)
	return cmd
}

// addReplayFlags adds to fs the flags of f's groups that `replay` takes
// (replayable), each with its replay help, writing into f's groups. Their
// default is the recorded run's: the help shows none.
func addReplayFlags(fs *pflag.FlagSet, f *Flags) {
	all := pflag.NewFlagSet("replay", pflag.ContinueOnError)
	f.AddFlags(all)
	zero := map[string]string{"bool": "false", "duration": "0s", "int": "0", "stringSlice": "[]", "stringArray": "[]"}
	all.VisitAll(func(fl *pflag.Flag) {
		usage, ok := replayUsage(fl)
		if !ok {
			return
		}
		fs.AddFlag(&pflag.Flag{Name: fl.Name, Shorthand: fl.Shorthand, Usage: usage, Value: fl.Value, NoOptDefVal: fl.NoOptDefVal, DefValue: zero[fl.Value.Type()]})
	})
}

// replayOverrides compiles the flags given to `replay` (fs) into what they
// change of the recorded run; the values of f's groups are those flags'.
func replayOverrides(fs *pflag.FlagSet, f *Flags) (run.Overrides, error) {
	var ov run.Overrides
	if err := f.output.Validate(); err != nil {
		return ov, err
	}
	if err := f.selection.Validate(); err != nil {
		return ov, err
	}
	s := f.selection
	changed := fs.Changed
	if changed("output") {
		ov.Format = f.output.output.Format
	}
	if changed("no-color") {
		ov.NoColor = &f.output.output.NoColor
	}
	if changed("only") {
		ov.Only = &s.selection.Only
	}
	if changed("skip") {
		ov.Skip = &s.selection.Skip
	}
	if changed("fail-on") {
		warn := s.failOn == "warn"
		ov.FailOnWarn = &warn
	}
	if changed("timeout") {
		ov.Timeout = s.timeout
	}
	if changed("waivers") {
		reg, err := checks.NewRegistry(checks.All())
		if err != nil {
			return ov, fmt.Errorf("internal error: %w", err)
		}
		ws, err := readWaivers(s.waivers, reg)
		if err != nil {
			return ov, err
		}
		ov.Waivers = &ws
	}
	if changed("helm-wait") {
		w := f.chart.helmWaitState()
		ov.HelmWait = &w
	}
	ov.Upgrade = s.upgrade
	switch {
	case changed("chart"):
		ov.Chart = run.ChartRef{Ref: f.chart.ref, Version: f.chart.version}
	case changed("chart-version"):
		return ov, usageError("--chart-version goes with --chart")
	}
	return ov, nil
}

// replay is one `replay FILE`: where it prints, and the file.
type replay struct {
	term  console
	name  string
	file  string
	hooks bool
}

// bundle replays the bundle of one cluster's run (or prints its hook Jobs,
// with --hooks).
func (r *replay) bundle(cmd *cobra.Command, ov run.Overrides) error {
	b, err := bundle.Open(r.file)
	if err != nil {
		return usageError("%v", err)
	}
	if r.hooks {
		return printHooks(r.term.streams, b, r.file, ov.Format)
	}
	if hooks, err := b.Hooks(); err == nil && len(hooks) > 0 {
		fmt.Fprintf(r.term.streams.ErrOut, "bundle %s holds %d validation hook Job(s) with their pods' logs and events: replay %s --hooks\n", r.file, len(hooks), r.file)
	}
	spec, err := run.BundleSpec(b)
	if err != nil {
		return usageError("bundle %s: %v", r.file, err)
	}
	cfg, err := run.Replay(b, spec, ov)
	if err != nil {
		return usageError("%v", err)
	}
	o, err := newOptions(cfg, r.term, r.name)
	if err != nil {
		return err
	}
	ctx, cancel := run.Deadline(cmd.Context(), cfg)
	defer cancel()
	return o.Run(ctx)
}

// fleet replays a fleet archive: each cluster's bundle in turn, and the
// fleet's report, as the live fleet run writes it, with its exit code. A
// context the live run could not check is reported as it was (exit 2, its
// error).
func (r *replay) fleet(cmd *cobra.Command, ov run.Overrides) error {
	if r.hooks {
		return usageError("--hooks prints one cluster's hook Jobs: %s is a fleet archive (--contexts, --all-contexts); replay it without --hooks", r.file)
	}
	fl, err := bundle.OpenFleet(r.file)
	if err != nil {
		return usageError("%v", err)
	}
	defer fl.Close()
	spec, err := run.FleetSpec(fl)
	if err != nil {
		return usageError("bundle %s: %v", r.file, err)
	}
	// The report's mode and format: the recorded run's, and the flags here.
	cfg, err := run.FromSpec(spec, ov)
	if err != nil {
		return usageError("%v", err)
	}
	o, err := newOptions(cfg, r.term, r.name)
	if err != nil {
		return err
	}
	out := &reporters.Fleet{Mode: cfg.Mode, Entries: make([]reporters.FleetEntry, len(fl.Manifest.Clusters))}
	v, err := run.ReplayFleet(cmd.Context(), fl, ov, func(e run.Entry) { out.Entries[e.Index] = o.fleetEntry(e) })
	if err != nil {
		return usageError("bundle %s: %v", r.file, err)
	}
	return o.writeFleet(out, v)
}
