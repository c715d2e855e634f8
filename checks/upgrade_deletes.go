package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// UpgradeDeletes passes when what `helm upgrade` deletes takes nothing
// users made with it. Helm deletes every object of the revision it upgrades
// from that the target no longer renders (pkg/kube/client.go Update),
// unless the live object is annotated helm.sh/resource-policy: keep
// (https://helm.sh/docs/howto/charts_tips_and_tricks/#tell-helm-not-to-uninstall-a-resource);
// deleting a CRD deletes every custom resource of that kind. It fails,
// impact data-loss, counting the custom resources of each deleted CRD per
// namespace; fails, impact runtime-breaks, naming the live custom resources
// whose controller the upgrade deletes (removedControllers); and warns, for
// the kept objects that stay labelled for the release, with the commands
// that hand them to their next owner.
func UpgradeDeletes() Check {
	return Check{
		Meta: Meta{
			ID:         "upgrade-deletes",
			Impact:     ImpactDataLoss,
			ReadsChart: true,
			Category:   CategoryUpgrade,
			Modes:      ModeUpgrade,
			Title:      "helm upgrade deletes nothing users made",
			Severity:   SeverityFail,
			Requires:   []string{"release-upgradable"},
		},
		Run: runUpgradeDeletes,
	}
}

// removedController is a controller the chart renders as a Deployment, and
// the custom resources (by CRD name) it alone reconciles.
type removedController struct {
	Deployment, What string
	// Name is the controller's app.kubernetes.io/name label, in the chart
	// and in the project's own install (another Deployment carrying it,
	// outside the release, keeps reconciling the resources).
	Name   string
	CRDs   []string
	Source string
}

// removedControllers are the controllers chart versions stopped rendering:
// Argo Rollouts (off by default in 0.26, removed in 0.27) and the Argo
// Events controller (removed in 0.27, after 0.26 removed the resources).
var removedControllers = []removedController{
	{Deployment: "argo-rollouts", What: "Argo Rollouts", Name: "argo-rollouts", CRDs: []string{"rollouts.argoproj.io"},
		Source: "https://github.com/codefresh-io/gitops-runtime-helm/commit/7581098b"},
	{Deployment: "argo-events-controller-manager", What: "Argo Events", Name: "argo-events-controller-manager", CRDs: []string{"sensors.argoproj.io", "eventsources.argoproj.io", "eventbus.argoproj.io"},
		Source: "https://github.com/codefresh-io/gitops-runtime-helm/commit/3887b8f4"},
}

const keepPolicy = "helm.sh/resource-policy"

