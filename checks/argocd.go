package checks

import (
	"context"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/argocd"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// ArgoCDServerCheck passes when a Service carrying the labels the chart's
// validate-values hook looks for (ARGOCD_LABELS of the rendered hook, from
// installer.argoCdVersionCheck.argoServerLabels; default
// app.kubernetes.io/component=server,app.kubernetes.io/part-of=argocd) is in
// the runtime namespace: the hook fails with "No Argo CD service found
// matching labels" otherwise, and the runtime reaches an external Argo CD by
// bare Service name, so it must be in the same namespace (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/hooks/pre-install/validate-values.yaml
// get_argocd_service_info; https://codefresh.io/docs/docs/installation/gitops/runtime-install-with-existing-argo-cd/).
func ArgoCDServerCheck() Check {
	return Check{
		Meta: Meta{
			ID: "argocd-server", Category: CategoryExistingArgoCD, Modes: ModePre | ModeUpgrade,
			Impact:   ImpactRuntimeBreaks,
			Title:    "Existing Argo CD server Service is in the runtime namespace",
			Severity: SeverityFail, Requires: []string{"cluster-reachable"},
			Applies:    Applies{ExistingArgoCD: true},
			ReadsChart: true,
		},
		Run: runArgoCDServer,
	}
}

func runArgoCDServer(ctx context.Context, env *Env) (Result, error) {
	if r, err := existingArgoCDGate(ctx, env); r != nil || err != nil {
		return derefResult(r), err
	}
	rules, err := readArgoCDRules(ctx, env)
	if err != nil {
		return Result{}, err
	}
	ns := env.Inputs.Namespace
	svcs, err := env.Cluster.ServicesByLabel(ns, rules.Selector)
	if err != nil {
		return Result{}, err
	}
	if len(svcs) == 0 {
		return Fail("no Service labelled %s in namespace %s (labels: %s)", rules.Selector, ns, rules.SelectorFrom).
			WithHint(fmt.Sprintf("install the runtime into Argo CD's namespace (-n), or label its server Service: kubectl label svc <argocd-server> -n %s %s", ns, strings.ReplaceAll(rules.Selector, ",", " "))), nil
	}
	s := svcs[0]
	msg := fmt.Sprintf("Service %s/%s", s.Namespace, s.Name)
	if len(svcs) > 1 {
		msg += fmt.Sprintf(" (%d match; the chart's hook uses the first)", len(svcs))
	}
	return Pass("%s (labels %s: %s)", msg, rules.Selector, rules.SelectorFrom).WithObjects(serviceRef(&s)), nil
}

// ArgoCDVersionCheck passes when the Argo CD server's version, read from the
// image tag of the Deployment behind the server Service the hook finds,
// satisfies the range the chart's validate-values hook enforces:
// REQUIRED_VERSION_CONSTRAINT of the rendered hook (chart 0.30: ">=3.2
// <=3.4"; 0.28–0.29: ">=3 <=3.3"; 0.26–0.27: ">=3 <=3.2"), checked with
// Masterminds/semver as the hook's semver-cli
// (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/hooks/pre-install/validate-values.yaml
// validate_argocd_version). --argocd-version-range replaces the chart's
// range, and the message says so; without a rendered chart, the range of
// chart 0.30.0 applies, and the message says why. A tag of latest or a
// digest only is a warn: the version is unknown.
func ArgoCDVersionCheck() Check {
	return Check{
		Meta: Meta{
			ID: "argocd-version", Category: CategoryExistingArgoCD, Modes: ModePre | ModeUpgrade,
			Impact:   ImpactInstallFails,
			Title:    "Existing Argo CD version is in the range the chart's validation hook accepts",
			Severity: SeverityFail, Requires: []string{"argocd-server"},
			Applies:    Applies{ExistingArgoCD: true},
			ReadsChart: true,
		},
		Run: runArgoCDVersion,
	}
}

func runArgoCDVersion(ctx context.Context, env *Env) (Result, error) {
	if r, err := existingArgoCDGate(ctx, env); r != nil || err != nil {
		return derefResult(r), err
	}
	rules, err := readArgoCDRules(ctx, env)
	if err != nil {
		return Result{}, err
	}
	res, err := judgeArgoCDVersion(env, rules)
	switch {
	case err != nil || res.Status == StatusPass:
	case !rules.Enforced:
		// Nothing stops the install: the runtime meets the unsupported
		// Argo CD afterwards.
		res.Effect = ImpactRuntimeBreaks
	case env.Upgrading():
		// The hook runs on pre-upgrade (and as Argo CD's PreSync): the
		// upgrade fails in it.
		res.Effect = ImpactUpgradeFails
	}
	return res, err
}

func judgeArgoCDVersion(env *Env, rules argoCDRules) (Result, error) {
	rng := rules.Range
	constraint, err := semver.NewConstraint(rng)
	if err != nil {
		return Result{}, fmt.Errorf("Argo CD version range %q (%s): %w", rng, rules.RangeFrom, err)
	}
	ns := env.Inputs.Namespace
	svcs, err := env.Cluster.ServicesByLabel(ns, rules.Selector)
	if err != nil {
		return Result{}, err
	}
	if len(svcs) == 0 {
		return Fail("no Argo CD server Service (labels %s) in namespace %s: the hook cannot read Argo CD's version", rules.Selector, ns), nil
	}
	svc := svcs[0]
	deps, err := env.Cluster.Deployments()
	if err != nil {
		return Result{}, err
	}
	for _, d := range deps {
		if d.Namespace != ns || len(svc.Selector) == 0 || !labels.SelectorFromSet(svc.Selector).Matches(labels.Set(d.PodLabels)) {
			continue
		}
		ref := workloadRef(d)
		for _, c := range d.Containers {
			repo, _ := imageName(c.Image)
			if !strings.Contains(repo, "argocd") {
				continue
			}
			tag := imageTag(c.Image)
			if tag == "" || tag == "latest" {
				return Warn("Argo CD server image %s has no version tag: version unknown, cannot check range %q (%s)", c.Image, rng, rules.RangeFrom).
					WithHint("pin the Argo CD image to a release tag, or check by hand: kubectl exec -n " + ns + " deploy/" + d.Name + " -- argocd version --client").
					WithObjects(ref), nil
			}
			v, err := semver.NewVersion(strings.TrimPrefix(tag, "v"))
			if err != nil {
				return Warn("Argo CD server image tag %q is not a version: cannot check range %q (%s)", tag, rng, rules.RangeFrom).WithObjects(ref), nil
			}
			if !constraint.Check(v) {
				return Fail("Argo CD %s does not satisfy %q (%s)", tag, rng, rules.RangeFrom).
					WithHint("upgrade Argo CD to a version in the range, or install a chart version whose validate-values hook accepts " + tag + " (chart README, Argo CD compatibility)").
					WithObjects(ref), nil
			}
			return Pass("Argo CD %s satisfies %q (%s)", tag, rng, rules.RangeFrom).WithObjects(ref), nil
		}
	}
	return Fail("no Argo CD server Deployment behind Service %s/%s (selector %s) in namespace %s", svc.Namespace, svc.Name, labels.SelectorFromSet(svc.Selector), ns).WithObjects(serviceRef(&svc)), nil
}

// imageTag returns the tag of an image reference, "" for a digest only.
func imageTag(image string) string {
	image, _, _ = strings.Cut(image, "@")
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		return image[i+1:]
	}
	return ""
}

