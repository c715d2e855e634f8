package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"golang.org/x/sync/errgroup"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/apply"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// Marks of an installed GitOps Runtime (https://github.com/codefresh-io/gitops-runtime-helm/tree/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_components, https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/codefresh-cm.yaml): the chart's
// name, the ConfigMap every runtime has (also CLI-installed ones) and the
// app-proxy Deployment.
const (
	RuntimeChartName     = "gitops-runtime"
	RuntimeConfigMapName = plan.ConfigMapName
	RuntimeAppProxyName  = plan.AppProxyName
	// runtimeNameLabel carries the runtime name on chart objects (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl#L43-L59).
	runtimeNameLabel = "codefresh.io/runtime-name"
)

// ExistingRuntime passes when no GitOps Runtime is installed on the cluster,
// or when the planned one may stand beside those that are: since chart 0.27
// several runtimes share a cluster when every one runs in namespaced mode
// (global.runtime.singleNamespace=true), each in its own namespace, and
// exactly one (the first) installs the cluster-wide parts, the CRDs (chart
// README, "Multi Runtime Installation",
// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/README.md#multi-runtime-installation,
// with the chart's values-multi-runtimes.yaml and
// values-multi-runtimes-first.yaml; before it the docs allowed a single
// runtime per cluster, https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/).
// It looks for the latest revision of any Helm release of chart
// gitops-runtime (one GET per release; release Secrets are listed
// metadata-only), a codefresh-cm ConfigMap (one field-selected,
// metadata-only list) and a cap-app-proxy Deployment (from the shared
// Deployments). Each runtime release is read once more for its computed
// values and manifest; the planned runtime's shape comes from the rendered
// chart (its version, its CRDs) and the plan (singleNamespace). It fails
// naming each runtime, its chart version and the rule broken; a runtime
// with no gitops-runtime release (installed by the CLI) fails as before,
// its configuration unknown; when a runtime is this very release it fails
// pointing to --upgrade. helm-ownership judges the objects themselves.
//
// Before `helm upgrade` (--upgrade) the release being upgraded is no
// conflict: its release and the codefresh-cm ConfigMap and cap-app-proxy
// Deployment in its namespace whose Helm ownership annotations name it
// (apply.OwnedBy) are set aside; the other runtimes are judged by the same
// multi-runtime rule against the target (its rendered chart, and
// global.runtime.singleNamespace of the values the upgrade computes).
func ExistingRuntime() Check {
	return Check{
		Meta: Meta{
			ID:         "existing-runtime",
			Impact:     ImpactInstallFails,
			Category:   CategoryConflicts,
			Modes:      ModePre | ModeUpgrade,
			Title:      "No GitOps Runtime is installed on the cluster, or the planned one may stand beside it",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
			ReadsChart: true,
		},
		Run: runExistingRuntime,
	}
}

// runtimeFinding is one mark of an installed runtime.
type runtimeFinding struct {
	ref  ObjectRef
	what string
	// release is set for a gitops-runtime Helm release.
	release *cluster.HelmReleaseSummary
	// annotations are the Helm ownership annotations of a ConfigMap or
	// Deployment.
	annotations map[string]string
}

func runExistingRuntime(ctx context.Context, env *Env) (Result, error) {
	res, err := judgeExistingRuntime(ctx, env)
	if err != nil {
		return res, err
	}
	return withRuntimeApp(env, res)
}

// withRuntimeApp names, in existing-runtime's result, the Argo CD
// Application that syncs the runtime in the planned namespace, and says
// when the Helm release record is stale and how such a runtime is
// upgraded: a commit, not helm upgrade.
func withRuntimeApp(env *Env, res Result) (Result, error) {
	ra, err := env.RuntimeApp()
	if err != nil || ra == nil {
		return res, err
	}
	note := fmt.Sprintf("the runtime in namespace %s is managed by Argo CD: %s (%s)", env.Inputs.Namespace, ra.Name(), ra.Evidence)
	if ra.App != nil {
		note += ", " + syncPolicy(ra.App)
	}
	if ra.LiveChartVersion != "" {
		note += ", live chart " + ra.LiveChartVersion
	}
	stale, err := staleRecord(env, ra)
	if err != nil {
		return res, err
	}
	if stale != "" {
		note += "; " + stale
	}
	res.Message += "; " + note
	if res.Status != StatusPass {
		// Never helm upgrade: Argo CD would revert it.
		res.Hint = argoUpgradeHint(ra)
	}
	if ra.App != nil {
		res.Objects = append(res.Objects, ObjectRef{Kind: "Application", Namespace: ra.App.Namespace, Name: ra.App.Name})
	}
	return res, nil
}

