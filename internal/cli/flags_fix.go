package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// fixFlags are --fix and its options. Applying needs --yes, or a person to
// confirm: stdin and stdout both terminals (interactive). A --dry-run
// changes nothing and needs no confirmation.
type fixFlags struct {
	interactive      func() bool
	fix, yes, dryRun bool
	// crds is "" when --crds was not given (all).
	crds, tlsSecret string
}

// AddFlags declares the fix flags on fs.
func (f *fixFlags) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&f.fix, "fix", false, "repair fixable failures (shows the plan; applies with --yes or after confirmation)")
	fs.BoolVar(&f.yes, "yes", false, "with --fix: apply without asking")
	fs.BoolVar(&f.dryRun, "dry-run", false, "with --fix: send the changes as server-side dry runs; nothing is changed")
	fs.StringVar(&f.crds, "crds", "", "with --fix: which Argo CRDs to adopt: all or rollouts (default all)")
	fs.StringVar(&f.tlsSecret, "tls-secret", "", "with --fix --post: the kubernetes.io/tls Secret to set in the runtime Ingress spec.tls")
	for i, n := range []string{"fix", "yes", "dry-run", "crds", "tls-secret"} {
		describe(fs, n, placement{sectionFix, 1 + i}, notRecorded("--fix changes the cluster: a run with --bundle only reads it"))
	}
}

// Validate checks --crds.
func (f *fixFlags) Validate() error {
	switch f.crds {
	case "", "all", "rollouts":
		return nil
	}
	return usageError("--crds must be all or rollouts, not %q", f.crds)
}

// given refuses an option of --fix without --fix.
func (f *fixFlags) given() error {
	if f.fix {
		return nil
	}
	for _, o := range []struct {
		set  bool
		name string
	}{{f.yes, "--yes"}, {f.dryRun, "--dry-run"}, {f.crds != "", "--crds"}, {f.tlsSecret != "", "--tls-secret"}} {
		if o.set {
			return usageError("%s only applies with --fix; nothing was checked or changed", o.name)
		}
	}
	return nil
}

// ToConfig compiles --fix for the selected checks. A fix option that
// cannot do what it says is refused (exit 2, before any request), rather
// than ignored or, worse, applied to another check: each option belongs to
// one fixable check, which must be selected in this mode (Meta.FixOptions).
// Without --yes or --dry-run, a terminal must be there to confirm.
func (f *fixFlags) ToConfig(_ context.Context, c *run.Config) error {
	if !f.fix {
		return nil
	}
	crds := f.crds
	if crds == "" {
		crds = "all"
	}
	c.Fix = run.Fix{Enabled: true, Yes: f.yes, DryRun: f.dryRun, Options: checks.FixOptions{CRDs: crds, TLSSecret: f.tlsSecret}}
	for _, o := range []struct {
		name  string
		given bool
	}{{"crds", f.crds != ""}, {"tls-secret", f.tlsSecret != ""}} {
		if !o.given {
			continue
		}
		if err := fixOptionApplies(c, o.name); err != nil {
			return err
		}
	}
	if !slices.ContainsFunc(c.Selected, func(s checks.Check) bool { return s.Fixable }) {
		return usageError("--fix: none of the selected checks can be fixed (fixable: %s); nothing was checked or changed", fixableChecks(c.Registry))
	}
	if !f.yes && !f.dryRun && !f.interactive() {
		return usageError("--fix without --yes needs a terminal to confirm the plan: add --yes to apply it, or --dry-run to try it server-side; nothing was checked or changed")
	}
	return nil
}

// fixOptionApplies refuses the --fix option flag (exit 2) unless the check
// it fixes runs in c's mode and is selected.
func fixOptionApplies(c *run.Config, flag string) error {
	for _, chk := range c.Registry.Checks() {
		if !slices.Contains(chk.FixOptions, flag) {
			continue
		}
		if !chk.Modes.Has(c.Mode) {
			hint := "run it without --post"
			if chk.Modes.Has(checks.ModePost) {
				hint = "add --post"
			}
			return usageError("--%s fixes %s, which runs %s: %s; nothing was checked or changed", flag, chk.ID, modesPhrase(chk.Modes), hint)
		}
		if !slices.ContainsFunc(c.Selected, func(s checks.Check) bool { return s.ID == chk.ID }) {
			return usageError("--%s fixes %s, which --only/--skip left out; nothing was checked or changed", flag, chk.ID)
		}
		return nil
	}
	return fmt.Errorf("internal error: no check takes --fix option --%s", flag)
}

// modesPhrase says when checks of modes run: "before helm install and
// before helm upgrade (--upgrade)".
func modesPhrase(modes checks.Mode) string {
	var parts []string
	if modes.Has(checks.ModePre) {
		parts = append(parts, "before helm install")
	}
	if modes.Has(checks.ModeUpgrade) {
		parts = append(parts, "before helm upgrade (--upgrade)")
	}
	if modes.Has(checks.ModePost) {
		parts = append(parts, "after the install (--post)")
	}
	return strings.Join(parts, " and ")
}

// fixableChecks names the fixable checks of the catalogue by mode, e.g.
// "argo-crds-ownership, helm-ownership before the install, nginx-tls-secret with --post".
func fixableChecks(reg *checks.Registry) string {
	var parts []string
	for _, m := range []struct {
		mode checks.Mode
		when string
	}{{checks.ModePre, "before the install"}, {checks.ModePost, "with --post"}} {
		var ids []string
		for _, c := range reg.Checks() {
			if c.Fixable && c.Modes.Has(m.mode) {
				ids = append(ids, c.ID)
			}
		}
		if len(ids) > 0 {
			parts = append(parts, strings.Join(ids, ", ")+" "+m.when)
		}
	}
	return strings.Join(parts, ", ")
}
