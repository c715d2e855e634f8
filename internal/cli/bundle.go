package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// bundledFlags are the flags a bundle's manifest keeps and a replay applies
// again: those that shape the checks. The values flags (-f, --set,
// --set-string) are kept as the effective values instead (redacted), the
// kubeconfig's flags and --ca-file not at all (a replay reads neither).
var bundledFlags = []string{
	"output", "only", "skip", "fail-on", "runtime-name", "release-name", "post", "upgrade",
	"reuse-values", "reset-values", "reset-then-reuse-values", "helm-major", "timeout",
	"access-mode", "ingress-host", "ingress-class", "ingress-url", "existing-argocd",
	"skip-ingress-validation", "chart", "chart-version", "connect-to", "argocd-version-range",
	"request-timeout", "wait", "no-color", "waivers", "argocd-app", "installer", "installer-group", "in-cluster",
	"registry-mirror", "registry-check",
}

// recordFlags returns the changed bundledFlags of fs, and the namespace
// when one was chosen (ns).
func recordFlags(fs *pflag.FlagSet, namespaceChanged bool, ns string) []bundle.Flag {
	var out []bundle.Flag
	fs.Visit(func(f *pflag.Flag) {
		if !slices.Contains(bundledFlags, f.Name) {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			out = append(out, bundle.Flag{Name: f.Name, Values: sv.GetSlice()})
			return
		}
		out = append(out, bundle.Flag{Name: f.Name, Values: []string{f.Value.String()}})
	})
	if namespaceChanged {
		out = append(out, bundle.Flag{Name: "namespace", Values: []string{ns}})
	}
	return out
}

