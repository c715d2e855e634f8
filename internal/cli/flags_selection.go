package cli

import (
	"context"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// selectionFlags choose the run: its mode (--post, --upgrade), its checks
// (--only, --skip; --list-checks lists them instead), how their outcomes
// are judged (--fail-on, --waivers) and how long it may take (--wait,
// --timeout).
type selectionFlags struct {
	post, upgrade bool
	// selection is --only and --skip, as run.Config takes them.
	selection     run.Selection
	failOn        string
	waivers       string
	wait, timeout time.Duration
	listChecks    bool
}

func newSelectionFlags() *selectionFlags {
	return &selectionFlags{failOn: "fail", timeout: 5 * time.Minute}
}

// AddFlags declares the selection flags on fs.
func (f *selectionFlags) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&f.post, "post", false, "run the post-install diagnostics instead of the pre-install checks")
	describe(fs, "post", placement{sectionRun, 1}, recorded)
	fs.BoolVar(&f.upgrade, "upgrade", false, "check a helm upgrade of the deployed release to --chart/--chart-version with -f/--set, instead of an install")
	describe(fs, "upgrade", placement{sectionRun, 2}, recorded)
	replayable(fs, "upgrade", "check a helm upgrade of the recorded release to --chart")
	fs.StringSliceVar(&f.selection.Only, "only", nil, "run only these check IDs (comma-separated; cluster-reachable always runs)")
	describe(fs, "only", placement{sectionRun, 6}, recorded)
	replayable(fs, "only", "run only these check IDs (default: the recorded run's)")
	fs.StringSliceVar(&f.selection.Skip, "skip", nil, "do not run these check IDs (comma-separated)")
	describe(fs, "skip", placement{sectionRun, 7}, recorded)
	replayable(fs, "skip", "do not run these check IDs (default: the recorded run's)")
	fs.StringVar(&f.failOn, "fail-on", f.failOn, "lowest status that makes the exit code 1: fail or warn")
	describe(fs, "fail-on", placement{sectionRun, 8}, recorded)
	replayable(fs, "fail-on", "lowest status that makes the exit code 1: fail or warn (default: the recorded run's)")
	fs.StringVar(&f.waivers, "waivers", "", "YAML file of accepted findings (check, reason, expires): the results they cover are reported as waived")
	describe(fs, "waivers", placement{sectionRun, 9}, recorded)
	replayable(fs, "waivers", "YAML file of accepted findings (default: the recorded run's)")
	fs.DurationVar(&f.wait, "wait", 0, "with --post: re-run failing checks until they pass or this long has passed")
	describe(fs, "wait", placement{sectionRun, 10}, recorded)
	fs.DurationVar(&f.timeout, "timeout", f.timeout, "bound on the whole run and on each check (on each cluster's run, with --contexts or --all-contexts)")
	describe(fs, "timeout", placement{sectionRun, 11}, recorded)
	replayable(fs, "timeout", "bound on the whole replay (default: the recorded run's)")
	fs.BoolVar(&f.listChecks, "list-checks", false, "list the checks (ID, mode, category, docs page; -o wide adds the title) and exit")
	describe(fs, "list-checks", placement{sectionRun, 12}, notRecorded("it lists the catalogue: no run"))
}

// Mode is the run's mode: ModePost with --post, ModeUpgrade with
// --upgrade, else ModePre.
func (f *selectionFlags) Mode() checks.Mode {
	switch {
	case f.upgrade:
		return checks.ModeUpgrade
	case f.post:
		return checks.ModePost
	}
	return checks.ModePre
}

// Validate checks --fail-on, --timeout and --wait.
func (f *selectionFlags) Validate() error {
	switch f.failOn {
	case "fail", "error", "warn":
	default:
		return usageError("--fail-on must be warn or fail, not %q", f.failOn)
	}
	if f.timeout <= 0 {
		return usageError("--timeout must be positive, not %s", f.timeout)
	}
	if f.wait < 0 {
		return usageError("--wait must not be negative, not %s", f.wait)
	}
	return nil
}

// ToConfig compiles the mode, the judging, the bounds, the waivers and the
// selected checks (none with --list-checks, which runs nothing).
func (f *selectionFlags) ToConfig(_ context.Context, c *run.Config) error {
	c.Mode = f.Mode()
	c.FailOnWarn = f.failOn == "warn"
	c.Wait, c.Timeout = f.wait, f.timeout
	var err error
	if c.Waivers, err = readWaivers(f.waivers, c.Registry); err != nil {
		return err
	}
	if f.listChecks {
		return nil
	}
	c.Selection = f.selection
	if c.Selected, err = c.Registry.Select(c.Mode, f.selection.Only, f.selection.Skip); err != nil {
		return usageError("%v", err)
	}
	return nil
}

// readWaivers reads and parses the --waivers file path (none when "").
func readWaivers(path string, reg *checks.Registry) ([]run.Waiver, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError("--waivers: %v", err)
	}
	ws, err := run.ParseWaivers(path, data, reg)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return ws, nil
}

// deadline bounds one cluster's run: --timeout, plus --wait's rounds.
func (f *selectionFlags) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return run.Deadline(ctx, &run.Config{Timeout: f.timeout, Wait: f.wait})
}
