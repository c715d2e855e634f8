package checks

import (
	"context"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// What each of the chart's pre-install validation hooks checks before Helm
// creates anything (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/hooks/pre-install/validate-values.yaml,
// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/hooks/pre-install/validate-usage.yaml;
// `cf helm validate`: https://github.com/codefresh-io/cli-v2/blob/b36dcf4b468989a9c4738f1dd2a67fb2517d4bc3/cmd/commands/helm.go).
const (
	validateValuesCovers = "the existing Argo CD's version, and `cf helm validate`: global.runtime.name, the access mode's values " +
		"(ingress host answering, IngressClass present; accountId for the tunnel), the user token's Admin role, its account matching " +
		"global.codefresh.accountId, the runtime name being free on the platform, and the git credentials"
	validateUsageCovers = "`cf account validate-usage`: the account's limit of clusters"
)

// ValidationHooks warns when the chart being installed will not run its
// pre-install validation hooks: installer.skipValidation=true (the docs'
// workaround for a failing hook, https://codefresh.io/docs/gitops/gitops-runtimes/gitops-values-yaml-validation)
// removes the validate-values Job, installer.skipUsageValidation=true the
// validate-usage Job. Read from the rendered hooks (the message names the
// chart version); without a rendered chart, from the values. Advisory: the
// install goes through, and what the hooks would have refused surfaces as a
// broken runtime instead.
func ValidationHooks() Check {
	return Check{
		Meta: Meta{
			ID:         "validation-hooks",
			Impact:     ImpactAdvisory,
			Category:   CategoryInputs,
			Modes:      ModePre | ModeUpgrade,
			Title:      "The chart's pre-install validation hooks will run",
			Severity:   SeverityWarn,
			ReadsChart: true,
		},
		Run: runValidationHooks,
	}
}

func runValidationHooks(ctx context.Context, env *Env) (Result, error) {
	c, err := readChartRules(ctx, env)
	if err != nil {
		return Result{}, err
	}
	skipValues, skipUsage := env.Inputs.SkipValidation, env.Inputs.SkipUsageValidation
	from := c.Missing + ": read from the values"
	if c.R != nil {
		skipValues, skipUsage = c.R.ValidationHooks.ValidateValues == nil, !c.R.ValidationHooks.ValidateUsage
		from = c.chartName() + ", rendered with these values"
	}
	when := "before Helm installs"
	hooks := fmt.Sprintf("the %s and %s hooks run", plan.ValidateValuesJob, plan.ValidateUsageJob)
	if env.Upgrading() {
		if s := syncOf(ctx, env); s != nil {
			when = fmt.Sprintf("as PreSync hooks of every sync of Application %s (Argo CD runs pre-install and pre-upgrade hooks on each sync)", s.App)
		} else {
			// validate-usage is pre-install only: helm upgrade never runs it.
			when = "before helm upgrade (pre-upgrade; " + plan.ValidateUsageJob + " runs at install only)"
			hooks = fmt.Sprintf("the %s hook runs", plan.ValidateValuesJob)
			skipUsage = false
		}
	}
	var off []string
	if skipValues {
		off = append(off, fmt.Sprintf("installer.skipValidation=true: no %s hook, so nothing checks %s", plan.ValidateValuesJob, validateValuesCovers))
	}
	if skipUsage {
		off = append(off, fmt.Sprintf("installer.skipUsageValidation=true: no %s hook, so nothing checks %s", plan.ValidateUsageJob, validateUsageCovers))
	}
	if len(off) == 0 {
		return Pass("%s %s (%s)", hooks, when, from), nil
	}
	return Warn("%s (%s)", strings.Join(off, "; "), from).
		WithHint("remove installer.skipValidation / installer.skipUsageValidation once the cause of the hook's failure is fixed (kubectl gitops-preflight checks most of it from here)").
		WithSource(env.firstSource(skipSources(skipValues, skipUsage)...)), nil
}

// UserTokenSecret warns when the Codefresh user token is given as a plain
// value (global.codefresh.userToken.token): the chart copies the release's
// values, token included, into the helm-values-config ConfigMap its hooks
// read (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/hooks/pre-install/helm-values-cm.yaml:
// `.Values | toYaml`, where each subchart's values repeat the globals), so
// for the hooks' lifetime the token is readable by anyone who may read
// ConfigMaps in the namespace; a secretKeyRef keeps it in a Secret
// (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/).
// The token never appears in the message.
func UserTokenSecret() Check {
	return Check{
		Meta: Meta{
			ID:         "user-token-secret",
			Impact:     ImpactAdvisory,
			Category:   CategoryInputs,
			Modes:      ModePre,
			Title:      "The user token is referenced from a Secret, not given as a plain value",
			Severity:   SeverityWarn,
			ReadsChart: true,
		},
		Run: runUserTokenSecret,
	}
}

func runUserTokenSecret(ctx context.Context, env *Env) (Result, error) {
	if !env.Inputs.PlainUserToken {
		return Pass("global.codefresh.userToken.token is not set as a plain value"), nil
	}
	r, err := userTokenSecretResult(ctx, env)
	return r.WithSource(env.Source("global.codefresh.userToken.token")), err
}

func userTokenSecretResult(ctx context.Context, env *Env) (Result, error) {
	c, err := readChartRules(ctx, env)
	if err != nil {
		return Result{}, err
	}
	ns := env.Inputs.Namespace
	hint := fmt.Sprintf("kubectl create secret generic cf-user-token -n %s --from-literal=token=<your Codefresh API key>, then give --set global.codefresh.userToken.secretKeyRef.name=cf-user-token --set global.codefresh.userToken.secretKeyRef.key=token instead of global.codefresh.userToken.token", ns)
	switch {
	case c.R == nil:
		return Warn("global.codefresh.userToken.token is given as a plain value: the chart copies the values, token included, into ConfigMap %s in namespace %s while its hooks run (%s)", plan.HelmValuesConfigMap, ns, c.defaultsNote()).WithHint(hint), nil
	case !c.R.ValidationHooks.ValuesConfigMap:
		return Warn("global.codefresh.userToken.token is given as a plain value: it is stored in the release's values (helm get values shows it); %s renders no %s ConfigMap with these values", c.chartName(), plan.HelmValuesConfigMap).WithHint(hint), nil
	}
	return Warn("global.codefresh.userToken.token is given as a plain value: %s copies the values, token included, into ConfigMap %s in namespace %s, readable there while its hooks run",
		c.chartName(), plan.HelmValuesConfigMap, ns).
		WithHint(hint).
		WithObjects(ObjectRef{Kind: "ConfigMap", Namespace: ns, Name: plan.HelmValuesConfigMap}), nil
}

// skipSources are the values paths that switched the hooks off.
func skipSources(skipValues, skipUsage bool) []string {
	var out []string
	if skipValues {
		out = append(out, "installer.skipValidation")
	}
	if skipUsage {
		out = append(out, "installer.skipUsageValidation")
	}
	return out
}
