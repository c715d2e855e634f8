package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// recordFlags returns the flags a bundle's manifest keeps: the changed
// flags of fs whose effect a bundle records (describe), but the values
// flags (-f, --set, --set-string: the bundle keeps the effective values
// instead, redacted), and the namespace when one was chosen (conn).
func recordFlags(fs *pflag.FlagSet, conn *connectionFlags) []bundle.Flag {
	var out []bundle.Flag
	fs.Visit(func(f *pflag.Flag) {
		if rec, _ := isRecorded(f); !rec || f.Name == "namespace" || slices.Contains(valuesFlags, f.Name) {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			out = append(out, bundle.Flag{Name: f.Name, Values: sv.GetSlice()})
			return
		}
		out = append(out, bundle.Flag{Name: f.Name, Values: []string{f.Value.String()}})
	})
	if ns, explicit := conn.namespace(); explicit {
		out = append(out, bundle.Flag{Name: "namespace", Values: []string{ns}})
	}
	return out
}

// valuesFlags are the flags whose effect a bundle keeps as the effective
// values.
var valuesFlags = []string{"values", "set", "set-string"}

// writeBundle writes the bundle of one cluster's run of cfg to path
// (--bundle, or a cluster's bundle of a fleet archive): what rec recorded,
// the manifest with the flags, the effective values (redacted), the chart
// the run loaded (packaged; none when it loaded none) and the --waivers
// file.
func writeBundle(ctx context.Context, rec *bundle.Recorder, path string, cfg *run.Config, flags []bundle.Flag, started time.Time, report *checks.Report) error {
	m := bundle.Manifest{
		Plugin: CurrentVersion().Version, Time: started, Context: report.Cluster.Context, Server: report.Cluster.Server,
		ServerVersion: report.Cluster.Version, Mode: cfg.Mode.Phase(), Flags: flags,
	}
	files := map[string][]byte{}
	if in := cfg.Inputs; in.Values != nil {
		b, err := yaml.Marshal(bundle.Values(in.Values))
		if err != nil {
			return fmt.Errorf("bundle: values: %w", err)
		}
		files[bundle.ValuesEntry] = b
	}
	if l := cfg.Chart; l != nil {
		if c, err := l.Get(ctx); err != nil {
			m.ChartError = err.Error()
		} else {
			b, err := bundle.ChartArchive(c)
			if err != nil {
				return fmt.Errorf("bundle: %w", err)
			}
			files[bundle.ChartEntry] = b
		}
	}
	if w := m.Flag("waivers"); w != "" {
		b, err := os.ReadFile(w)
		if err != nil {
			return fmt.Errorf("bundle: %w", err)
		}
		files[bundle.WaiversEntry] = b
	}
	return rec.Write(path, m, files)
}

// replayFlags are the flags of `replay FILE` that override the recorded ones.
type replayFlags struct {
	output, failOn, waivers, chart, chartVersion string
	only, skip                                   []string
	upgrade, noColor, hooks                      bool
	timeout                                      time.Duration
}

