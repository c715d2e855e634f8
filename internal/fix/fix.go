// Package fix is the --fix engine: it asks the Planner of every failed
// fixable check for its changes (checks.Change), prints the plan, and sends
// the patches through the dynamic client with the plugin's field manager,
// optionally as server-side dry runs. It is generic over checks.Change: a
// fixable check plugs in by writing a Planner only.
//
// It never deletes and never sends anything but the planned patches; each
// object is patched on its own, so one refused patch (forbidden, conflict)
// does not stop the others.
package fix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// CheckPlan is the plan of one failed fixable check: the changes its Planner
// returned, or the error it refused with.
type CheckPlan struct {
	CheckID string
	Changes []checks.Change
	Err     error
}

// Plan asks every failed (status fail) fixable check of outcomes for its
// changes, in report order. byID resolves an outcome's ID to its check (its
// Planner); checks without a Planner are ignored. Checks that passed, warned
// or were skipped are never planned.
func Plan(ctx context.Context, env *checks.Env, byID func(string) (checks.Check, bool), outcomes []checks.Outcome) []CheckPlan {
	var out []CheckPlan
	for _, o := range outcomes {
		if !o.Fixable || o.Status != checks.StatusFail {
			continue
		}
		c, ok := byID(o.ID)
		if !ok || c.Plan == nil {
			continue
		}
		changes, err := c.Plan(ctx, env)
		out = append(out, CheckPlan{CheckID: o.ID, Changes: changes, Err: err})
	}
	return out
}

// CountChanges returns the number of objects plans would patch (refused
// objects excluded).
func CountChanges(plans []CheckPlan) int {
	n := 0
	for _, p := range plans {
		for _, c := range p.Changes {
			if c.Refused == "" {
				n++
			}
		}
	}
	return n
}

// Refused reports whether any plan was refused, whole or for an object
// (checks.Change.Refused): the run then exits 1.
func Refused(plans []CheckPlan) bool {
	for _, p := range plans {
		if p.Err != nil {
			return true
		}
		for _, c := range p.Changes {
			if c.Refused != "" {
				return true
			}
		}
	}
	return false
}

// None is how an unset field is shown in a plan.
const None = "<none>"

func show(v string) string {
	if v == "" {
		return None
	}
	return v
}

// WritePlan prints plans for people: per check, each object and each field
// as "field: old → new" (<none> when unset). Plans that were refused show
// their error. It writes nothing but the plan.
func WritePlan(w io.Writer, plans []CheckPlan, dryRun bool) error {
	var b strings.Builder
	n := CountChanges(plans)
	verb := "will patch"
	if dryRun {
		verb = "will try (server-side dry run, nothing is changed)"
	}
	switch {
	case n == 0 && len(plans) == 0:
		b.WriteString("Fix plan: nothing to fix\n")
	default:
		fmt.Fprintf(&b, "Fix plan: %s %d object(s)\n", verb, n)
	}
	for _, p := range plans {
		if p.Err != nil {
			fmt.Fprintf(&b, "  %s: cannot fix: %v\n", p.CheckID, p.Err)
			continue
		}
		if len(p.Changes) == 0 {
			fmt.Fprintf(&b, "  %s: nothing to change\n", p.CheckID)
			continue
		}
		fmt.Fprintf(&b, "  %s:\n", p.CheckID)
		for _, c := range p.Changes {
			if c.Refused != "" {
				fmt.Fprintf(&b, "    %s: refused, not changed: %s\n", c.Object, c.Refused)
				continue
			}
			fmt.Fprintf(&b, "    %s\n", c.Object)
			for _, f := range c.Fields {
				fmt.Fprintf(&b, "      %s: %s → %s\n", f.Field, show(f.Old), show(f.New))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Result is what happened to one planned change.
type Result struct {
	CheckID string
	Change  checks.Change
	// ResourceVersion is the object's resourceVersion after the patch (the
	// server's answer; unchanged for a dry run).
	ResourceVersion string
	Err             error
}

// Failed reports whether any result is an error.
func Failed(results []Result) bool {
	for _, r := range results {
		if r.Err != nil {
			return true
		}
	}
	return false
}

// Apply sends every planned change as its own PATCH through dyn with
// FieldManager checks.FieldManager and, when dryRun, dryRun=All. It does not
// stop at an error: each result carries its own. Plans that were refused are
// skipped.
func Apply(ctx context.Context, dyn dynamic.Interface, plans []CheckPlan, dryRun bool) []Result {
	opts := metav1.PatchOptions{FieldManager: checks.FieldManager}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var out []Result
	for _, p := range plans {
		if p.Err != nil {
			continue
		}
		for _, c := range p.Changes {
			if c.Refused != "" {
				continue
			}
			res := Result{CheckID: p.CheckID, Change: c}
			var ri dynamic.ResourceInterface = dyn.Resource(c.Resource)
			if c.Object.Namespace != "" {
				ri = dyn.Resource(c.Resource).Namespace(c.Object.Namespace)
			}
			obj, err := ri.Patch(ctx, c.Object.Name, c.PatchType, c.Patch, opts)
			if err != nil {
				res.Err = explain(err)
			} else {
				res.ResourceVersion = obj.GetResourceVersion()
			}
			out = append(out, res)
		}
	}
	return out
}

// explain turns an API error into a one-line reason a person can act on.
func explain(err error) error {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("forbidden (your credentials may not patch it; ask for patch rights or run as cluster-admin): %s", apiMessage(err))
	case apierrors.IsConflict(err):
		return fmt.Errorf("conflict: the object changed after it was read; nothing was changed, run --fix again: %s", apiMessage(err))
	case apierrors.IsNotFound(err):
		return fmt.Errorf("not found: it was deleted after it was read")
	case apierrors.IsInvalid(err):
		return fmt.Errorf("rejected by the API server: %s", apiMessage(err))
	}
	return err
}

func apiMessage(err error) string {
	var se apierrors.APIStatus
	if errors.As(err, &se) && se.Status().Message != "" {
		return se.Status().Message
	}
	return err.Error()
}

// WriteResults prints one line per result: patched (or, for a dry run, what
// the server accepted) or the error, then a summary line.
func WriteResults(w io.Writer, results []Result, dryRun bool) error {
	var b strings.Builder
	ok, failed := 0, 0
	for _, r := range results {
		if r.Err != nil {
			failed++
			fmt.Fprintf(&b, "  ✖ %s: %v\n", r.Change.Object, r.Err)
			continue
		}
		ok++
		if dryRun {
			fmt.Fprintf(&b, "  ✔ %s: server accepts the patch (dry run, not changed)\n", r.Change.Object)
		} else {
			fmt.Fprintf(&b, "  ✔ %s: patched (resourceVersion %s)\n", r.Change.Object, r.ResourceVersion)
		}
	}
	what := "patched"
	if dryRun {
		what = "accepted in dry run"
	}
	fmt.Fprintf(&b, "Fix: %d %s, %d failed\n", ok, what, failed)
	_, err := io.WriteString(w, b.String())
	return err
}
