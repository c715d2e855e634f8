package checks

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// UpgradeValues compares, by what the runtime does with them, the values the
// deployed revision's templates saw with those the target's will see, as
// Helm's action.Upgrade computes them for the flags given (no values flag:
// the previous values reused; -f/--set: only those, over the target chart's
// defaults; --reuse-values, --reset-values, --reset-then-reuse-values;
// https://helm.sh/docs/helm/helm_upgrade/). It fails, impact upgrade-fails,
// when a value the runtime depends on (valueEffects: runtime name, account,
// token source) is set in the deployed revision and not in the target;
// warns listing every changed effect (access mode and its host, Argo CD
// integration, image registry); and notes the keys the user set that the
// target chart neither defaults nor names in any template (the chart has
// no schema: Helm ignores them silently).
func UpgradeValues() Check {
	return Check{
		Meta: Meta{
			ID:                 "upgrade-values",
			Impact:             ImpactUpgradeFails,
			ReadsChart:         true,
			ReadsIgnoredValues: true,
			Category:           CategoryUpgrade,
			Modes:              ModeUpgrade,
			Title:              "The upgrade keeps the values the runtime depends on",
			Severity:           SeverityFail,
			Requires:           []string{"release-upgradable"},
		},
		Run: versionAnchored(runUpgradeValues),
	}
}

// valueEffect is one thing the runtime does with its values; required ones
// may not disappear in an upgrade.
type valueEffect struct {
	Name     string
	Required bool
	Of       func(v map[string]any) string
}

var valueEffects = []valueEffect{
	{Name: "runtime name (global.runtime.name)", Required: true, Of: func(v map[string]any) string { return plan.String(v, "global.runtime.name") }},
	{Name: "account (global.codefresh.accountId)", Required: true, Of: func(v map[string]any) string { return plan.String(v, "global.codefresh.accountId") }},
	{Name: "user token source (global.codefresh.userToken)", Required: true, Of: tokenSource},
	{Name: "access mode", Of: func(v map[string]any) string { return string(plan.Derive(v).Mode) }},
	{Name: "ingress host (global.runtime.ingress.hosts[0])", Of: func(v map[string]any) string { return plan.Derive(v).IngressHost }},
	{Name: "runtime URL (global.runtime.ingressUrl)", Of: func(v map[string]any) string { return plan.Derive(v).IngressURL }},
	{Name: "bundled Argo CD (argo-cd.enabled)", Of: func(v map[string]any) string {
		return fmt.Sprint(plan.Bool(v, true, "argo-cd.enabled"))
	}},
}

// tokenSource says where the user token comes from, never its value.
func tokenSource(v map[string]any) string {
	if plan.String(v, "global.codefresh.userToken.token") != "" {
		return "a plain value"
	}
	if n := plan.String(v, "global.codefresh.userToken.secretKeyRef.name"); n != "" {
		return "Secret " + n + " key " + plan.String(v, "global.codefresh.userToken.secretKeyRef.key")
	}
	return ""
}

func runUpgradeValues(ctx context.Context, env *Env) (Result, error) {
	up, err := env.Upgrade(ctx)
	rel, ns := env.Inputs.ReleaseName, env.Inputs.Namespace
	if re, ok := chart.IsRenderError(err); ok {
		msg := "the target chart does not render with the effective values: " + re.Message()
		if len(env.Inputs.RenderValues) > 0 {
			msg += " (with -f or --set, helm upgrade does not reuse the previous values)"
		}
		return Fail("%s", msg).WithHint(fmt.Sprintf("give helm upgrade every values file of the install again (helm get values %s -n %s > previous.yaml; -f previous.yaml -f ...), or add --reset-then-reuse-values", rel, ns)), nil
	}
	if r, ok := upgradeSkip(err); ok {
		return r, nil
	}
	if err != nil {
		return Result{}, err
	}
	base := fmt.Sprintf("revision %d", up.Current.Version)
	if up.Sync != nil {
		base = "what Argo CD deployed (Application " + up.Sync.App + ")"
	}
	dropped, changed := valueChanges(up)
	if len(dropped) > 0 {
		return droppedFail(env, up, dropped, base), nil
	}
	if reg := registryChange(up); reg != "" {
		changed = append(changed, reg)
	}
	ignored, err := env.Chart.Ignored(ctx)
	if err != nil {
		if _, ok := chart.IsRenderError(err); !ok {
			return Result{}, err
		}
		ignored = &chart.Ignored{}
	}
	return wordValueChanges(env, up, base, changed, ignored), nil
}