func judgeExistingRuntime(ctx context.Context, env *Env) (Result, error) {
	var found []runtimeFinding
	var denied error // first permission error; reported only when nothing is found

	releases, unreadable, err := runtimeReleases(env.Cluster)
	if err = keepDenied(&denied, err); err != nil {
		return Result{}, err
	}
	for i, r := range releases {
		found = append(found, runtimeFinding{
			ref:     ObjectRef{Kind: "Secret", Namespace: r.Namespace, Name: r.SecretName},
			what:    fmt.Sprintf("Helm release %s (chart %s-%s, revision %d, %s)", r.Name, r.Chart, r.ChartVersion, r.Version, r.Status),
			release: &releases[i],
		})
	}

	cms, err := env.Cluster.ConfigMapsNamed(RuntimeConfigMapName)
	if err = keepDenied(&denied, err); err != nil {
		return Result{}, err
	}
	for _, cm := range cms {
		what := "ConfigMap " + RuntimeConfigMapName
		if n := cm.Labels[runtimeNameLabel]; n != "" {
			what += " (runtime " + n + ")"
		}
		found = append(found, runtimeFinding{ref: ObjectRef{Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name}, what: what, annotations: cm.Annotations})
	}

	deps, err := env.Cluster.Deployments()
	if err = keepDenied(&denied, err); err != nil {
		return Result{}, err
	}
	for _, d := range deps {
		if d.Name == RuntimeAppProxyName {
			found = append(found, runtimeFinding{ref: ObjectRef{Kind: "Deployment", Namespace: d.Namespace, Name: d.Name}, what: "Deployment " + RuntimeAppProxyName, annotations: d.Annotations})
		}
	}

	in := env.Inputs
	var own []runtimeFinding
	if env.Upgrading() {
		found, own = splitOwnRuntime(found, in)
	}
	if len(found) == 0 {
		if len(own) > 0 && denied == nil {
			return Pass("the only GitOps Runtime on the cluster is release %s in namespace %s, the one being upgraded (%s)",
				in.ReleaseName, in.Namespace, describeRuntimeFindings(own)).WithObjects(refsOf(own)...), nil
		}
		if denied != nil {
			return Result{}, denied
		}
		if len(unreadable) > 0 {
			refs := make([]ObjectRef, len(unreadable))
			names := make([]string, len(unreadable))
			for i, u := range unreadable {
				refs[i] = ObjectRef{Kind: "Secret", Namespace: u.Namespace, Name: u.SecretName}
				names[i] = u.Namespace + "/" + u.Name + " (" + u.Unreadable + ")"
			}
			return Warn("no %s Helm release, %s ConfigMap or %s Deployment found, but %d Helm release(s) could not be read, so their chart is unknown: %s",
				RuntimeChartName, RuntimeConfigMapName, RuntimeAppProxyName, len(unreadable), strings.Join(names, ", ")).
				WithHint("inspect these release Secrets (kubectl get secret -n NAMESPACE NAME); a payload this large is not a real Helm release and may be an attempt to exhaust memory").
				WithObjects(refs...), nil
		}
		return Pass("no %s Helm release, %s ConfigMap or %s Deployment in the cluster", RuntimeChartName, RuntimeConfigMapName, RuntimeAppProxyName), nil
	}
	for _, f := range found {
		if f.release != nil && f.release.Namespace == in.Namespace && f.release.Name == in.ReleaseName {
			return Fail("a GitOps Runtime is already installed: %s", describeRuntimeFindings(found)).
				WithHint(existingRuntimeHint(found, in)).
				WithObjects(refsOf(found)...), nil
		}
	}
	return judgeMultiRuntime(ctx, env, found)
}

