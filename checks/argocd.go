package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/values"
)

// DefaultArgoCDVersionRange is the chart's REQUIRED_VERSION_CONSTRAINT for an
// existing Argo CD on main (https://github.com/codefresh-io/gitops-runtime-helm/blob/5bf822951dc90b7b2f8a0425627f6ee5aeb087a4/charts/gitops-runtime/templates/hooks/pre-install/_env.yaml#L25;
// stable/0.30 uses ">=3.2 <=3.4": pass --argocd-version-range).
const DefaultArgoCDVersionRange = ">=3 <=3.3"

// argoServerSelector are the labels the chart's validate-values hook uses to
// find the Argo CD server Service (installer.argoCdVersionCheck.argoServerLabels,
// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/values.yaml, https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/hooks/pre-install/validate-values.yaml; https://codefresh.io/docs/docs/installation/gitops/runtime-install-with-existing-argo-cd/).
const argoServerSelector = "app.kubernetes.io/component=server,app.kubernetes.io/part-of=argocd"

// ArgoCDServerCheck passes when a Service labelled
// app.kubernetes.io/component=server,app.kubernetes.io/part-of=argocd is in
// the runtime namespace: the chart's hook fails with "No Argo CD service found
// matching labels" otherwise, and the runtime reaches an external Argo CD by
// bare Service name, so it must be in the same namespace (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/values.yaml, https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/hooks/pre-install/validate-values.yaml step 1).
func ArgoCDServerCheck() Check {
	return Check{
		Meta: Meta{
			ID: "argocd-server", Category: CategoryExistingArgoCD, Modes: ModePre,
			Impact:   ImpactRuntimeBreaks,
			Title:    "Existing Argo CD server Service is in the runtime namespace",
			Severity: SeverityFail, Requires: []string{"cluster-reachable"},
			Applies: Applies{ExistingArgoCD: true},
		},
		Run: runArgoCDServer,
	}
}

func runArgoCDServer(_ context.Context, env *Env) (Result, error) {
	ns := env.Inputs.Namespace
	svcs, err := env.Cluster.ServicesByLabel(ns, argoServerSelector)
	if err != nil {
		return Result{}, err
	}
	if len(svcs) == 0 {
		return Fail("no Service labelled %s in namespace %s", argoServerSelector, ns).
			WithHint(fmt.Sprintf("install the runtime into Argo CD's namespace (-n), or label its server Service: kubectl label svc <argocd-server> -n %s app.kubernetes.io/component=server app.kubernetes.io/part-of=argocd", ns)), nil
	}
	s := svcs[0]
	msg := fmt.Sprintf("Service %s/%s", s.Namespace, s.Name)
	if len(svcs) > 1 {
		msg += fmt.Sprintf(" (%d match; the chart's hook uses the first)", len(svcs))
	}
	return Pass("%s", msg).WithObjects(serviceRef(&s)), nil
}

// ArgoCDVersionCheck passes when the Argo CD server's version, read from its
// image tag, satisfies the chart's range (default ">=3 <=3.3",
// --argocd-version-range; Masterminds/semver as the hook's semver-cli,
// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/hooks/pre-install/validate-values.yaml step 6). A tag of latest or a digest only is a warn:
// the version is unknown.
func ArgoCDVersionCheck() Check {
	return Check{
		Meta: Meta{
			ID: "argocd-version", Category: CategoryExistingArgoCD, Modes: ModePre,
			Impact:   ImpactRuntimeBreaks,
			Title:    "Existing Argo CD version is in the chart's supported range",
			Severity: SeverityFail, Requires: []string{"argocd-server"},
			Applies: Applies{ExistingArgoCD: true},
		},
		Run: runArgoCDVersion,
	}
}

func runArgoCDVersion(_ context.Context, env *Env) (Result, error) {
	rng := env.Inputs.ArgoCDVersionRange
	if rng == "" {
		rng = DefaultArgoCDVersionRange
	}
	constraint, err := semver.NewConstraint(rng)
	if err != nil {
		return Result{}, fmt.Errorf("--argocd-version-range %q: %w", rng, err)
	}
	ns := env.Inputs.Namespace
	deps, err := env.Cluster.Deployments()
	if err != nil {
		return Result{}, err
	}
	for _, d := range deps {
		if d.Namespace != ns || d.Labels["app.kubernetes.io/part-of"] != "argocd" ||
			(d.Labels["app.kubernetes.io/component"] != "server" && d.Labels["app.kubernetes.io/name"] != "argocd-server") {
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
				return Warn("Argo CD server image %s has no version tag: version unknown, cannot check range %q", c.Image, rng).
					WithHint("pin the Argo CD image to a release tag, or check by hand: kubectl exec -n " + ns + " deploy/" + d.Name + " -- argocd version --client").
					WithObjects(ref), nil
			}
			v, err := semver.NewVersion(strings.TrimPrefix(tag, "v"))
			if err != nil {
				return Warn("Argo CD server image tag %q is not a version: cannot check range %q", tag, rng).WithObjects(ref), nil
			}
			if !constraint.Check(v) {
				return Fail("Argo CD %s does not satisfy the chart's range %q", tag, rng).
					WithHint("upgrade Argo CD to a version in the range (chart README compatibility table), or install a chart version that supports " + tag).
					WithObjects(ref), nil
			}
			return Pass("Argo CD %s satisfies %q", tag, rng).WithObjects(ref), nil
		}
	}
	return Fail("no Argo CD server Deployment (labels app.kubernetes.io/part-of=argocd, component=server) in namespace %s", ns), nil
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
	v := env.Inputs.Values
	if t := values.String(v, "global.integrations.argo-cd.server.auth.type"); t == "token" {
		return Skip("global.integrations.argo-cd.server.auth.type is token: no account capability needed"), nil
	}
	user := values.String(v, "global.integrations.argo-cd.server.auth.username")
	if user == "" {
		user = values.DefaultArgoCDUser
	}
	ns := env.Inputs.Namespace
	cm, err := env.Cluster.ConfigMap(ns, "argocd-cm")
	if err != nil {
		return Result{}, err
	}
	ref := ObjectRef{Kind: "ConfigMap", Namespace: ns, Name: "argocd-cm"}
	key := "accounts." + user
	patch := fmt.Sprintf("kubectl patch configmap argocd-cm -n %s --type merge -p '{\"data\":{\"%s\":\"apiKey, login\"}}'", ns, key)
	if !cm.Exists {
		return Fail("ConfigMap argocd-cm not found in namespace %s", ns).WithHint(patch), nil
	}
	if cm.Data[key+".enabled"] == "false" {
		return Fail("argocd-cm disables the %s account (%s.enabled: \"false\")", user, key).
			WithHint(fmt.Sprintf("kubectl patch configmap argocd-cm -n %s --type json -p '[{\"op\":\"remove\",\"path\":\"/data/%s.enabled\"}]'", ns, key)).WithObjects(ref), nil
	}
	caps := map[string]bool{}
	for _, c := range strings.Split(cm.Data[key], ",") {
		caps[strings.TrimSpace(c)] = true
	}
	var missing []string
	for _, c := range []string{"apiKey", "login"} {
		if !caps[c] {
			missing = append(missing, c)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		return Fail("argocd-cm %s lacks %s (has %q)", key, strings.Join(missing, " and "), cm.Data[key]).WithHint(patch).WithObjects(ref), nil
	}
	return Pass("argocd-cm %s: %s", key, cm.Data[key]).WithObjects(ref), nil
}