func runUpgradeDeletes(ctx context.Context, env *Env) (Result, error) {
	up, err := env.Upgrade(ctx)
	if r, ok := upgradeSkip(err); ok {
		return r, nil
	}
	if err != nil {
		return Result{}, err
	}
	removed, err := up.Removed()
	if err != nil {
		return Result{}, err
	}
	api, err := env.Cluster.APIResources()
	if err != nil {
		return Result{}, err
	}
	ns := env.Inputs.Namespace
	var (
		lost, broken, kept []string
		handedOver         []string
		objs               []ObjectRef
		keptRefs           []ObjectRef
		deleted            int
	)
	for _, o := range removed {
		gvr, namespaced, ok := api.Resource(o.APIVersion, o.Kind)
		if !ok {
			continue // not served: release-apis says so
		}
		ons := ""
		if namespaced {
			ons = orNamespace(o.Namespace, ns)
		}
		live, err := env.Cluster.Objects(gvr, ons)
		if err != nil {
			return Result{}, err
		}
		m, exists := live[ons+"/"+o.Name]
		if !exists {
			continue // already gone: Helm skips it
		}
		ref := ObjectRef{Kind: o.Kind, Namespace: ons, Name: o.Name}
		if s := up.Sync; s != nil {
			// Argo CD prunes only with prune: true, never an object with
			// Prune=false, and does not read helm.sh/resource-policy.
			if !s.Pruned(o) {
				kept = append(kept, o.Kind+" "+o.Name)
				keptRefs = append(keptRefs, ref)
				continue
			}
		} else if m.Annotations[keepPolicy] == "keep" {
			kept = append(kept, o.Kind+" "+o.Name)
			keptRefs = append(keptRefs, ref)
			continue
		}
		deleted++
		if o.Kind == "CustomResourceDefinition" {
			n, where, err := countCustomResources(env.Cluster, api, o.Name)
			if err != nil {
				return Result{}, err
			}
			if n > 0 {
				lost = append(lost, fmt.Sprintf("CRD %s and with it %d custom resources (%s)", o.Name, n, where))
				objs = append(objs, ref)
			}
		}
		if o.Kind == "Deployment" {
			for _, c := range removedControllers {
				if c.Deployment != o.Name {
					continue
				}
				other, err := otherController(env.Cluster, c, ons+"/"+o.Name)
				if err != nil {
					return Result{}, err
				}
				if other != "" {
					handedOver = append(handedOver, fmt.Sprintf("%s by Deployment %s", c.What, other))
					continue
				}
				for _, crd := range c.CRDs {
					names, err := customResourceNames(env.Cluster, api, crd)
					if err != nil {
						return Result{}, err
					}
					if len(names) > 0 {
						broken = append(broken, fmt.Sprintf("the %s controller (Deployment %s/%s) while %d %s live: %s (%s)",
							c.What, ons, o.Name, len(names), crd, strings.Join(first(names, 5), ", "), c.Source))
						objs = append(objs, ref)
					}
				}
			}
		}
	}
	rel := env.Inputs.ReleaseName
	who := "helm upgrade"
	if up.Sync != nil {
		who = fmt.Sprintf("Argo CD's sync (Application %s, prune: true)", up.Sync.App)
		sortWorkloadsFirst(kept)
		if len(lost) == 0 && len(broken) == 0 && len(kept) > 0 {
			why := "prune is off (syncPolicy.automated.prune is not true)"
			if up.Sync.Prune {
				why = "they are annotated argocd.argoproj.io/sync-options: Prune=false"
			}
			return Warn("Argo CD's sync of the commit (Application %s) leaves %d objects the target no longer renders in place, OutOfSync (requires pruning), because %s: %s",
				up.Sync.App, len(kept), why, strings.Join(first(kept, 8), ", ")).WithEffect(ImpactAdvisory).WithObjects(keptRefs...).
				WithHint("they keep running as they are (a removed controller keeps reconciling): delete them once nothing needs them, or sync once with prune (argocd app sync " + up.Sync.App + " --prune) after checking what it deletes"), nil
		}
	}
	switch {
	case len(lost) > 0:
		msg := who + " deletes " + strings.Join(lost, "; ")
		if len(broken) > 0 {
			msg += "; and removes " + strings.Join(broken, "; ")
		}
		hint := "back the custom resources up first (kubectl get <kind> -A -o yaml), and keep the CRD: annotate it helm.sh/resource-policy=keep (kubectl annotate crd <name> helm.sh/resource-policy=keep) or keep the values that render it"
		if up.Sync != nil {
			// Argo CD's prune reads its own annotation, not Helm's.
			hint = "back the custom resources up first (kubectl get <kind> -A -o yaml), and keep the CRD out of the prune before the commit is synced: kubectl annotate crd <name> argocd.argoproj.io/sync-options=Prune=false (helm.sh/resource-policy=keep does not stop Argo CD), or keep the values that render it in the commit"
		}
		return Fail("%s", msg).WithEffect(ImpactDataLoss).WithObjects(objs...).WithHint(hint), nil
	case len(broken) > 0:
		return Fail("%s removes %s: they stop being reconciled", who, strings.Join(broken, "; ")).WithEffect(ImpactRuntimeBreaks).WithObjects(objs...).
			WithHint("install the controller on its own before the upgrade (for Argo Rollouts: helm install argo-rollouts argo/argo-rollouts, after handing it the CRDs), or move the resources off it"), nil
	case len(kept) > 0:
		sortWorkloadsFirst(kept)
		return Warn("helm upgrade stops rendering %d objects it keeps (helm.sh/resource-policy: keep), still labelled for release %s: %s",
			len(kept), rel, strings.Join(first(kept, 8), ", ")).WithEffect(ImpactAdvisory).WithObjects(keptRefs...).
			WithHint(fmt.Sprintf("before another release installs them, hand them over: kubectl annotate <kind> <name> meta.helm.sh/release-name=<release> meta.helm.sh/release-namespace=<namespace> --overwrite (they name %s/%s now)", ns, rel)), nil
	}
	if up.Sync != nil {
		return Pass("%s deletes %d objects the target no longer renders; none holds custom resources or controls live ones (Argo CD prunes objects annotated helm.sh/resource-policy: keep too)", who, deleted), nil
	}
	if len(handedOver) > 0 {
		return Pass("helm upgrade deletes %d objects the target no longer renders; none holds custom resources, and the live ones of the removed controllers are reconciled elsewhere (%s)",
			deleted, strings.Join(handedOver, "; ")), nil
	}
	return Pass("helm upgrade deletes %d objects the target no longer renders; none holds custom resources or controls live ones", deleted), nil
}

