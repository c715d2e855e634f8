package checks

import (
	"context"
	"fmt"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// RuntimeTokenSecretName is the Secret holding a runtime's own platform
// token (key "token"); the validate-values hook's `cf helm validate` looks
// for it first (CODEFRESH_TOKEN,
// https://github.com/codefresh-io/cli-v2/blob/b36dcf4b468989a9c4738f1dd2a67fb2517d4bc3/cmd/commands/helm.go
// validateWithRuntimeToken).
const RuntimeTokenSecretName = plan.TokenSecretName

// LeftoverRuntimeToken fails when the runtime namespace holds a
// codefresh-token Secret with a token but no Helm release of this name (nor
// any gitops-runtime release) is installed there: a runtime uninstalled with
// chart 0.26 or older leaves it (its pre-delete cleanup does not delete it;
// chart 0.27 and later do,
// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/hooks/pre-uninstall/cleanup-resources.yaml).
// The chart's validate-values hook then runs `cf helm validate` in
// runtime-token mode: it asks the platform for the runtime by name with that
// token, and fails with "failed getting runtime from platform" when that
// runtime is gone; when it still exists, the hook skips the user token's
// Admin role, the account match and the runtime-name check. Impact
// install-fails. Passes when the chart renders no validate-values hook
// (installer.skipValidation): nothing reads the Secret before the install.
// Only the Secret's key lengths are read into the plugin, never its value.
func LeftoverRuntimeToken() Check {
	return Check{
		Meta: Meta{
			ID:         "leftover-runtime-token",
			Impact:     ImpactInstallFails,
			Category:   CategoryConflicts,
			Modes:      ModePre,
			Title:      "No leftover codefresh-token Secret switches the validation hook to runtime-token mode",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
			ReadsChart: true,
			ReplayDiffers: "it sends the leftover runtime token to the platform: a bundle masks the token, " +
				"so a replay judges the mask (***) where the live run sent the token",
		},
		Run: runLeftoverRuntimeToken,
	}
}

func runLeftoverRuntimeToken(ctx context.Context, env *Env) (Result, error) {
	in := env.Inputs
	ns := in.Namespace
	sec, err := env.Cluster.Secret(ns, RuntimeTokenSecretName)
	if err != nil {
		return Result{}, err
	}
	ref := ObjectRef{Kind: "Secret", Namespace: ns, Name: RuntimeTokenSecretName}
	if !sec.Exists {
		return Pass("no Secret %s in namespace %s: the validate-values hook uses the user token", RuntimeTokenSecretName, ns), nil
	}
	if sec.KeyLengths["token"] == 0 {
		return Pass("Secret %s/%s has no token: the validate-values hook uses the user token", ns, RuntimeTokenSecretName).WithObjects(ref), nil
	}
	// A release in the namespace owns it: the runtime's own token (helm
	// upgrade, or another runtime there, which existing-runtime reports).
	revs, err := env.Cluster.HelmRevisions()
	if err != nil {
		return Result{}, err
	}
	for _, r := range revs {
		if r.Namespace == ns && r.Name == in.ReleaseName {
			return Pass("Secret %s/%s belongs to release %s installed in the namespace: the runtime's own token", ns, RuntimeTokenSecretName, r.Name).WithObjects(ref), nil
		}
	}
	releases, _, err := runtimeReleases(env.Cluster)
	if err != nil {
		return Result{}, err
	}
	for _, r := range releases {
		if r.Namespace == ns {
			return Pass("Secret %s/%s belongs to runtime release %s in the namespace (see existing-runtime)", ns, RuntimeTokenSecretName, r.Name).WithObjects(ref), nil
		}
	}
	c, err := readChartRules(ctx, env)
	if err != nil {
		return Result{}, err
	}
	if c.R != nil && c.R.ValidationHooks.ValidateValues == nil {
		return Pass("Secret %s/%s is a leftover, but %s renders no validate-values hook (installer.skipValidation=true): nothing reads it before the install", ns, RuntimeTokenSecretName, c.chartName()).WithObjects(ref), nil
	}
	leftover := fmt.Sprintf("Secret %s/%s holds a runtime token but no Helm release is installed in namespace %s (left by an uninstalled runtime: charts 0.26 and older do not delete it, nor does helm uninstall --no-hooks): the chart's validate-values hook will run in runtime-token mode and ask the platform for runtime %q with that token",
		ns, RuntimeTokenSecretName, ns, in.RuntimeName)
	deleteHint := fmt.Sprintf("if no runtime uses it any more, delete it before installing: kubectl delete secret %s -n %s (the plugin never deletes anything)", RuntimeTokenSecretName, ns)
	// Ask the platform as the hook will, with the token found.
	found, refused, where, err := askRuntimeWithToken(ctx, env)
	switch {
	case err != nil && where == "":
		return Result{}, err
	case err != nil:
		return Warn("%s; the platform did not answer (%s: %v), so which of the two outcomes is unknown: the hook fails with \"failed getting runtime from platform\" if that runtime is gone, and passes, skipping the user token's Admin role, the account match and the runtime-name check, if it still exists", leftover, where, err).
			WithHint(deleteHint).WithObjects(ref), nil
	case found:
		return Pass("%s; the platform knows that runtime (%s), so the hook passes, skipping the user token's Admin role, the account match and the runtime-name check: a reinstall of that runtime", leftover, where).WithObjects(ref), nil
	}
	return Fail("%s, which the platform does not know (%s: %s): the hook fails with \"failed getting runtime from platform\"", leftover, where, refused).
		WithHint(deleteHint).WithObjects(ref), nil
}
