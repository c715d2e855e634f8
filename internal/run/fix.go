package run

import (
	"context"
	"fmt"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/fix"
)

// fix plans the fixes of the failed fixable checks of outcomes, writes the
// plan to Fix.PlanOut, applies it when confirmed (Fix.Yes, or Fix.Confirm
// agreeing), writes the per-object results and re-runs the fixed checks on a
// fresh snapshot. It returns the outcomes with the re-run checks replaced and
// whether any object was refused or any patch failed; an error when the plan
// or results could not be written or the confirmation read.
func (s *Session) fix(ctx context.Context, env *checks.Env, outcomes []checks.Outcome) ([]checks.Outcome, bool, error) {
	c := s.Config
	w := c.Fix.PlanOut
	plans := fix.Plan(ctx, env, c.Registry.Get, outcomes)
	refused := fix.Refused(plans)
	if err := fix.WritePlan(w, plans, c.Fix.DryRun); err != nil {
		return nil, false, err
	}
	if fix.CountChanges(plans) == 0 {
		return outcomes, refused, nil
	}
	if !c.Fix.Yes && !c.Fix.DryRun {
		ok := false
		if c.Fix.Confirm != nil {
			var err error
			if ok, err = c.Fix.Confirm(w); err != nil {
				return nil, false, err
			}
		}
		if !ok {
			fmt.Fprintln(w, "Fix: not applied; nothing changed")
			return outcomes, refused, nil
		}
	}
	results := fix.Apply(ctx, s.Clients.Dynamic, plans, c.Fix.DryRun)
	if err := fix.WriteResults(w, results, c.Fix.DryRun); err != nil {
		return nil, false, err
	}
	failed := refused || fix.Failed(results)
	if c.Fix.DryRun {
		return outcomes, failed, nil
	}
	fmt.Fprintln(w)

	// Re-run the fixed checks against what the cluster holds now.
	var rerun []checks.Check
	for _, p := range plans {
		if chk, ok := c.Registry.Get(p.CheckID); ok && len(p.Changes) > 0 {
			rerun = append(rerun, chk)
		}
	}
	fresh := *env
	fresh.Cluster = cluster.NewSnapshot(ctx, s.Clients)
	again := checks.Run(ctx, &fresh, rerun, checks.RunOptions{CheckTimeout: c.Timeout})
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