// otherController returns "namespace/name" of a Deployment other than the
// one the upgrade removes (removed, "namespace/name") that runs controller
// c (its app.kubernetes.io/name label), or "" when none does: the custom
// resources then stop being reconciled. Deployments are read metadata-only,
// cluster-wide, from the shared snapshot.
func otherController(snap *cluster.Snapshot, c removedController, removed string) (string, error) {
	deps, err := snap.Objects(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "")
	if err != nil {
		return "", err
	}
	var found []string
	for key, m := range deps {
		if key != removed && m.Labels["app.kubernetes.io/name"] == c.Name {
			found = append(found, key)
		}
	}
	sort.Strings(found)
	if len(found) == 0 {
		return "", nil
	}
	return found[0], nil
}

// crdResource resolves a CRD's name (<plural>.<group>) to a served resource.
func crdResource(api *cluster.APIResources, crd string) (schema.GroupVersionResource, bool) {
	plural, group, _ := strings.Cut(crd, ".")
	for _, l := range api.Resources {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil || gv.Group != group {
			continue
		}
		for _, r := range l.APIResources {
			if r.Name == plural {
				return gv.WithResource(plural), true
			}
		}
	}
	return schema.GroupVersionResource{}, false
}

// customResourceNames lists the custom resources of a CRD (metadata only),
// "namespace/name" sorted; none when the CRD is not served.
func customResourceNames(snap *cluster.Snapshot, api *cluster.APIResources, crd string) ([]string, error) {
	gvr, ok := crdResource(api, crd)
	if !ok {
		return nil, nil
	}
	objs, err := snap.Objects(gvr, "")
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(objs))
	for k := range objs {
		out = append(out, strings.TrimPrefix(k, "/"))
	}
	sort.Strings(out)
	return out, nil
}

// countCustomResources counts a CRD's custom resources and says how many
// per namespace ("codefresh: 2, team-a: 1").
func countCustomResources(snap *cluster.Snapshot, api *cluster.APIResources, crd string) (int, string, error) {
	names, err := customResourceNames(snap, api, crd)
	if err != nil || len(names) == 0 {
		return 0, "", err
	}
	per := map[string]int{}
	for _, n := range names {
		ns, _, found := strings.Cut(n, "/")
		if !found {
			ns = "cluster-scoped"
		}
		per[ns]++
	}
	keys := make([]string, 0, len(per))
	for k := range per {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, per[k])
	}
	return len(names), strings.Join(parts, ", "), nil
}

// sortWorkloadsFirst sorts "Kind name" entries with the workloads
// (Deployments, StatefulSets, DaemonSets: the controllers) first, each
// group by name.
func sortWorkloadsFirst(l []string) {
	rank := func(s string) int {
		for _, k := range []string{"Deployment ", "StatefulSet ", "DaemonSet "} {
			if strings.HasPrefix(s, k) {
				return 0
			}
		}
		return 1
	}
	sort.SliceStable(l, func(i, j int) bool {
		if ri, rj := rank(l[i]), rank(l[j]); ri != rj {
			return ri < rj
		}
		return l[i] < l[j]
	})
}