// valueChanges compares each value of valueEffects in the values of the
// revision upgraded from and of the target: the required ones the target
// drops, and the others it sets, unsets or changes. Without the deployed
// values (Argo CD keeps none of what it deployed) only what the target
// needs is judged: its manifest speaks for the rest.
func valueChanges(up *chart.Upgrade) (dropped, changed []string) {
	for _, e := range valueEffects {
		was, now := e.Of(up.CurrentComputed), e.Of(up.TargetComputed)
		if up.CurrentComputed == nil {
			if now == "" && e.Required {
				dropped = append(dropped, e.Name)
			}
			continue
		}
		switch {
		case was == now:
		case now == "" && e.Required:
			dropped = append(dropped, e.Name)
		case was == "":
			changed = append(changed, fmt.Sprintf("%s: set to %q", e.Name, now))
		case now == "":
			changed = append(changed, fmt.Sprintf("%s: %q unset", e.Name, was))
		default:
			changed = append(changed, fmt.Sprintf("%s: %q → %q", e.Name, was, now))
		}
	}
	return dropped, changed
}

// droppedFail is the failure of an upgrade that drops a value the runtime
// needs (set in base, the revision upgraded from).
func droppedFail(env *Env, up *chart.Upgrade, dropped []string, base string) Result {
	rel, ns := env.Inputs.ReleaseName, env.Inputs.Namespace
	msg := fmt.Sprintf("the upgrade drops %s (set in %s)", strings.Join(dropped, ", "), base)
	hint := fmt.Sprintf("give helm upgrade every values file of the install again (helm get values %s -n %s > previous.yaml; -f previous.yaml -f ...), or add --reset-then-reuse-values", rel, ns)
	switch {
	case up.Sync != nil:
		msg = fmt.Sprintf("the commit's chart leaves %s unset: the runtime needs it", strings.Join(dropped, ", "))
		hint = "set it in the values of resources/<runtime-name>/chart (under gitops-runtime: or global:) or in the Application's spec.source.helm, and commit"
	case len(env.Inputs.RenderValues) > 0:
		msg += ": with -f or --set, helm upgrade does not reuse the previous values"
	}
	return Fail("%s", msg).WithHint(hint)
}

// wordValueChanges words what the upgrade changes of the values, the new
// chart defaults --reuse-values keeps out and the values the target
// ignores: a warning (advice when the target only ignores values), else a
// pass.
func wordValueChanges(env *Env, up *chart.Upgrade, base string, changed []string, ignored *chart.Ignored) Result {
	rel, ns := env.Inputs.ReleaseName, env.Inputs.Namespace
	var warns, hints []string
	if len(changed) > 0 {
		warns = append(warns, "the upgrade changes "+strings.Join(changed, "; "))
		if up.Sync != nil {
			hints = append(hints, "if a change is not meant, fix the values of resources/<runtime-name>/chart before the commit is synced")
		} else {
			hints = append(hints, "if a change is not meant, give the values of the install again (helm get values "+rel+" -n "+ns+")")
		}
	}
	if kept := keptDefaults(up); len(kept) > 0 {
		warns = append(warns, fmt.Sprintf("--reuse-values keeps the deployed chart's defaults: %s of chart %s will not apply: %s",
			plural(len(kept), "new default"), up.Target.ChartVersion, strings.Join(first(kept, 6), ", ")))
		hints = append(hints, "to take the new chart's defaults with your previous values, use --reset-then-reuse-values (Helm ≥ 3.14) instead of --reuse-values")
	}
	if len(ignored.Paths) > 0 {
		warns = append(warns, fmt.Sprintf("the target chart %s ignores %s you give: %s (removing each leaves its rendered manifest unchanged: a key it does not read, renamed or removed; Helm ignores it silently)",
			up.Target.ChartVersion, plural(len(ignored.Paths), "value"), strings.Join(first(ignored.Paths, 8), ", ")))
		hints = append(hints, "move them to the keys the target reads (see the chart's release notes and values.yaml), or drop them")
	}
	if len(warns) > 0 {
		r := Warn("%s", strings.Join(warns, "; ")).WithHint(strings.Join(hints, "\n"))
		if len(ignored.Paths) > 0 {
			// Where the first value the target ignores is given: a values
			// file's line (an umbrella chart's values.yaml too), or a flag.
			r = r.WithSource(env.Source(ignored.Paths[0]))
		}
		if len(changed) == 0 && len(keptDefaults(up)) == 0 {
			// Only values the target ignores: advice (the contract's
			// "advisory for user-set keys the target chart no longer reads").
			r = r.WithEffect(ImpactAdvisory)
		}
		return r
	}
	return Pass("runtime name, account, token source, access mode, Argo CD and image registries are as in %s; the target reads every value given (%s)", base, plural(ignored.Renders, "render"))
}