// splitOwnRuntime sets apart, for --upgrade, the marks of the release being
// upgraded: its own Helm release, and the ConfigMap and Deployment in its
// namespace whose Helm ownership annotations name it.
func splitOwnRuntime(found []runtimeFinding, in Inputs) (others, own []runtimeFinding) {
	for _, f := range found {
		isOwn := f.ref.Namespace == in.Namespace && (f.release != nil && f.release.Name == in.ReleaseName ||
			f.release == nil && apply.OwnedBy(f.annotations, in.ReleaseName, in.Namespace))
		if isOwn {
			own = append(own, f)
		} else {
			others = append(others, f)
		}
	}
	return others, own
}

// Multi-runtime rule of the chart README ("Multi Runtime Installation",
// gitops-runtime-helm commit 2e760735): the first chart line that has it,
// and the values files it ships.
const (
	multiRuntimeSince = "0.27.0-0"
	multiRuntimeRule  = "several runtimes on one cluster need chart 0.27 or later, every runtime with global.runtime.singleNamespace=true in its own namespace, and exactly one (the first) installing the cluster-wide parts (CRDs) (chart README, \"Multi Runtime Installation\")"
	multiRuntimeHint  = "install every runtime in namespaced mode, each in its own namespace: the first with the chart's values-multi-runtimes.yaml and values-multi-runtimes-first.yaml (-f both), every other with values-multi-runtimes.yaml (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/README.md#multi-runtime-installation); a runtime already installed cluster-wide must be uninstalled (helm uninstall, and removed from the Codefresh platform) or the new one installed on another cluster"
)

// plannedShape is the planned runtime as the multi-runtime rule reads it.
type plannedShape struct {
	version  string // chart version ("" = unknown)
	single   bool
	crds     []string // CRDs the rendering installs
	installs bool     // installs the cluster-wide parts
	from     string   // where the shape was read
}

func readPlannedShape(ctx context.Context, env *Env) (plannedShape, error) {
	c, err := readChartRules(ctx, env)
	if err != nil {
		return plannedShape{}, err
	}
	p := plannedShape{single: env.Inputs.SingleNamespace, installs: env.Inputs.InstallsCRDs}
	if env.Upgrading() {
		// The upgrade's values are Helm's (reused, reset or given), not
		// only the flags': read the mode from what the target's templates see.
		if u, err := env.Upgrade(ctx); err == nil {
			p.single = targetPlanned(u).SingleNamespace
		}
	}
	switch {
	case c.R != nil:
		p.version, p.crds = c.R.ChartVersion, c.R.CRDs()
		p.installs = len(p.crds) > 0
		p.from = c.chartName() + " rendered with these values"
		if env.Upgrading() {
			p.from = c.chartName() + " rendered with the upgrade's values"
		}
	case env.Chart != nil:
		if md, err := env.Chart.Metadata(ctx); err == nil {
			p.version = md.Version
		}
	}
	if p.from == "" {
		p.from = c.Missing + ": the planned runtime read from the values"
		if p.version == "" {
			p.version = plan.DefaultsChartVersion
			p.from += fmt.Sprintf(", as chart %s", plan.DefaultsChartVersion)
		}
	}
	return p, nil
}

// judgeMultiRuntime applies the multi-runtime rule to the runtimes found and
// the planned one.
func judgeMultiRuntime(ctx context.Context, env *Env, found []runtimeFinding) (Result, error) {
	planned, err := readPlannedShape(ctx, env)
	if err != nil {
		return Result{}, err
	}
	since := semver.MustParse(multiRuntimeSince)
	broken, installers := planned.breaks(since)
	shapes, err := judgeFoundRuntimes(env, found, since)
	if err != nil {
		return Result{}, err
	}
	broken = append(broken, shapes.broken...)
	installers += shapes.installers
	switch {
	case installers > 1 && planned.installs:
		broken = append(broken, fmt.Sprintf("the planned runtime would install the cluster-wide parts (%s) too", crdSummary(planned.crds)))
	case installers > 1:
		broken = append(broken, "more than one installed runtime installs the cluster-wide parts")
	case installers == 0 && len(shapes.describe) > 0:
		broken = append(broken, "no runtime installs the cluster-wide parts (CRDs): the first must")
	}
	return wordMultiRuntime(env, found, planned, shapes.describe, broken), nil
}

