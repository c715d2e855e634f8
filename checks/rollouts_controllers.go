package checks

import (
	"context"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// RolloutsControllers passes when the cluster runs at most one Argo Rollouts
// controller. With a community Argo CD beside the runtime there may be two;
// the docs say to delete the duplicate controller's Deployment, and only
// the Deployment: "Removing the CRDs also removes Rollout objects resulting
// in downtime for workloads" (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Step 2:
// Complete GitOps Runtime installation", step 6). A controller in the
// runtime namespace is the runtime's; the others are named for deletion.
func RolloutsControllers() Check {
	return Check{
		Meta: Meta{
			ID:       "rollouts-controllers",
			Impact:   ImpactAdvisory,
			Category: CategoryConflicts,
			Modes:    ModePost,
			Title:    "At most one Argo Rollouts controller runs in the cluster",
			Severity: SeverityWarn,
			Requires: []string{"cluster-reachable"},
		},
		Run: scopedRun(runRolloutsControllers, "deployments"),
	}
}

// IsRolloutsController reports whether a Deployment is an Argo Rollouts
// controller: labelled app.kubernetes.io/component=rollouts-controller (the
// upstream manifests and chart), or running an image whose repository ends
// in /argo-rollouts (not the kubectl-argo-rollouts dashboard).
func IsRolloutsController(w cluster.Workload) bool {
	if w.Labels["app.kubernetes.io/component"] == "rollouts-controller" {
		return true
	}
	for _, img := range w.Images() {
		repo := img
		if i := strings.Index(repo, "@"); i >= 0 {
			repo = repo[:i]
		}
		if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
			repo = repo[:i]
		}
		if repo == "argo-rollouts" || strings.HasSuffix(repo, "/argo-rollouts") {
			return true
		}
	}
	return false
}

func runRolloutsControllers(_ context.Context, env *Env) (Result, error) {
	deps, err := env.Cluster.Deployments()
	if err != nil {
		return Result{}, err
	}
	var ctrls []cluster.Workload
	for _, d := range deps {
		if IsRolloutsController(d) {
			ctrls = append(ctrls, d)
		}
	}
	if len(ctrls) == 0 {
		return Pass("no Argo Rollouts controller in the cluster"), nil
	}
	if len(ctrls) == 1 {
		return Pass("one Argo Rollouts controller: %s/%s", ctrls[0].Namespace, ctrls[0].Name), nil
	}
	ns := env.Inputs.Namespace
	var keep, drop []cluster.Workload
	for _, c := range ctrls {
		if c.Namespace == ns && keep == nil {
			keep = append(keep, c)
		} else {
			drop = append(drop, c)
		}
	}
	refs := make([]ObjectRef, 0, len(ctrls))
	names := make([]string, 0, len(ctrls))
	for _, c := range ctrls {
		refs = append(refs, ObjectRef{Kind: "Deployment", Namespace: c.Namespace, Name: c.Name})
		names = append(names, c.Namespace+"/"+c.Name)
	}
	if len(keep) == 0 {
		return Fail("%d Argo Rollouts controllers (%s), none in the runtime namespace %s: two controllers fight over every Rollout",
			len(ctrls), strings.Join(names, ", "), ns).
			WithHint("keep one and delete the Deployment of each other one (kubectl delete deployment NAME -n NAMESPACE); delete only the Deployment, never the CRDs: deleting them deletes every Rollout").
			WithObjects(refs...), nil
	}
	cmds := make([]string, len(drop))
	dropNames := make([]string, len(drop))
	for i, d := range drop {
		cmds[i] = fmt.Sprintf("kubectl delete deployment %s -n %s", d.Name, d.Namespace)
		dropNames[i] = d.Namespace + "/" + d.Name
	}
	return Fail("%d Argo Rollouts controllers: the runtime's %s/%s and %s; delete the Deployment of %s (never the CRDs)",
		len(ctrls), keep[0].Namespace, keep[0].Name, strings.Join(dropNames, ", "), strings.Join(dropNames, ", ")).
		WithHint(strings.Join(cmds, " ; ") + " — delete only the Deployment, never the CRDs: deleting them deletes every Rollout").
		WithObjects(refs...), nil
}