// ArgoCDAdminAPIKeyCheck passes when argocd-cm in the runtime namespace gives
// the runtime's Argo CD user (global.integrations.argo-cd.server.auth.username,
// default admin) the apiKey and login capabilities and does not disable it
// (accounts.<user>.enabled: "false"): the runtime creates an API token for it
// (the chart's README, https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/README.md: a password user needs the apiKey capability; https://codefresh.io/docs/docs/installation/gitops/runtime-install-with-existing-argo-cd/). Skipped with auth.type=token.
func ArgoCDAdminAPIKeyCheck() Check {
	return Check{
		Meta: Meta{
			ID: "argocd-admin-apikey", Category: CategoryExistingArgoCD, Modes: ModePre,
			Impact:   ImpactRuntimeBreaks,
			Title:    "Argo CD admin account has apiKey and login",
			Severity: SeverityFail, Requires: []string{"argocd-server"},
			Applies: Applies{ExistingArgoCD: true},
		},
		Run: runArgoCDAdminAPIKey,
	}
}

func runArgoCDAdminAPIKey(_ context.Context, env *Env) (Result, error) {
	if env.Inputs.ArgoCDAuthType == "token" {
		return Skip("global.integrations.argo-cd.server.auth.type is token: no account capability needed"), nil
	}
	user := env.Inputs.ArgoCDUser
	ns := env.Inputs.Namespace
	cm, err := env.Cluster.ConfigMap(ns, plan.ArgoCDConfigMapName)
	if err != nil {
		return Result{}, err
	}
	ref := ObjectRef{Kind: "ConfigMap", Namespace: ns, Name: plan.ArgoCDConfigMapName}
	acct := argocd.AccountOf(cm.Data, user)
	key := acct.Key
	patch := fmt.Sprintf("kubectl patch configmap argocd-cm -n %s --type merge -p '{\"data\":{\"%s\":\"apiKey, login\"}}'", ns, key)
	if !cm.Exists {
		return Fail("ConfigMap argocd-cm not found in namespace %s", ns).WithHint(patch), nil
	}
	if acct.Disabled {
		return Fail("argocd-cm disables the %s account (%s.enabled: \"false\")", user, key).
			WithHint(fmt.Sprintf("kubectl patch configmap argocd-cm -n %s --type json -p '[{\"op\":\"remove\",\"path\":\"/data/%s.enabled\"}]'", ns, key)).WithObjects(ref), nil
	}
	if missing := acct.Lacks(argocd.CapabilityAPIKey, argocd.CapabilityLogin); len(missing) > 0 {
		return Fail("argocd-cm %s lacks %s (has %q)", key, strings.Join(missing, " and "), acct.Capabilities).WithHint(patch).WithObjects(ref), nil
	}
	return Pass("argocd-cm %s: %s", key, acct.Capabilities).WithObjects(ref), nil
}

// existingArgoCDGate is, in an --upgrade run, the not-applicable skip of a
// check of a runtime that brings its own Argo CD when the values the
// upgrade renders with leave the chart's Argo CD on (targetPlanned: Helm's
// computed values of the target; for a commit Argo CD syncs, those of the
// runtime chart inside the umbrella chart). Helm reuses the release's
// values when none is given, and an umbrella chart nests them under
// gitops-runtime:, so the flags' values cannot tell. nil before an install,
// where the registry decides from the flags' values
// (Applies.ExistingArgoCD).
func existingArgoCDGate(ctx context.Context, env *Env) (*Result, error) {
	if !env.Upgrading() {
		return nil, nil
	}
	u, err := env.Upgrade(ctx)
	if err != nil {
		if r, ok := upgradeSkip(err); ok {
			return &r, nil
		}
		return nil, err
	}
	if targetPlanned(u).ExistingArgoCD {
		return nil, nil
	}
	r := Skip("%sArgo CD is installed by the chart (argo-cd.enabled=true in the values the upgrade renders with); this check is for a runtime that brings its own Argo CD (argo-cd.enabled=false)", NotApplicable)
	return &r, nil
}