// breaks is what of the planned runtime breaks the multi-runtime rule, and
// whether it installs the cluster-wide parts (1) or not (0).
func (planned plannedShape) breaks(since *semver.Version) (broken []string, installers int) {
	if planned.installs {
		installers++
	}
	if v, err := semver.NewVersion(planned.version); err != nil || v.LessThan(since) {
		broken = append(broken, fmt.Sprintf("the planned chart %s predates several runtimes per cluster", planned.version))
	}
	if !planned.single {
		broken = append(broken, "the planned runtime is cluster-wide (global.runtime.singleNamespace is not true)")
	}
	return broken, installers
}

// foundShapes is what judgeFoundRuntimes found of the installed runtimes:
// each release's shape in words, what breaks the multi-runtime rule, and
// how many install the cluster-wide parts.
type foundShapes struct {
	describe, broken []string
	installers       int
}

// judgeFoundRuntimes reads the shape (chart.ReleaseShape) of each runtime
// found, one per namespace (a release's other marks are its own), and
// judges it by the multi-runtime rule.
func judgeFoundRuntimes(env *Env, found []runtimeFinding, since *semver.Version) (foundShapes, error) {
	var out foundShapes
	withRelease := map[string]bool{}
	for _, f := range found {
		if f.release != nil {
			withRelease[f.ref.Namespace] = true
		}
	}
	noRelease := map[string]bool{}
	for _, f := range found {
		ns := f.ref.Namespace
		if ns == env.Inputs.Namespace {
			out.broken = append(out.broken, fmt.Sprintf("namespace %s already holds a runtime (%s): each runtime needs its own namespace", ns, f.what))
			continue
		}
		if f.release == nil {
			if !withRelease[ns] && !noRelease[ns] {
				noRelease[ns] = true
				out.broken = append(out.broken, fmt.Sprintf("the runtime in namespace %s (%s) has no %s Helm release: installed otherwise (CLI), its mode is unknown", ns, f.what, RuntimeChartName))
			}
			continue
		}
		r := f.release
		rel, err := env.Cluster.HelmRelease(r.HelmRevision)
		if err != nil {
			return foundShapes{}, err
		}
		shape, err := chart.ReleaseShape(rel)
		if err != nil {
			return foundShapes{}, err
		}
		name := fmt.Sprintf("runtime release %s in namespace %s (chart %s-%s)", r.Name, ns, r.Chart, shape.ChartVersion)
		mode := "cluster-wide"
		if shape.SingleNamespace {
			mode = "namespaced"
		}
		parts := "installs no CRDs"
		if len(shape.CRDs) > 0 {
			out.installers++
			parts = fmt.Sprintf("installs the cluster-wide parts (%d CRDs)", len(shape.CRDs))
		}
		out.describe = append(out.describe, fmt.Sprintf("%s: %s, %s", name, mode, parts))
		if v, err := semver.NewVersion(shape.ChartVersion); err != nil || v.LessThan(since) {
			out.broken = append(out.broken, name+" predates several runtimes per cluster")
		}
		if !shape.SingleNamespace {
			out.broken = append(out.broken, name+" is cluster-wide (global.runtime.singleNamespace is not true)")
		}
	}
	return out, nil
}

