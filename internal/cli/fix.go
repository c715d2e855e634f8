package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// completeFix validates the --fix flags before anything touches the cluster.
// Applying needs --yes, or a person to confirm: stdin and stdout both
// terminals. A --dry-run changes nothing and needs no confirmation.
//
// A fix option that cannot do what it says is refused (exit 2, before any
// request), rather than ignored or, worse, applied to another check: each
// option belongs to one fixable check, which must be selected in this mode
// (Meta.FixOptions).
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
	fixable := 0
	for _, c := range o.config.Selected {
		if c.Fixable {
			fixable++
		}
	}
	for _, f := range fixOptionFlags(o) {
		if err := o.fixOptionApplies(f); err != nil {
			return err
		}
	}
	if fixable == 0 {
		return usageError("--fix: none of the selected checks can be fixed (fixable: %s); nothing was checked or changed", o.fixableChecks())
	}
	if !o.Yes && !o.DryRun && !o.interactive() {
		return usageError("--fix without --yes needs a terminal to confirm the plan: add --yes to apply it, or --dry-run to try it server-side; nothing was checked or changed")
	}
	return nil
}

// fixOptionFlags are the --fix options given (flag names without dashes):
// each belongs to the one check whose Meta.FixOptions names it.
func fixOptionFlags(o *Options) []string {
	var out []string
	for _, f := range []struct {
		name  string
		given bool
	}{{"crds", o.CRDs != ""}, {"tls-secret", o.TLSSecret != ""}} {
		if f.given {
			out = append(out, f.name)
		}
	}
	return out
}

// fixOptionApplies refuses the --fix option flag (exit 2) unless the check
// it fixes runs in this mode and is selected.
func (o *Options) fixOptionApplies(flag string) error {
	for _, c := range o.config.Registry.Checks() {
		if !slices.Contains(c.FixOptions, flag) {
			continue
		}
		if !c.Modes.Has(o.config.Mode) {
			hint := "run it without --post"
			if c.Modes.Has(checks.ModePost) {
				hint = "add --post"
			}
			return usageError("--%s fixes %s, which runs %s: %s; nothing was checked or changed", flag, c.ID, modesPhrase(c.Modes), hint)
		}
		if !slices.ContainsFunc(o.config.Selected, func(s checks.Check) bool { return s.ID == c.ID }) {
			return usageError("--%s fixes %s, which --only/--skip left out; nothing was checked or changed", flag, c.ID)
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
func (o *Options) fixableChecks() string {
	var parts []string
	for _, m := range []struct {
		mode checks.Mode
		when string
	}{{checks.ModePre, "before the install"}, {checks.ModePost, "with --post"}} {
		var ids []string
		for _, c := range o.config.Registry.Checks() {
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

func (o *Options) interactive() bool {
	return o.Host.IsInputTerminal(o.Streams.In) && o.Host.IsTerminal(o.Streams.Out)
}

// planWriter is where the fix plan and results go: stdout for the table, and
// stderr for machine formats, so that stdout stays one JSON document.
// (The wide table is a table.) On a terminal the lines are word-wrapped to
// its width like the report's, continuations indented under their line.
func (o *Options) planWriter() io.Writer {
	w := o.Streams.ErrOut
	if o.format == reporters.FormatTable || o.format == reporters.FormatWide {
		w = o.Streams.Out
	}
	if width := o.terminalWidth(w); width > 0 {
		return &wrapWriter{w: w, width: width}
	}
	return w
}

// wrapWriter word-wraps each complete line written through it to width
// columns (reporters.Wrap; a continuation is indented 4 more than its
// line); Flush writes a pending partial line (a prompt) as it is.
type wrapWriter struct {
	w     io.Writer
	width int
	buf   []byte
}

func (ww *wrapWriter) Write(p []byte) (int, error) {
	ww.buf = append(ww.buf, p...)
	for {
		i := bytes.IndexByte(ww.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(ww.buf[:i])
		ww.buf = ww.buf[i+1:]
		for _, l := range reporters.Wrap(line, ww.width, 0, 4) {
			if _, err := io.WriteString(ww.w, l+"\n"); err != nil {
				return 0, err
			}
		}
	}
}

// Flush writes what is left of a line that has no newline yet.
func (ww *wrapWriter) Flush() error {
	if len(ww.buf) == 0 {
		return nil
	}
	_, err := ww.w.Write(ww.buf)
	ww.buf = nil
	return err
}

// confirm asks on w and reads one line from stdin; only "y" or "yes" agree.
func (o *Options) confirm(w io.Writer) (bool, error) {
	fmt.Fprint(w, "Apply these changes? [y/N]: ")
	if f, ok := w.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			return false, err
		}
	}
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
