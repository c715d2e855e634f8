package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

// ReleaseAPIs passes when every apiVersion and kind in the manifest of the
// revision `helm upgrade` starts from is still served by the cluster
// (discovery). Helm builds the objects of that manifest before it diffs,
// and fails the upgrade when one is not served: "current release manifest
// contains removed kubernetes api(s) for this kubernetes version"
// (pkg/action/upgrade.go, helm/helm#7219); helm-mapkubeapis
// (https://github.com/helm/helm-mapkubeapis) rewrites the stored manifest.
func ReleaseAPIs() Check {
	return Check{
		Meta: Meta{
			ID:       "release-apis",
			Impact:   ImpactUpgradeFails,
			Category: CategoryUpgrade,
			Modes:    ModeUpgrade,
			Title:    "The deployed release's API versions are still served",
			Severity: SeverityFail,
			Requires: []string{"release-upgradable"},
		},
		Run: runReleaseAPIs,
	}
}

func runReleaseAPIs(_ context.Context, env *Env) (Result, error) {
	ns, name := env.Inputs.Namespace, env.Inputs.ReleaseName
	history, err := env.Cluster.HelmHistory(ns, name)
	if err != nil {
		return Result{}, err
	}
	if len(history) == 0 {
		return Skip("release %s has no revision in namespace %s", name, ns), nil
	}
	from := history[0]
	objs, err := chart.ManifestObjects(from.Manifest)
	if err != nil {
		return Fail("the manifest of release %s revision %d does not parse: %v", name, from.Version, err), nil
	}
	api, err := env.Cluster.APIResources()
	if err != nil {
		return Result{}, err
	}
	gone := map[string]bool{}
	var refs []ObjectRef
	for _, o := range objs {
		if _, _, ok := api.Resource(o.APIVersion, o.Kind); ok {
			continue
		}
		gone[o.APIVersion+" "+o.Kind] = true
		refs = append(refs, ObjectRef{Kind: o.Kind, Namespace: orNamespace(o.Namespace, ns), Name: o.Name})
	}
	if len(gone) == 0 {
		return Pass("the %d objects of release %s revision %d use API versions the cluster serves", len(objs), name, from.Version), nil
	}
	var list []string
	for k := range gone {
		list = append(list, k)
	}
	sort.Strings(list)
	return Fail("release %s revision %d holds %s, which the cluster no longer serves: helm upgrade fails (\"current release manifest contains removed kubernetes api(s)\")",
		name, from.Version, strings.Join(list, ", ")).
		WithHint(fmt.Sprintf("rewrite the stored manifest with helm-mapkubeapis (helm mapkubeapis %s -n %s), then check again", name, ns)).
		WithObjects(refs...), nil
}
