package checks

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/apply"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Helm's ownership metadata: Helm adopts an existing object only when it
// carries this label and these annotations naming the release; otherwise the
// install fails with "invalid ownership metadata" (Helm
// pkg/action/validate.go). The values are the ones Codefresh's adopt-crds.sh
// sets (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Switch ownership of Argo Project
// CRDs"; https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/scripts/adopt-crds.sh).
const (
	HelmManagedByLabel             = apply.ManagedByLabel
	HelmManagedByValue             = apply.ManagedByHelm
	HelmReleaseNameAnnotation      = apply.ReleaseNameAnnotation
	HelmReleaseNamespaceAnnotation = apply.ReleaseNamespaceAnnotation
)

// ArgoGroup is the API group of every Argo Project CRD.
const ArgoGroup = "argoproj.io"

// ArgoRolloutsCRDs are the CRDs "--crds=rollouts" adopts, as the docs'
// "(Optional) Switch ownership of only Argo Rollout CRDs" does (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/).
var ArgoRolloutsCRDs = []string{
	"rollouts.argoproj.io",
	"analysisruns.argoproj.io",
	"analysistemplates.argoproj.io",
	"clusteranalysistemplates.argoproj.io",
	"experiments.argoproj.io",
}

// CRDOwnershipProblem is one argoproj.io CRD that the runtime's release could
// not adopt as it is.
type CRDOwnershipProblem struct {
	CRD cluster.CRD
	// Why is a short phrase: "not managed by Helm", "owned by release x in y".
	Why string
	// Fields are the metadata fields to set to adopt it, old → new.
	Fields []FieldChange
}

// CheckCRDOwnership returns, for release in namespace, how many CRDs of
// crds are argoproj.io CRDs and which of them lack (or contradict) Helm's
// ownership metadata, in input order.
func CheckCRDOwnership(crds []cluster.CRD, release, namespace string) (argo int, problems []CRDOwnershipProblem) {
	for _, c := range crds {
		if c.Group() != ArgoGroup {
			continue
		}
		argo++
		want := [3]struct{ field, key, old, new string }{
			{"metadata.labels", HelmManagedByLabel, c.Labels[HelmManagedByLabel], HelmManagedByValue},
			{"metadata.annotations", HelmReleaseNameAnnotation, c.Annotations[HelmReleaseNameAnnotation], release},
			{"metadata.annotations", HelmReleaseNamespaceAnnotation, c.Annotations[HelmReleaseNamespaceAnnotation], namespace},
		}
		var fields []FieldChange
		var missing []string
		for _, w := range want {
			if w.old == w.new {
				continue
			}
			fields = append(fields, FieldChange{Field: w.field + "[" + w.key + "]", Old: w.old, New: w.new})
			if w.old == "" {
				missing = append(missing, w.key)
			}
		}
		if len(fields) == 0 {
			continue
		}
		otherRel, otherNS := c.Annotations[HelmReleaseNameAnnotation], c.Annotations[HelmReleaseNamespaceAnnotation]
		var why string
		switch {
		case (otherRel != "" && otherRel != release) || (otherNS != "" && otherNS != namespace):
			why = fmt.Sprintf("owned by release %s in namespace %s", orNone(otherRel), orNone(otherNS))
		case len(missing) == len(want):
			why = "no Helm ownership metadata"
		case len(missing) > 0:
			why = "missing " + strings.Join(missing, ", ")
		default:
			why = fmt.Sprintf("%s is %q, not %q", HelmManagedByLabel, c.Labels[HelmManagedByLabel], HelmManagedByValue)
		}
		problems = append(problems, CRDOwnershipProblem{CRD: c, Why: why, Fields: fields})
	}
	return argo, problems
}

// ArgoCRDsOwnership fails when an argoproj.io CRD does not carry Helm's
// ownership metadata for the runtime's release and namespace: "helm install"
// would then fail with "invalid ownership metadata" (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Switch ownership of Argo Project CRDs").
// It is fixable: --fix adopts them (all argoproj.io
// CRDs, or the Argo Rollouts ones with --crds=rollouts), setting only that
// label and those annotations.
func ArgoCRDsOwnership() Check {
	return Check{
		Meta: Meta{
			ID:         "argo-crds-ownership",
			Impact:     ImpactInstallFails,
			ReadsChart: true,
			FixOptions: []string{"crds"},
			Category:   CategoryConflicts,
			Modes:      ModePre | ModeUpgrade,
			Title:      "Every argoproj.io CRD carries Helm ownership metadata for the runtime release",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
			Fixable:    true,
		},
		Run:  runArgoCRDsOwnership,
		Plan: planArgoCRDsOwnership,
	}
}

// argoCRDsInScope returns the CRDs argo-crds-ownership judges: every CRD of
// the cluster without a chart (or when the chart cannot be loaded or
// rendered), and only those the rendered chart creates when it renders: a
// CRD the release never manages cannot make helm install fail. scope says
// which, for the message.
func argoCRDsInScope(ctx context.Context, env *Env) (crds []cluster.CRD, scope string, err error) {
	all, err := env.Cluster.CRDs()
	if err != nil {
		return nil, "", err
	}
	r, skip, err := renderingForChecks(ctx, env)
	if err != nil {
		return nil, "", err
	}
	if skip != nil || r == nil {
		return all, "", nil
	}
	created, err := createdByHelm(ctx, env)
	if err != nil {
		return nil, "", err
	}
	rendered := map[string]bool{}
	for _, o := range r.Objects {
		if o.Kind == "CustomResourceDefinition" && created(o) {
			rendered[o.Name] = true
		}
	}
	for _, c := range all {
		if rendered[c.Name] {
			crds = append(crds, c)
		}
	}
	if env.Upgrading() {
		return crds, fmt.Sprintf(" that helm upgrade to chart %s %s creates", r.ChartName, r.ChartVersion), nil
	}
	return crds, fmt.Sprintf(" that chart %s %s renders", r.ChartName, r.ChartVersion), nil
}

