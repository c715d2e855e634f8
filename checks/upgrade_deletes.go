package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/argocd"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
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
		Run: versionAnchored(runUpgradeDeletes),
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
	d := &deletions{snap: env.Cluster, api: api, ns: env.Inputs.Namespace, sync: up.Sync}
	for _, o := range removed {
		if err := d.add(o); err != nil {
			return Result{}, err
		}
	}
	return d.result(env.Inputs.ReleaseName), nil
}

// deletions are what the upgrade deletes of the objects the target no
// longer renders, and what that takes with it.
type deletions struct {
	snap *cluster.Snapshot
	api  *cluster.APIResources
	// ns is the runtime namespace; sync is Argo CD's sync (nil for helm
	// upgrade).
	ns   string
	sync *argocd.Sync
	// lost are the CRDs deleted with their custom resources; broken the
	// removed controllers of live custom resources; kept the objects not
	// deleted ("Kind name"); handedOver the removed controllers another
	// Deployment runs.
	lost, broken, kept, handedOver []string
	// untracked are the objects the target drops that carry no tracking
	// mark of the Application: Argo CD does not manage them, so its prune
	// leaves them (a CRD: Argo CD marks none).
	untracked      []string
	objs, keptRefs []ObjectRef
	deleted        int
}

// add judges one object the target no longer renders: Argo CD prunes it
// only with prune and without Prune=false (argocd.Sync.Pruned), Helm
// deletes it unless it is annotated helm.sh/resource-policy: keep.
func (d *deletions) add(o chart.Object) error {
	gvr, namespaced, ok := d.api.Resource(o.APIVersion, o.Kind)
	if !ok {
		return nil // not served: release-apis says so
	}
	ons := ""
	if namespaced {
		ons = orNamespace(o.Namespace, d.ns)
	}
	live, err := d.snap.Objects(gvr, ons)
	if err != nil {
		return err
	}
	m, exists := live[ons+"/"+o.Name]
	if !exists {
		return nil // already gone: Helm skips it
	}
	ref := ObjectRef{Kind: o.Kind, Namespace: ons, Name: o.Name}
	if d.sync != nil && d.sync.Prune && !d.sync.Tracking().Tracks(m.Labels, m.Annotations) {
		d.untracked = append(d.untracked, o.Kind+" "+o.Name)
		d.keptRefs = append(d.keptRefs, ref)
		return nil
	}
	if d.sync != nil && !d.sync.Pruned(o.Group(), o.Kind, o.Namespace, o.Name, m.Labels, m.Annotations) || d.sync == nil && m.Annotations[keepPolicy] == "keep" {
		d.kept = append(d.kept, o.Kind+" "+o.Name)
		d.keptRefs = append(d.keptRefs, ref)
		return nil
	}
	d.deleted++
	if o.Kind == "CustomResourceDefinition" {
		n, where, err := countCustomResources(d.snap, d.api, o.Name)
		if err != nil {
			return err
		}
		if n > 0 {
			d.lost = append(d.lost, fmt.Sprintf("CRD %s and with it %d custom resources (%s)", o.Name, n, where))
			d.objs = append(d.objs, ref)
		}
	}
	if o.Kind == "Deployment" {
		return d.controller(o, ons, ref)
	}
	return nil
}

// controller judges a deleted Deployment that is a removed controller
// (removedControllers): handed over when another Deployment runs it, else
// broken for each of its CRDs with live custom resources.
func (d *deletions) controller(o chart.Object, ons string, ref ObjectRef) error {
	for _, c := range removedControllers {
		if c.Deployment != o.Name {
			continue
		}
		other, err := otherController(d.snap, c, ons+"/"+o.Name)
		if err != nil {
			return err
		}
		if other != "" {
			d.handedOver = append(d.handedOver, fmt.Sprintf("%s by Deployment %s", c.What, other))
			continue
		}
		for _, crd := range c.CRDs {
			names, err := customResourceNames(d.snap, d.api, crd)
			if err != nil {
				return err
			}
			if len(names) > 0 {
				d.broken = append(d.broken, fmt.Sprintf("the %s controller (Deployment %s/%s) while %d %s live: %s (%s)",
					c.What, ons, o.Name, len(names), crd, strings.Join(first(names, 5), ", "), c.Source))
				d.objs = append(d.objs, ref)
			}
		}
	}
	return nil
}