// newReplayCommand is `replay FILE`: the recorded run's checks on the
// bundle, with no cluster.
func newReplayCommand(streams genericiooptions.IOStreams, host Host) *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Run the checks on a bundle written by --bundle, with no cluster",
		Long: `replay runs the checks on what a run with --bundle FILE read, with no
cluster and no network: the report equals the recorded run's (timestamps
aside), except for the checks that read a redacted value (see README). The
recorded flags apply unless given again; --upgrade --chart NEWER asks
whether the recorded release would take another chart version.

A fleet archive (--bundle with --contexts or --all-contexts) replays each
cluster's bundle and prints the fleet's report (matrix table, fleet JSON
or YAML, a JUnit suite per cluster) with the live fleet run's exit code.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplay(cmd, streams, host, args[0], f)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError("%v", err) })
	fs := cmd.Flags()
	fs.StringVarP(&f.output, "output", "o", "", "output format (default: the recorded run's)")
	fs.StringSliceVar(&f.only, "only", nil, "run only these check IDs (default: the recorded run's)")
	fs.StringSliceVar(&f.skip, "skip", nil, "do not run these check IDs (default: the recorded run's)")
	fs.StringVar(&f.failOn, "fail-on", "", "lowest status that makes the exit code 1: fail or warn (default: the recorded run's)")
	fs.StringVar(&f.waivers, "waivers", "", "YAML file of accepted findings (default: the recorded run's)")
	fs.BoolVar(&f.upgrade, "upgrade", false, "check a helm upgrade of the recorded release to --chart")
	fs.StringVar(&f.chart, "chart", "", "the chart to render (default: the recorded run's, from the bundle)")
	fs.StringVar(&f.chartVersion, "chart-version", "", "chart version constraint, with --chart")
	fs.BoolVar(&f.noColor, "no-color", false, "never colour the output")
	fs.BoolVar(&f.hooks, "hooks", false, "print the validation hook Jobs a --post run recorded (their pods, logs and events) instead of running the checks; -o json for JSON")
	fs.DurationVar(&f.timeout, "timeout", 0, "bound on the whole replay (default: the recorded run's)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formatNames(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"fail", "warn"}, cobra.ShellCompDirectiveNoFileComp))
	ids := func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeCheckIDs(checks.ModePre|checks.ModePost|checks.ModeUpgrade, toComplete)
	}
	_ = cmd.RegisterFlagCompletionFunc("only", ids)
	_ = cmd.RegisterFlagCompletionFunc("skip", ids)
	return cmd
}

func runReplay(cmd *cobra.Command, streams genericiooptions.IOStreams, host Host, file string, f replayFlags) error {
	if bundle.IsFleet(file) {
		return runFleetReplay(cmd, streams, host, file, f)
	}
	b, err := bundle.Open(file)
	if err != nil {
		return usageError("%v", err)
	}
	if f.hooks {
		return printHooks(streams, b, file, f.output)
	}
	if hooks, err := b.Hooks(); err == nil && len(hooks) > 0 {
		fmt.Fprintf(streams.ErrOut, "bundle %s holds %d validation hook Job(s) with their pods' logs and events: replay %s --hooks\n", file, len(hooks), file)
	}
	rs, err := replayOptions(cmd, streams, host, file, b.Manifest.Flags, b, f)
	defer rs.cleanup()
	if err != nil {
		return err
	}
	ctx, cancel := rs.flags.selection.deadline(cmd.Context())
	defer cancel()
	cfg, err := completeReplay(ctx, rs, b)
	if err != nil {
		return err
	}
	o, err := rs.flags.ToOptions(cfg, console{streams: streams, host: host.withDefaults()}, cmd.Root().DisplayName())
	if err != nil {
		return err
	}
	return o.Run(ctx)
}

// replaySetup is a replay's flags, the recorded run's chart error (nil when
// none) and the function that removes its temporary files.
type replaySetup struct {
	flags    *Flags
	chartErr error
	cleanup  func()
}

// replayOptions returns the flags of a replay: the recorded flags, then
// those of f given on the command line; with b, its values, waivers and
// chart too (in a temporary directory, which cleanup removes), and the
// recorded run's chart error. completeReplay completes them.
func replayOptions(cmd *cobra.Command, streams genericiooptions.IOStreams, host Host, file string, flags []bundle.Flag, b *bundle.Bundle, f replayFlags) (*replaySetup, error) {
	cleanup := func() {}
	root, rf := newCommand(streams, host)
	fs := root.Flags()
	for _, fl := range flags {
		if pf := fs.Lookup(fl.Name); pf == nil || slices.Contains(valuesFlags, fl.Name) {
			continue
		} else if rec, _ := isRecorded(pf); !rec {
			continue
		}
		for _, v := range fl.Values {
			if err := fs.Set(fl.Name, v); err != nil {
				return &replaySetup{cleanup: cleanup}, usageError("bundle %s: flag --%s %q: %v", file, fl.Name, v, err)
			}
		}
	}
	changed := cmd.Flags().Changed
	if changed("output") {
		rf.output.format = f.output
	}
	if changed("only") {
		rf.selection.only = f.only
	}
	if changed("skip") {
		rf.selection.skip = f.skip
	}
	if changed("fail-on") {
		rf.selection.failOn = f.failOn
	}
	if changed("no-color") {
		rf.output.noColor = f.noColor
	}
	if changed("timeout") {
		rf.selection.timeout = f.timeout
	}
	if f.upgrade {
		rf.selection.upgrade, rf.selection.post, rf.selection.wait = true, false, 0
	}
	if b == nil {
		return &replaySetup{flags: rf, cleanup: cleanup}, nil
	}
	tmp, err := os.MkdirTemp("", "gitops-preflight-replay-")
	if err != nil {
		return &replaySetup{cleanup: cleanup}, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	put := func(name string, data []byte) (string, error) {
		p := filepath.Join(tmp, name)
		return p, os.WriteFile(p, data, 0o600)
	}
	p := rf.plan
	p.valueFiles, p.set, p.setStr = nil, nil, nil
	if v, ok := b.File(bundle.ValuesEntry); ok {
		path, err := put(bundle.ValuesEntry, v)
		if err != nil {
			return &replaySetup{cleanup: cleanup}, err
		}
		p.valueFiles = []string{path}
	}
	s := rf.selection
	s.waivers, s.waiversName = "", ""
	if changed("waivers") {
		s.waivers = f.waivers
	} else if w, ok := b.File(bundle.WaiversEntry); ok {
		if s.waivers, err = put(bundle.WaiversEntry, w); err != nil {
			return &replaySetup{cleanup: cleanup}, err
		}
		s.waiversName = b.Manifest.Flag("waivers")
	}
	var chartErr error
	switch {
	case changed("chart"):
		rf.chart.ref, rf.chart.version = f.chart, f.chartVersion
	case changed("chart-version"):
		return &replaySetup{cleanup: cleanup}, usageError("--chart-version goes with --chart")
	default:
		if c, ok := b.File(bundle.ChartEntry); ok {
			if rf.chart.ref, err = put(bundle.ChartEntry, c); err != nil {
				return &replaySetup{cleanup: cleanup}, err
			}
			rf.chart.version = ""
		} else if b.Manifest.ChartError != "" {
			chartErr = errors.New(b.Manifest.ChartError)
		}
	}
	return &replaySetup{flags: rf, chartErr: chartErr, cleanup: cleanup}, nil
}

// completeReplay compiles the flags of replayOptions under ctx (the
// replay's --timeout) into the config of a run answering from b: the
// recorded chart error stays the chart's.
func completeReplay(ctx context.Context, rs *replaySetup, b *bundle.Bundle) (*run.Config, error) {
	cfg, err := rs.flags.ToConfig(ctx)
	if err != nil {
		return nil, err
	}
	if rs.chartErr != nil && cfg.Chart != nil {
		// The recorded run could not load its chart: neither can the replay
		// (and it pulls nothing).
		cfg.Chart = chart.FailedLoader(cfg.Chart.Source(), rs.chartErr)
	}
	cfg.Replay = b
	return cfg, nil
}

// printHooks is `replay FILE --hooks`: the validation hook Jobs the
// recorded --post run saw, each with its conditions, its pods' containers
// (state and the kept log) and the events of them all; JSON with -o json.
func printHooks(streams genericiooptions.IOStreams, b *bundle.Bundle, file, output string) error {
	hooks, err := b.Hooks()
	if err != nil {
		return usageError("%v", err)
	}
	switch output {
	case "", "table":
	case "json":
		if hooks == nil {
			hooks = []bundle.HookJob{}
		}
		out, err := json.MarshalIndent(hooks, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(streams.Out, "%s\n", out)
		return err
	default:
		return usageError("--hooks prints table or json, not %q", output)
	}
	w := streams.Out
	if len(hooks) == 0 {
		_, err := fmt.Fprintf(w, "bundle %s holds no hook Job: only a --post run records the %s Jobs, when they exist\n", file, strings.Join(checks.ValidationJobs, " and "))
		return err
	}
	for _, h := range hooks {
		writeHookJob(w, h)
	}
	return nil
}

// writeHookJob prints one hook Job for people: its conditions, its pods'
// containers (state and the kept log) and the events.
func writeHookJob(w io.Writer, h bundle.HookJob) {
	state := "no condition yet (running)"
	var conds []string
	for _, c := range h.Conditions {
		t := c.Type
		if c.Reason != "" {
			t += " (" + c.Reason
			if c.Message != "" {
				t += ": " + c.Message
			}
			t += ")"
		}
		conds = append(conds, t)
	}
	if len(conds) > 0 {
		state = strings.Join(conds, ", ")
	}
	fmt.Fprintf(w, "Job %s/%s: %s; last seen %s\n", h.Namespace, h.Name, state, h.Seen.Format(time.RFC3339))
	for _, p := range h.Pods {
		node := p.Node
		if node == "" {
			node = "no node"
		}
		fmt.Fprintf(w, "  Pod %s: %s on %s\n", p.Name, p.Phase, node)
		for _, c := range p.Containers {
			fmt.Fprintf(w, "    container %s: %s\n", c.Name, c.State)
			switch {
			case c.Log != "":
				cut := ""
				if c.LogCut {
					cut = fmt.Sprintf(", its last %d KiB", bundle.HookLogBytes>>10)
				}
				fmt.Fprintf(w, "    log%s:\n", cut)
				for _, l := range strings.Split(strings.TrimRight(c.Log, "\n"), "\n") {
					fmt.Fprintf(w, "      %s\n", l)
				}
			case c.LogError != "":
				fmt.Fprintf(w, "    log not read: %s\n", c.LogError)
			default:
				fmt.Fprintf(w, "    log: empty\n")
			}
		}
	}
	if len(h.Events) == 0 {
		fmt.Fprintf(w, "  no events\n")
	}
	for _, e := range h.Events {
		count := ""
		if e.Count > 1 {
			count = fmt.Sprintf(" (x%d)", e.Count)
		}
		fmt.Fprintf(w, "  event %s %s %s: %s%s\n", e.Object, e.Type, e.Reason, e.Message, count)
	}
}
