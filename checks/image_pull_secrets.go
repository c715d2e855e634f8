package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/images"
)

// ImagePullSecrets judges, per rendered pod (hooks included), the pull
// secrets it gets (its own and its ServiceAccount's, rendered or live)
// against the registries it pulls from. A registry is authenticated when a
// pull secret the release refers to names it, or, with --registry-check,
// when it refuses an anonymous request. Fails naming each pod that pulls
// from an authenticated registry with no secret for it (a hook: the chart
// gives hooks no pull-secret value, so only the nodes' own credentials
// serve it) and each pull secret a pod refers to that does not exist.
func ImagePullSecrets() Check {
	return Check{
		Meta: Meta{
			ID:         "image-pull-secrets",
			Impact:     ImpactRuntimeBreaks,
			Category:   CategoryImages,
			Modes:      ModePre | ModeUpgrade,
			Title:      "Every pod that pulls from an authenticated registry has a pull secret for it",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
			ReadsChart: true,
		},
		Run: runImagePullSecrets,
	}
}

func runImagePullSecrets(ctx context.Context, env *Env) (Result, error) {
	ri, auths, skip, err := pullContext(ctx, env)
	if skip != nil || err != nil {
		return deref(skip), err
	}
	why, err := authenticatedRegistries(ctx, env, ri, auths)
	if err != nil {
		return Result{}, err
	}
	var problems []string
	var objs []ObjectRef
	hooks := false
	for i, p := range ri.Pods {
		a := auths[i]
		var parts []string
		if regs := ri.UnservedRegistries(i, a, func(h string) bool { _, auth := why[h]; return auth }); len(regs) > 0 {
			s := fmt.Sprintf("pulls from %s with no pull secret for it", strings.Join(regs, ", "))
			if p.Hook != "" {
				s += " (a hook: only the nodes' credentials serve it)"
				hooks = true
			}
			parts = append(parts, s)
		}
		if len(a.Missing) > 0 {
			parts = append(parts, fmt.Sprintf("refers to pull secret %s, which does not exist in namespace %s", strings.Join(a.Missing, ", "), podNamespace(p, env.Inputs)))
		}
		if len(parts) > 0 {
			problems = append(problems, podLabel(p)+" "+strings.Join(parts, "; "))
			objs = append(objs, podObject(p, env.Inputs))
		}
	}
	regs := make([]string, 0, len(why))
	for h, w := range why {
		regs = append(regs, h+" ("+w+")")
	}
	sort.Strings(regs)
	if len(problems) > 0 {
		hint := "give each named pod a pull secret for the registry: the component's imagePullSecrets value, or its ServiceAccount's imagePullSecrets, and create the Secret (kubernetes.io/dockerconfigjson) in the namespace"
		if hooks {
			hint += "; the chart has no pull-secret value for its hooks: give the nodes credentials for the registry (a kubelet credential provider or the container runtime's registry configuration), or mirror the hooks' images to a registry that allows anonymous pulls"
		}
		return hookEffect(Fail("%d of %d pods cannot authenticate their pulls; authenticated registries: %s: %s", len(problems), len(ri.Pods), strings.Join(regs, ", "), strings.Join(problems, "; ")).
			WithHint(hint).WithObjects(objs...), hooks), nil
	}
	if len(why) == 0 {
		hint := ""
		if !env.Images.RegistryCheck {
			hint = "--registry-check asks each registry whether it allows anonymous pulls"
		}
		return Pass("no pull secret the release refers to names a registry%s: the %d pods pull anonymously or with the nodes' credentials",
			map[bool]string{true: " and every registry allows anonymous pulls", false: ""}[env.Images.RegistryCheck], len(ri.Pods)).WithHint(hint), nil
	}
	return Pass("every pod that pulls from an authenticated registry (%s) has a pull secret for it", strings.Join(regs, ", ")), nil
}

// authenticatedRegistries returns the registries (images.RegistryHost)
// that need credentials, each with what says so: a pull secret the
// release refers to names it, or, with --registry-check, it refuses an
// anonymous request.
func authenticatedRegistries(ctx context.Context, env *Env, ri *images.Rendered, auths []*images.PodAuths) (map[string]string, error) {
	why := map[string]string{}
	for _, a := range auths {
		for h, s := range a.ByHost {
			if _, ok := why[h]; !ok {
				why[h] = "pull secret " + s + " names it"
			}
		}
	}
	if !env.Images.RegistryCheck {
		return why, nil
	}
	var pulled []string
	for _, r := range ri.Refs {
		if r.Pulled() {
			pulled = append(pulled, r.Ref)
		}
	}
	rs, err := registryResolver(env)
	if err != nil {
		return nil, err
	}
	for h := range rs.RefusingAnonymous(ctx, env.Probe, pulled) {
		why[images.RegistryHost(h)] = "it refuses anonymous pulls"
	}
	return why, nil
}

// pullContext is the pods of the run's rendering (imagesOfRun: skip is set
// when there is none to read) with their pull secrets read
// (images.AuthsOf), once per snapshot.
func pullContext(ctx context.Context, env *Env) (ri *images.Rendered, auths []*images.PodAuths, skip *Result, err error) {
	if ri, skip, err = imagesOfRun(ctx, env); skip != nil || err != nil {
		return nil, nil, skip, err
	}
	read := func() ([]*images.PodAuths, error) {
		out := make([]*images.PodAuths, len(ri.Pods))
		for i, p := range ri.Pods {
			a, err := images.AuthsOf(env.Cluster, ri.Rendering, p, podNamespace(p, env.Inputs))
			if err != nil {
				return nil, err
			}
			out[i] = a
		}
		return out, nil
	}
	auths, err = memoOr(env, "images/pullsecrets", read)
	return ri, auths, nil, err
}