// result words the deletions of release rel's upgrade.
func (d *deletions) result(rel string) Result {
	who := "helm upgrade"
	if s := d.sync; s != nil {
		who = fmt.Sprintf("Argo CD's sync (Application %s, prune: true)", s.App)
		sortWorkloadsFirst(d.kept)
		if len(d.lost) == 0 && len(d.broken) == 0 && len(d.kept) == 0 && len(d.untracked) > 0 {
			return Pass("Argo CD's sync of the commit (Application %s, prune: true) deletes %d objects the target no longer renders, none holding custom resources or controlling live ones; it leaves %d in place that carry no tracking mark of the Application (Argo CD tracks no CRD and prunes only what it tracks): %s",
				s.App, d.deleted, len(d.untracked), strings.Join(first(d.untracked, 8), ", ")).WithObjects(d.keptRefs...)
		}
		if len(d.lost) == 0 && len(d.broken) == 0 && len(d.kept) > 0 {
			why := "prune is off (syncPolicy.automated.prune is not true)"
			if s.Prune {
				why = "they are annotated argocd.argoproj.io/sync-options: Prune=false"
			}
			return Warn("Argo CD's sync of the commit (Application %s) leaves %d objects the target no longer renders in place, OutOfSync (requires pruning), because %s: %s",
				s.App, len(d.kept), why, strings.Join(first(d.kept, 8), ", ")).WithEffect(ImpactAdvisory).WithObjects(d.keptRefs...).
				WithHint("they keep running as they are (a removed controller keeps reconciling): delete them once nothing needs them, or sync once with prune (argocd app sync " + s.App + " --prune) after checking what it deletes")
		}
	}
	switch {
	case len(d.lost) > 0:
		msg := who + " deletes " + strings.Join(d.lost, "; ")
		if len(d.broken) > 0 {
			msg += "; and removes " + strings.Join(d.broken, "; ")
		}
		hint := "back the custom resources up first (kubectl get <kind> -A -o yaml), and keep the CRD: annotate it helm.sh/resource-policy=keep (kubectl annotate crd <name> helm.sh/resource-policy=keep) or keep the values that render it"
		if d.sync != nil {
			// Argo CD's prune reads its own annotation, not Helm's.
			hint = "back the custom resources up first (kubectl get <kind> -A -o yaml), and keep the CRD out of the prune before the commit is synced: kubectl annotate crd <name> argocd.argoproj.io/sync-options=Prune=false (helm.sh/resource-policy=keep does not stop Argo CD), or keep the values that render it in the commit"
		}
		return Fail("%s", msg).WithEffect(ImpactDataLoss).WithObjects(d.objs...).WithHint(hint)
	case len(d.broken) > 0:
		return Fail("%s removes %s: they stop being reconciled", who, strings.Join(d.broken, "; ")).WithEffect(ImpactRuntimeBreaks).WithObjects(d.objs...).
			WithHint("install the controller on its own before the upgrade (for Argo Rollouts: helm install argo-rollouts argo/argo-rollouts, after handing it the CRDs), or move the resources off it")
	case len(d.kept) > 0:
		sortWorkloadsFirst(d.kept)
		return Warn("helm upgrade stops rendering %d objects it keeps (helm.sh/resource-policy: keep), still labelled for release %s: %s",
			len(d.kept), rel, strings.Join(first(d.kept, 8), ", ")).WithEffect(ImpactAdvisory).WithObjects(d.keptRefs...).
			WithHint(fmt.Sprintf("before another release installs them, hand them over: kubectl annotate <kind> <name> meta.helm.sh/release-name=<release> meta.helm.sh/release-namespace=<namespace> --overwrite (they name %s/%s now)", d.ns, rel))
	}
	if d.sync != nil {
		return Pass("%s deletes %d objects the target no longer renders; none holds custom resources or controls live ones (Argo CD prunes objects annotated helm.sh/resource-policy: keep too)", who, d.deleted)
	}
	if len(d.handedOver) > 0 {
		return Pass("helm upgrade deletes %d objects the target no longer renders; none holds custom resources, and the live ones of the removed controllers are reconciled elsewhere (%s)",
			d.deleted, strings.Join(d.handedOver, "; "))
	}
	return Pass("helm upgrade deletes %d objects the target no longer renders; none holds custom resources or controls live ones", d.deleted)
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
