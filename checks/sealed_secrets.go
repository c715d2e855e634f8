package checks

import (
	"context"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/apply"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// SealedSecretsCRD is the CRD of Bitnami SealedSecrets, which the runtime's
// sealed-secrets subchart installs from its crds/ directory
// (https://github.com/bitnami-labs/sealed-secrets/tree/helm-v2.18.0/helm/sealed-secrets/crds).
const SealedSecretsCRD = "sealedsecrets.bitnami.com"

// SealedSecrets fails when a SealedSecrets controller runs in the cluster:
// "The cluster should not have SealedSecret controller components" (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "SealedSecrets controller"); the runtime installs
// its own (sealed-secrets-controller, https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/values.yaml). A leftover
// sealedsecrets.bitnami.com CRD without a controller only warns: Helm installs
// crds/ files on first install only and skips existing ones. Before `helm
// upgrade` (--upgrade) the controller of the release being upgraded (Helm
// ownership annotations naming it) is the runtime's own, and the CRD is
// expected: only another installation fails, and only when the target runs
// a SealedSecrets controller too.
func SealedSecrets() Check {
	return Check{
		Meta: Meta{
			ID:         "sealed-secrets",
			Impact:     ImpactRuntimeBreaks,
			Category:   CategoryConflicts,
			ReadsChart: true,
			Modes:      ModePre | ModeUpgrade,
			Title:      "No SealedSecrets controller in the cluster",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
		},
		Run: runSealedSecrets,
	}
}

// FindSealedSecretsControllers returns the workloads that are a SealedSecrets
// controller: labelled app.kubernetes.io/name=sealed-secrets or
// app.kubernetes.io/part-of=sealed-secrets (bitnami-labs/sealed-secrets Helm
// chart), named sealed-secrets-controller (its controller.yaml and the
// chart's default fullname), or running a sealed-secrets-controller image
// (docker.io/bitnami/sealed-secrets-controller, quay.io/codefresh/...).
func FindSealedSecretsControllers(ws []cluster.Workload) []ObjectRef {
	var out []ObjectRef
	for i := range ws {
		w := &ws[i]
		if isSealedSecretsController(w) {
			out = append(out, ObjectRef{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name})
		}
	}
	return out
}

func isSealedSecretsController(w *cluster.Workload) bool {
	if w.Name == "sealed-secrets-controller" {
		return true
	}
	for _, labels := range [2]map[string]string{w.Labels, w.PodLabels} {
		if labels[labelName] == "sealed-secrets" || labels[labelPartOf] == "sealed-secrets" || labels["name"] == "sealed-secrets-controller" {
			return true
		}
	}
	for _, c := range w.Containers {
		repo := c.Image
		if i := strings.IndexAny(repo, "@"); i >= 0 {
			repo = repo[:i]
		}
		if i := strings.LastIndexByte(repo, '/'); i >= 0 {
			repo = repo[i+1:]
		}
		if i := strings.IndexByte(repo, ':'); i >= 0 {
			repo = repo[:i]
		}
		if repo == "sealed-secrets-controller" {
			return true
		}
	}
	return false
}

func runSealedSecrets(ctx context.Context, env *Env) (Result, error) {
	deps, err := env.Cluster.Deployments()
	if err != nil {
		return Result{}, err
	}
	ctrls := FindSealedSecretsControllers(deps)
	var own, beside []ObjectRef
	if env.Upgrading() {
		owned := apply.OwnedWorkloads(env.Inputs.ReleaseName, env.Inputs.Namespace, deps)
		target, known, err := upgradeTargetWorkloads(ctx, env)
		if err != nil {
			return Result{}, err
		}
		runs := len(FindSealedSecretsControllers(target)) > 0
		kept := ctrls[:0:0]
		for _, r := range ctrls {
			switch {
			case owned[r.Kind+"/"+r.Namespace+"/"+r.Name]:
				own = append(own, r)
			case known && !runs:
				beside = append(beside, r)
			default:
				kept = append(kept, r)
			}
		}
		ctrls = kept
	}
	if len(ctrls) > 0 {
		names := make([]string, len(ctrls))
		for i, r := range ctrls {
			names[i] = r.Namespace + "/" + r.Name
		}
		hint := ""
		if env.Upgrading() {
			hint = fmt.Sprintf("this controller does not belong to release %s in namespace %s (no Helm ownership annotations naming it); ", env.Inputs.ReleaseName, env.Inputs.Namespace)
		}
		return Fail("SealedSecrets controller found: Deployment %s", strings.Join(names, ", Deployment ")).
			WithHint(hint + "the runtime installs its own SealedSecrets controller; uninstall this one (e.g. helm uninstall <release> -n <namespace>) keeping the sealedsecrets.bitnami.com CRD and existing SealedSecrets").
			WithObjects(ctrls...), nil
	}
	deploymentNames := func(refs []ObjectRef) string {
		names := make([]string, len(refs))
		for i, r := range refs {
			names[i] = r.Namespace + "/" + r.Name
		}
		return strings.Join(names, ", Deployment ")
	}
	if len(beside) > 0 {
		return Pass("the upgraded runtime runs no SealedSecrets controller: Deployment %s is not a conflict", deploymentNames(beside)), nil
	}
	if len(own) > 0 {
		return Pass("the only SealedSecrets controller is release %s's own (Deployment %s), which the upgrade updates", env.Inputs.ReleaseName, deploymentNames(own)), nil
	}
	crds, err := env.Cluster.CRDs()
	if err != nil {
		return Result{}, err
	}
	for _, c := range crds {
		if c.Name == SealedSecretsCRD {
			return Warn("no SealedSecrets controller, but CRD %s is left over", SealedSecretsCRD).
				WithHint("Helm does not install or upgrade a CRD from the chart's crds/ directory when it exists: the runtime keeps this one; delete it only if no SealedSecret is in use (kubectl get sealedsecrets -A)").
				WithObjects(ObjectRef{Kind: "CustomResourceDefinition", Name: c.Name}), nil
		}
	}
	return Pass("no SealedSecrets controller and no %s CRD", SealedSecretsCRD), nil
}