func runArgoCRDsOwnership(ctx context.Context, env *Env) (Result, error) {
	if r, ok := argoSyncSkip(ctx, env); ok {
		return r, nil
	}
	crds, scope, err := argoCRDsInScope(ctx, env)
	if err != nil {
		return Result{}, err
	}
	rel, ns := env.Inputs.ReleaseName, env.Inputs.Namespace
	argo, problems := CheckCRDOwnership(crds, rel, ns)
	if argo == 0 {
		return Pass("no %s CRDs%s in the cluster", ArgoGroup, scope), nil
	}
	if len(problems) == 0 {
		return Pass("all %d %s CRDs carry Helm ownership metadata for release %s in namespace %s", argo, ArgoGroup, rel, ns), nil
	}
	refs := make([]ObjectRef, len(problems))
	parts := make([]string, 0, 11)
	for i, p := range problems {
		refs[i] = ObjectRef{Kind: "CustomResourceDefinition", Name: p.CRD.Name}
		if i < 10 {
			parts = append(parts, p.CRD.Name+" ("+p.Why+")")
		}
	}
	if len(problems) > 10 {
		parts = append(parts, fmt.Sprintf("and %d more", len(problems)-10))
	}
	return Fail("%d of %d %s CRDs would fail helm install of release %s in namespace %s with \"invalid ownership metadata\": %s",
		len(problems), argo, ArgoGroup, rel, ns, strings.Join(parts, ", ")).
		WithHint(crdOwnershipHint(problems, rel, ns)).
		WithObjects(refs...), nil
}

// argoProject maps an argoproj.io CRD to the chart values section that
// installs it (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/ "Handle Argo Project CRDs outside of the chart":
// argo-cd, argo-workflows, argo-rollouts, argo-events).
func argoProject(crd string) string {
	plural, _, _ := strings.Cut(crd, ".")
	switch plural {
	case "applications", "applicationsets", "appprojects":
		return "argo-cd"
	case "rollouts", "analysisruns", "analysistemplates", "clusteranalysistemplates", "experiments":
		return "argo-rollouts"
	case "eventbus", "eventsources", "sensors":
		return "argo-events"
	}
	if strings.Contains(plural, "workflow") {
		return "argo-workflows"
	}
	return ""
}

func crdOwnershipHint(problems []CRDOwnershipProblem, rel, ns string) string {
	seen := map[string]bool{}
	var sets []string
	for _, p := range problems {
		if proj := argoProject(p.CRD.Name); proj != "" && !seen[proj] {
			seen[proj] = true
			sets = append(sets, "--set "+proj+".crds.install=false")
		}
	}
	h := fmt.Sprintf("adopt them into the release: kubectl gitops-preflight --fix --release-name %s -n %s "+
		"(shows the label/annotation changes; --yes applies, --dry-run tries them server-side, --crds=rollouts adopts only the Argo Rollouts CRDs)", rel, ns)
	if len(sets) > 0 {
		h += "\nor leave them out of the chart: helm install ... " + strings.Join(sets, " ")
	}
	return h
}

// planArgoCRDsOwnership plans one JSON merge patch per failing CRD setting
// only the label and annotations that differ. The patch carries the
// resourceVersion that was read, so a CRD changed since is refused by the API
// server (Conflict) instead of being overwritten blindly. With
// Inputs.CRDs == "rollouts" only ArgoRolloutsCRDs are planned.
func planArgoCRDsOwnership(ctx context.Context, env *Env) ([]Change, error) {
	crds, _, err := argoCRDsInScope(ctx, env)
	if err != nil {
		return nil, err
	}
	_, problems := CheckCRDOwnership(crds, env.Inputs.ReleaseName, env.Inputs.Namespace)
	var records map[string]cluster.HelmRecord
	var out []Change
	for _, p := range problems {
		if env.Fix.CRDs == "rollouts" && !isRolloutsCRD(p.CRD.Name) {
			continue
		}
		if p.CRD.Annotations[HelmReleaseNameAnnotation] != "" {
			if records == nil {
				if records, err = env.Cluster.HelmReleaseRecords(); err != nil {
					return nil, err
				}
			}
			if owner, rec := describeOwner(records, p.CRD.Annotations, env.Inputs.ReleaseName, env.Inputs.Namespace); rec != nil {
				out = append(out, Change{Object: ObjectRef{Kind: "CustomResourceDefinition", Name: p.CRD.Name},
					Refused: owner + ": uninstall it or install as that release"})
				continue
			}
		}
		patch, err := ownershipPatch(p.Fields, p.CRD.ResourceVersion)
		if err != nil {
			return nil, err
		}
		out = append(out, Change{
			Object:    ObjectRef{Kind: "CustomResourceDefinition", Name: p.CRD.Name},
			Resource:  cluster.CRDResource,
			Fields:    p.Fields,
			PatchType: types.MergePatchType,
			Patch:     patch,
		})
	}
	return out, nil
}

func isRolloutsCRD(name string) bool {
	for _, n := range ArgoRolloutsCRDs {
		if n == name {
			return true
		}
	}
	return false
}
