package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/fix"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// completeFix validates the --fix flags before anything touches the cluster.
// Applying needs --yes, or a person to confirm: stdin and stdout both
// terminals. A --dry-run changes nothing and needs no confirmation.
//
// A fix option that cannot do what it says is refused (exit 2, before any
// request), rather than ignored or, worse, applied to another check: each
// option belongs to one fixable check, which must be selected in this mode
// (fixFlagChecks).
func (o *Options) completeFix() error {
	if !o.Fix {
		for _, f := range []struct {
			set  bool
			name string
		}{{o.Yes, "--yes"}, {o.DryRun, "--dry-run"}, {o.CRDs != "", "--crds"}, {o.TLSSecret != "", "--tls-secret"}} {
			if f.set {
				return usageError("%s only applies with --fix; nothing was checked or changed", f.name)
			}
		}
		return nil
	}
	if o.ListChecks {
		return usageError("--fix cannot be combined with --list-checks")
	}
	selected := map[string]bool{}
	fixable := 0
	for _, c := range o.selected {
		selected[c.ID] = true
		if c.Fixable {
			fixable++
		}
	}
	for _, f := range fixFlagChecks {
		if !f.given(o) {
			continue
		}
		if !f.mode.Has(o.mode) {
			return usageError("%s fixes %s, a %s check: %s; nothing was checked or changed", f.flag, f.check, f.mode, f.modeHint)
		}
		if !selected[f.check] {
			return usageError("%s fixes %s, which --only/--skip left out; nothing was checked or changed", f.flag, f.check)
		}
	}
	if fixable == 0 {
		return usageError("--fix: none of the selected checks can be fixed (fixable: argo-crds-ownership before the install, nginx-tls-secret with --post); nothing was checked or changed")
	}
	if !o.Yes && !o.DryRun && !o.interactive() {
		return usageError("--fix without --yes needs a terminal to confirm the plan: add --yes to apply it, or --dry-run to try it server-side; nothing was checked or changed")
	}
	return nil
}

// fixFlagChecks are the options of --fix and the check each one fixes.
var fixFlagChecks = []struct {
	flag, check string
	mode        checks.Mode
	modeHint    string
	given       func(*Options) bool
}{
	{"--crds", "argo-crds-ownership", checks.ModePre, "run it without --post", func(o *Options) bool { return o.CRDs != "" }},
	{"--tls-secret", "nginx-tls-secret", checks.ModePost, "add --post", func(o *Options) bool { return o.TLSSecret != "" }},
}

func (o *Options) interactive() bool {
	return o.Host.IsInputTerminal(o.Streams.In) && o.Host.IsTerminal(o.Streams.Out)
}

// planWriter is where the fix plan and results go: stdout for the table, and
// stderr for machine formats, so that stdout stays one JSON document.
// (The wide table is a table.)
func (o *Options) planWriter() io.Writer {
	if o.format == reporters.FormatTable || o.format == reporters.FormatWide {
		return o.Streams.Out
	}
	return o.Streams.ErrOut
}

// runFix plans the fixes of the failed fixable checks of outcomes, prints the
// plan, applies it when confirmed (--yes or an interactive "y"), prints the
// per-object results and re-runs the fixed checks on a fresh snapshot. It
// returns the outcomes with the re-run checks replaced and whether any patch
// failed.
func (o *Options) runFix(ctx context.Context, env *checks.Env, clients *cluster.Clients, outcomes []checks.Outcome) ([]checks.Outcome, bool, error) {
	w := o.planWriter()
	plans := fix.Plan(ctx, env, o.registry.Get, outcomes)
	refused := fix.Refused(plans)
	if err := fix.WritePlan(w, plans, o.DryRun); err != nil {
		return nil, false, &ExitError{Code: checks.ExitFailed, Err: err}
	}
	if fix.CountChanges(plans) == 0 {
		return outcomes, refused, nil
	}
	if !o.Yes && !o.DryRun {
		ok, err := o.confirm(w)
		if err != nil {
			return nil, false, &ExitError{Code: checks.ExitFailed, Err: err}
		}
		if !ok {
			fmt.Fprintln(w, "Fix: not applied; nothing changed")
			return outcomes, refused, nil
		}
	}
	results := fix.Apply(ctx, clients.Dynamic, plans, o.DryRun)
	if err := fix.WriteResults(w, results, o.DryRun); err != nil {
		return nil, false, &ExitError{Code: checks.ExitFailed, Err: err}
	}
	failed := refused || fix.Failed(results)
	if o.DryRun {
		return outcomes, failed, nil
	}
	fmt.Fprintln(w)

	// Re-run the fixed checks against what the cluster holds now.
	var rerun []checks.Check
	for _, p := range plans {
		if c, ok := o.registry.Get(p.CheckID); ok && len(p.Changes) > 0 {
			rerun = append(rerun, c)
		}
	}
	fresh := *env
	fresh.Cluster = cluster.NewSnapshot(ctx, clients)
	again := checks.Run(ctx, &fresh, rerun, checks.RunOptions{})
	byID := make(map[string]checks.Outcome, len(again))
	for _, a := range again {
		byID[a.ID] = a
	}
	out := make([]checks.Outcome, len(outcomes))
	for i, oc := range outcomes {
		if a, ok := byID[oc.ID]; ok {
			oc = a
		}
		out[i] = oc
	}
	return out, failed, nil
}

// confirm asks on w and reads one line from stdin; only "y" or "yes" agree.
func (o *Options) confirm(w io.Writer) (bool, error) {
	fmt.Fprint(w, "Apply these changes? [y/N]: ")
	line, err := bufio.NewReader(o.Streams.In).ReadString('\n')
	if err != nil && line == "" {
		if err == io.EOF {
			return false, nil
		}
		return false, fmt.Errorf("reading confirmation: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