// writeBundle writes the bundle of one cluster's run to path (--bundle, or
// a cluster's bundle of a fleet archive): what rec recorded, the manifest,
// the effective values (redacted), the chart the run loaded with loader
// (packaged; nil when none) and the --waivers file.
func (o *Options) writeBundle(ctx context.Context, rec *bundle.Recorder, path string, loader *chart.Loader, started time.Time, server, contextName string, report *checks.Report) error {
	m := bundle.Manifest{
		Plugin: CurrentVersion().Version, Time: started, Context: contextName, Server: server,
		Mode: o.config.Mode.Phase(), Flags: o.bundleFlags,
	}
	if report != nil {
		m.ServerVersion = report.Cluster.Version
	}
	files := map[string][]byte{}
	if in := o.config.Inputs; in.Values != nil {
		b, err := yaml.Marshal(bundle.Values(in.Values))
		if err != nil {
			return fmt.Errorf("bundle: values: %w", err)
		}
		files[bundle.ValuesEntry] = b
	}
	idx := o.config.Inputs.SourceIndex()
	for i := range idx.Values {
		idx.Values[i].Source.Flag = bundle.Text(idx.Values[i].Source.Flag)
	}
	idx.RuntimeName.Flag, idx.ChartVersion.Flag = bundle.Text(idx.RuntimeName.Flag), bundle.Text(idx.ChartVersion.Flag)
	b, err := json.Marshal(idx)
	if err != nil {
		return fmt.Errorf("bundle: sources: %w", err)
	}
	files[bundle.SourcesEntry] = b
	if l := loader; l != nil {
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
	if o.Waivers != "" {
		b, err := os.ReadFile(o.Waivers)
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
	formats := make([]string, len(reporters.Formats))
	for i, x := range reporters.Formats {
		formats[i] = string(x)
	}
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
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
	o, cleanup, err := replayOptions(cmd, streams, host, file, b.Manifest.Flags, b, f)
	defer cleanup()
	if err != nil {
		return err
	}
	ctx, cancel := o.deadline(cmd.Context())
	defer cancel()
	if err := o.completeReplay(ctx); err != nil {
		return err
	}
	return o.Run(ctx)
}

// replayOptions returns the options of a replay: the recorded flags, then
// those of f given on the command line; with b, its values, waivers and
// chart too (in a temporary directory, which cleanup removes), and the
// options answer from b. completeReplay completes them.
func replayOptions(cmd *cobra.Command, streams genericiooptions.IOStreams, host Host, file string, flags []bundle.Flag, b *bundle.Bundle, f replayFlags) (*Options, func(), error) {
	cleanup := func() {}
	root, o := newCommand(streams, host)
	fs := root.Flags()
	namespaceChanged := false
	for _, fl := range flags {
		if fl.Name != "namespace" && !slices.Contains(bundledFlags, fl.Name) {
			continue
		}
		for _, v := range fl.Values {
			if err := fs.Set(fl.Name, v); err != nil {
				return nil, cleanup, usageError("bundle %s: flag --%s %q: %v", file, fl.Name, v, err)
			}
		}
		namespaceChanged = namespaceChanged || fl.Name == "namespace"
	}
	changed := cmd.Flags().Changed
	if changed("output") {
		o.Output = f.output
	}
	if changed("only") {
		o.Only = f.only
	}
	if changed("skip") {
		o.Skip = f.skip
	}
	if changed("fail-on") {
		o.FailOn = f.failOn
	}
	if changed("no-color") {
		o.NoColor = f.noColor
	}
	if changed("timeout") {
		o.Timeout = f.timeout
	}
	if f.upgrade {
		o.Upgrade, o.Post, o.Wait = true, false, 0
	}
	o.replayNamespaceChanged = namespaceChanged
	if b == nil {
		return o, cleanup, nil
	}
	tmp, err := os.MkdirTemp("", "gitops-preflight-replay-")
	if err != nil {
		return nil, cleanup, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	put := func(name string, data []byte) (string, error) {
		p := filepath.Join(tmp, name)
		return p, os.WriteFile(p, data, 0o600)
	}
	o.ValueFiles, o.SetValues, o.SetStringValues = nil, nil, nil
	if v, ok := b.File(bundle.ValuesEntry); ok {
		p, err := put(bundle.ValuesEntry, v)
		if err != nil {
			return nil, cleanup, err
		}
		o.ValueFiles = []string{p}
	}
	o.Waivers, o.waiversName = "", ""
	if changed("waivers") {
		o.Waivers = f.waivers
	} else if w, ok := b.File(bundle.WaiversEntry); ok {
		if o.Waivers, err = put(bundle.WaiversEntry, w); err != nil {
			return nil, cleanup, err
		}
		o.waiversName = b.Manifest.Flag("waivers")
	}
	var chartErr error
	switch {
	case changed("chart"):
		o.Chart, o.ChartVersion = f.chart, f.chartVersion
		o.replayChartGiven = true
	case changed("chart-version"):
		return nil, cleanup, usageError("--chart-version goes with --chart")
	default:
		if c, ok := b.File(bundle.ChartEntry); ok {
			if o.Chart, err = put(bundle.ChartEntry, c); err != nil {
				return nil, cleanup, err
			}
			o.ChartVersion = ""
		} else if b.Manifest.ChartError != "" {
			chartErr = errors.New(b.Manifest.ChartError)
		}
	}
	o.replay, o.replayChartErr = b, chartErr
	return o, cleanup, nil
}

// completeReplay completes the options of replayOptions under ctx (the
// replay's --timeout): the recorded chart error stays the chart's.
func (o *Options) completeReplay(ctx context.Context) error {
	if err := o.CompleteContext(ctx, o.replayNamespaceChanged); err != nil {
		return err
	}
	// The values come back from a file of the replay's own: their sources
	// are the recorded run's (none, from a bundle that recorded none).
	if o.replay != nil {
		var idx plan.SourceIndex
		if data, ok := o.replay.File(bundle.SourcesEntry); ok {
			if err := json.Unmarshal(data, &idx); err != nil {
				return usageError("bundle: %s: %v", bundle.SourcesEntry, err)
			}
		}
		if o.replayChartGiven {
			// replay --chart: the version is the new chart's.
			idx.ChartVersion = o.config.Inputs.ChartVersionSource
		}
		o.config.Inputs = o.config.Inputs.WithSourceIndex(idx)
	}
	if o.replayChartErr != nil && o.config.Chart != nil {
		// The recorded run could not load its chart: neither can the replay
		// (and it pulls nothing).
		o.config.Chart = chart.FailedLoader(o.config.Chart.Source(), o.replayChartErr)
	}
	return nil
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
	return nil
}