// registryChange says how the image registries the runtime's pods pull
// from change between the deployed manifest and the target's (every
// registry of the Deployments, StatefulSets and Jobs of each); "" when
// they are the same or cannot be read.
func registryChange(up *chart.Upgrade) string {
	was, err1 := manifestRegistries(up.Current.Manifest)
	now, err2 := manifestRegistries(up.TargetManifest)
	if err1 != nil || err2 != nil || len(was) == 0 || len(now) == 0 || slices.Equal(was, now) {
		return ""
	}
	return fmt.Sprintf("image registries: the pods pull from %s instead of %s", strings.Join(now, ", "), strings.Join(was, ", "))
}

// manifestRegistries returns the registries (host of each image; docker.io
// for a bare name) of the containers of a manifest's workloads, sorted.
func manifestRegistries(manifest string) ([]string, error) {
	specs, err := manifestWorkloads(manifest)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, s := range specs {
		for _, c := range append(append([]corev1.Container(nil), s.Spec.InitContainers...), s.Spec.Containers...) {
			set[imageRegistry(c.Image)] = true
		}
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out, nil
}

// imageRegistry is the registry host of an image reference, as the
// container runtime resolves it (docker.io when the first component is no
// host).
func imageRegistry(image string) string {
	first, _, found := strings.Cut(image, "/")
	if found && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return first
	}
	return "docker.io"
}

// keptDefaults lists, for an upgrade with --reuse-values, the target
// chart's defaults the new revision will not get: Helm then renders the
// target's templates over the previous revision's computed values (the
// deployed chart's defaults included) instead of the target chart's
// defaults (pkg/action/upgrade.go reuseValues). Each is "path (old → new)",
// sorted; values the user set are left out (they are the user's, not
// defaults).
func keptDefaults(up *chart.Upgrade) []string {
	if !up.Options.Reuse || up.TargetDefaults == nil {
		return nil
	}
	paths := chart.ValueLeaves(up.TargetDefaults)
	var out []string
	for _, p := range paths {
		path := strings.Split(p, ".")
		def, _ := plan.Lookup(up.TargetDefaults, path...)
		now, _ := plan.Lookup(up.TargetComputed, path...)
		if reflect.DeepEqual(def, now) {
			continue
		}
		if userSet(up, path) {
			continue
		}
		if _, isMap := def.(map[string]any); isMap {
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s → %s)", p, short(now), short(def)))
	}
	return out
}

// userSet reports whether the user set path (in the deployed revision's
// values or the given ones), directly or, for a subchart's
// "<subchart>.global.x", as "global.x" (Helm copies globals into every
// subchart).
func userSet(up *chart.Upgrade, path []string) bool {
	cands := [][]string{path}
	for i := 1; i < len(path); i++ {
		if path[i] == "global" {
			cands = append(cands, path[i:])
		}
	}
	for _, p := range cands {
		if up.Current != nil {
			if _, set := plan.Lookup(up.Current.Config, p...); set {
				return true
			}
		}
		if _, set := plan.Lookup(up.Given, p...); set {
			return true
		}
	}
	return false
}

// short prints a value for a message, cut to 40 bytes.
func short(v any) string {
	s := fmt.Sprint(v)
	if v == nil {
		s = "unset"
	}
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}