// wordMultiRuntime is existing-runtime's result for several runtimes on
// one cluster: a fail naming what breaks the rule, else a pass describing
// each runtime's shape and the planned one's.
func wordMultiRuntime(env *Env, found []runtimeFinding, planned plannedShape, describe, broken []string) Result {
	in := env.Inputs
	plannedDesc := fmt.Sprintf("the planned runtime (release %s in namespace %s, %s)", in.ReleaseName, in.Namespace, planned.from)
	if env.Upgrading() {
		plannedDesc = fmt.Sprintf("the upgraded runtime (release %s in namespace %s, %s)", in.ReleaseName, in.Namespace, planned.from)
	}
	refs := refsOf(found)
	if len(broken) > 0 {
		shapes := ""
		if len(describe) > 0 {
			shapes = " (" + strings.Join(describe, "; ") + ")"
		}
		return Fail("a GitOps Runtime is already installed: %s%s; %s; broken: %s",
			describeRuntimeFindings(found), shapes, multiRuntimeRule, strings.Join(broken, "; ")).
			WithHint(multiRuntimeHint).WithObjects(refs...)
	}
	parts := "installs no CRDs"
	if planned.installs {
		parts = "installs the cluster-wide parts (" + crdSummary(planned.crds) + ")"
	}
	return Pass("several runtimes on one cluster (chart README, \"Multi Runtime Installation\"): %s; %s: namespaced, %s",
		strings.Join(describe, "; "), plannedDesc, parts).WithObjects(refs...)
}

func crdSummary(crds []string) string {
	if len(crds) == 0 {
		return "CRDs, by its values"
	}
	return fmt.Sprintf("%d CRDs", len(crds))
}

// runtimeReleases returns the latest revision of every Helm release whose
// chart is gitops-runtime. The chart name is only in the release payload, so
// each release's latest revision is read (GETs, at most 4 at a time).
// Releases whose payload is over cluster.MaxReleaseSize decompressed are
// returned apart, undecoded.
func runtimeReleases(snap *cluster.Snapshot) (runtime, unreadable []cluster.HelmReleaseSummary, err error) {
	revs, err := snap.HelmRevisions()
	if err != nil {
		return nil, nil, err
	}
	latest := cluster.LatestHelmRevisions(revs)
	sums := make([]cluster.HelmReleaseSummary, len(latest))
	var g errgroup.Group
	g.SetLimit(4)
	for i, rev := range latest {
		g.Go(func() error {
			s, err := snap.HelmReleaseSummary(rev)
			sums[i] = s
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	for _, s := range sums {
		switch {
		case s.Unreadable != "":
			unreadable = append(unreadable, s)
		case s.Chart == RuntimeChartName:
			runtime = append(runtime, s)
		}
	}
	return runtime, unreadable, nil
}

func describeRuntimeFindings(found []runtimeFinding) string {
	byNS := map[string][]string{}
	for _, f := range found {
		byNS[f.ref.Namespace] = append(byNS[f.ref.Namespace], f.what)
	}
	nss := make([]string, 0, len(byNS))
	for ns := range byNS {
		nss = append(nss, ns)
	}
	sort.Strings(nss)
	parts := make([]string, len(nss))
	for i, ns := range nss {
		parts[i] = fmt.Sprintf("in namespace %s: %s", ns, strings.Join(byNS[ns], ", "))
	}
	return strings.Join(parts, "; ")
}

func existingRuntimeHint(found []runtimeFinding, in Inputs) string {
	h := "only one Hybrid GitOps Runtime per cluster: install this one on another cluster, " +
		"or uninstall the existing runtime first (helm uninstall <release> -n <namespace>, and remove it from the Codefresh platform)"
	for _, f := range found {
		if f.ref.Kind == "Secret" && f.ref.Namespace == in.Namespace && strings.HasPrefix(f.ref.Name, "sh.helm.release.v1."+in.ReleaseName+".v") {
			h += fmt.Sprintf("\nrelease %s already exists in namespace %s: to change it, use helm upgrade, not helm install, and check that upgrade first: kubectl gitops-preflight --upgrade -n %s --release-name %s --chart <chart> -f <values>", in.ReleaseName, in.Namespace, in.Namespace, in.ReleaseName)
			break
		}
	}
	return h
}

func refsOf(found []runtimeFinding) []ObjectRef {
	out := make([]ObjectRef, len(found))
	for i, f := range found {
		out[i] = f.ref
	}
	return out
}

// keepDenied records the first permission error in *denied (one signal
// failing for lack of permission must not hide the others) and returns any
// other error.
func keepDenied(denied *error, err error) error {
	if err == nil || !cluster.IsForbidden(err) {
		return err
	}
	if *denied == nil {
		*denied = err
	}
	return nil
}
