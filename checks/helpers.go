package checks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/apply"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/installed"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/schedule"
)

// The helpers several checks share, each gathering from the Env what an
// engine then judges, or wording what one found: the Helm that will run,
// the chart's rules as the rule checks read them, what the chart rendered
// into the cluster (--post), and who owns an object (Helm's ownership
// metadata); the rendering of the run's chart as the checks read it (or the
// skip that stands for it) and a manifest's workloads; the words of the
// messages (a list cut to its first items, a count with its noun). A helper
// of one check lives in that check's file.

// helmMajor is the major version of the Helm that will run (--helm-major,
// else the client helm-version finds: $HELM_BIN, else PATH; Helm 3 when
// none is found) and where that came from, for messages.
func helmMajor(ctx context.Context, env *Env) (int, string) {
	if env.HelmMajor != 0 {
		return env.HelmMajor, "--helm-major"
	}
	if h, r, err := findHelm(ctx, env); err == nil && r == nil {
		return int(h.Version.Major()), fmt.Sprintf("helm v%s, %s", h.Raw, h.Source)
	}
	return 3, "no helm client found: Helm 3 assumed"
}

// chartRules is the rendering of the chart being installed as the rule
// checks read it: the rendering when there is one, else why not, in words
// a message can end with.
type chartRules struct {
	// R is the rendering; nil when the chart could not be loaded or did not
	// render.
	R *chart.Rendering
	// Missing says why R is nil ("no chart loaded (…)", "chart … did not
	// render (…)"); "" when R is set.
	Missing string
}

// readChartRules waits for the run's rendering. A chart that could not be
// loaded or rendered is not an error: the rule checks then apply today's
// defaults (plan.Defaults*) and say why. Only an interrupted wait is an
// error.
func readChartRules(ctx context.Context, env *Env) (chartRules, error) {
	r, err := env.Rendering(ctx)
	if err == nil {
		return chartRules{R: r}, nil
	}
	if ctx.Err() != nil {
		return chartRules{}, err
	}
	var le *chart.LoadError
	var rel *chart.ReleaseError
	switch re, isRender := chart.IsRenderError(err); {
	case errors.As(err, &le):
		return chartRules{Missing: fmt.Sprintf("no chart loaded (%v)", le.Err)}, nil
	case isRender:
		return chartRules{Missing: fmt.Sprintf("the chart did not render (%s)", re.Message())}, nil
	case errors.As(err, &rel):
		return chartRules{Missing: "helm upgrade refuses the release before rendering"}, nil
	default:
		return chartRules{Missing: fmt.Sprintf("the chart was not rendered (%v)", err)}, nil
	}
}

// chartName names the rendered chart ("chart gitops-runtime 0.30.0").
func (c chartRules) chartName() string {
	return "chart " + c.R.ChartName + " " + c.R.ChartVersion
}

// defaultsNote says that today's defaults were used and why.
func (c chartRules) defaultsNote() string {
	return fmt.Sprintf("%s: using the default of chart %s, the newest release line this plugin knows", c.Missing, plan.DefaultsChartVersion)
}

// argoCDRules are the rules the chart's validate-values hook applies to an
// existing Argo CD (chart.ArgoCDRules), and where each was taken from, in
// words.
type argoCDRules struct {
	// Range is the Argo CD version constraint; RangeFrom says whose it is
	// ("REQUIRED_VERSION_CONSTRAINT of the validate-values hook of chart
	// gitops-runtime 0.30.0", "--argocd-version-range, in place of ...").
	Range, RangeFrom string
	// Selector is the label selector of the Argo CD server Service;
	// SelectorFrom says whose it is.
	Selector, SelectorFrom string
	// Enforced is true when the hook checks the version at install time
	// (Helm then fails).
	Enforced bool
}

// readArgoCDRules takes the Argo CD rules from the rendered validate-values
// hook (chart.ArgoCDRulesOf), --argocd-version-range in place of the range
// when given, and says where each came from.
func readArgoCDRules(ctx context.Context, env *Env) (argoCDRules, error) {
	c, err := readChartRules(ctx, env)
	if err != nil {
		return argoCDRules{}, err
	}
	var hooks *chart.Hooks
	if c.R != nil {
		hooks = &c.R.ValidationHooks
	}
	r := chart.ArgoCDRulesOf(hooks, env.Upgrading() && syncOf(ctx, env) == nil)
	out := argoCDRules{Range: r.Range, Selector: r.Selector, Enforced: r.Enforced,
		RangeFrom: c.ruleFrom(r.RangeFrom, "REQUIRED_VERSION_CONSTRAINT"), SelectorFrom: c.ruleFrom(r.SelectorFrom, "ARGOCD_LABELS")}
	if o := env.Inputs.ArgoCDVersionRange; o != "" {
		from := "--argocd-version-range"
		if o != out.Range {
			from += fmt.Sprintf(", in place of %q (%s)", out.Range, out.RangeFrom)
		}
		out.Range, out.RangeFrom = o, from
	}
	return out, nil
}

// ruleFrom words where a value of the validate-values hook's environment
// variable name came from.
func (c chartRules) ruleFrom(s chart.ArgoCDRuleSource, name string) string {
	switch s {
	case chart.RuleAssumed:
		return c.defaultsNote()
	case chart.RuleNoHook:
		return fmt.Sprintf("%s renders no validate-values hook (installer.skipValidation=true), so nothing checks Argo CD's version at install: using the default of chart %s", c.chartName(), plan.DefaultsChartVersion)
	case chart.RuleUnsetInHook:
		return fmt.Sprintf("the validate-values hook of %s sets no %s: using the default of chart %s", c.chartName(), name, plan.DefaultsChartVersion)
	}
	return name + " of the validate-values hook of " + c.chartName()
}

// runtimeFacts reads what the chart rendered into the cluster
// (installed.Read: codefresh-cm, the runtime Ingress and its IngressClass,
// merged with the inputs) once per run, memoised on the snapshot.
func runtimeFacts(env *Env) (installed.Facts, error) {
	return cluster.Memo(env.Cluster, "post/runtime-facts", func() (installed.Facts, error) {
		return installed.Read(env.Cluster, env.Inputs)
	})
}

// runtimeIngressRef is the ObjectRef of the runtime Ingress of f.
func runtimeIngressRef(f installed.Facts) ObjectRef {
	return ObjectRef{Kind: "Ingress", Namespace: f.Ingress.Namespace, Name: f.Ingress.Name}
}

// upgradeTargetWorkloads returns the Deployments and StatefulSets the
// upgrade's target renders, as the cluster reads workloads
// (schedule.ClusterWorkloads); known is false when the target is not at
// hand (no chart, it does not render, Helm refuses the release).
func upgradeTargetWorkloads(ctx context.Context, env *Env) (ws []cluster.Workload, known bool, err error) {
	if _, skip, err := renderingForChecks(ctx, env); skip != nil || err != nil {
		return nil, false, err
	}
	u, err := env.Upgrade(ctx)
	if err != nil {
		return nil, false, err
	}
	specs, err := renderedWorkloads(env, u.Target)
	if err != nil {
		return nil, false, err
	}
	return schedule.ClusterWorkloads(specs), true, nil
}

// createdByHelm returns whether Helm will create an object of the rendering
// (and so check its ownership) rather than update it: in an --upgrade run,
// the objects of the revision Helm upgrades from are updated without the
// check (chart.Upgrade.InCurrent); before an install every object is
// created.
func createdByHelm(ctx context.Context, env *Env) (func(chart.Object) bool, error) {
	if !env.Upgrading() {
		return func(chart.Object) bool { return true }, nil
	}
	u, err := env.Upgrade(ctx)
	if err != nil {
		return nil, err
	}
	in, err := u.InCurrent()
	if err != nil {
		return nil, err
	}
	return func(o chart.Object) bool { return !in(o) }, nil
}

// describeOwner names the release an object's annotations say owns it
// (apply.OwnerOf), and returns its record when that release still exists
// (and is not rel in ns).
func describeOwner(records map[string]cluster.HelmRecord, annotations map[string]string, rel, ns string) (string, *cluster.HelmRecord) {
	o := apply.OwnerOf(records, annotations, rel, ns)
	switch {
	case o.Release == "":
		return "no owner", nil
	case o.Self:
		return "this release", nil
	case o.Record != nil:
		return fmt.Sprintf("owned by %s release %s in namespace %s", o.Record.Status, o.Release, orNone(o.Namespace)), o.Record
	}
	return fmt.Sprintf("owner release %s in namespace %s no longer exists", o.Release, orNone(o.Namespace)), nil
}

// Helpers of the checks' messages: a list cut to its first items, a count
// with its noun, a first line, a name or what stands for none.

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// orNamespace returns ns when a manifest leaves the namespace empty.
func orNamespace(got, ns string) string {
	if got == "" {
		return ns
	}
	return got
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// plural returns "1 change" or "3 changes".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// first returns at most n items of l, with "… and N more" after them.
func first(l []string, n int) []string {
	if len(l) <= n {
		return l
	}
	return append(append([]string{}, l[:n]...), fmt.Sprintf("… and %d more", len(l)-n))
}

// Helpers of the checks that read the rendered chart or a manifest: the
// rendering or the skip that stands for it, the skips of an upgrade's
// errors, and a manifest's workloads.

// chartSkip is the skip result for a chart that could not be loaded.
func chartSkip(err error) Result {
	return Skip("no chart loaded (%v): pass --chart with a local directory or .tgz, or a reachable oci:// mirror (and --chart-version)", err)
}

// errChartNotRendered makes helm-ownership skip when chart-renders fails.
var errChartNotRendered = errors.New("the chart does not render with these values (see chart-renders)")

func renderingForChecks(ctx context.Context, env *Env) (*chart.Rendering, *Result, error) {
	r, err := env.Rendering(ctx)
	var le *chart.LoadError
	if errors.As(err, &le) {
		res := chartSkip(le.Err)
		return nil, &res, nil
	}
	if _, ok := chart.IsRenderError(err); ok {
		res := Skip("%v", errChartNotRendered)
		return nil, &res, nil
	}
	var re *chart.ReleaseError
	if errors.As(err, &re) {
		res := Skip("helm upgrade refuses the release (release-upgradable)")
		return nil, &res, nil
	}
	return r, nil, err
}

func derefResult(r *Result) Result {
	if r == nil {
		return Result{}
	}
	return *r
}

// manifestWorkloads reads every Deployment, StatefulSet and Job of a
// manifest, hooks of every kind included.
func manifestWorkloads(manifest string) ([]RuntimePodSpec, error) {
	objs, err := chart.ManifestObjects(manifest)
	if err != nil {
		return nil, fmt.Errorf("decoding manifest document: %w", err)
	}
	return schedule.WorkloadsOf(objs)
}

// upgradeSkip turns the errors of Env.Upgrade that are not this check's to
// report into its skip: no chart (chart-renders says so), a release Helm
// refuses (release-upgradable) or a target that does not render
// (chart-renders).
func upgradeSkip(err error) (Result, bool) {
	var le *chart.LoadError
	if errors.As(err, &le) {
		return chartSkip(le.Err), true
	}
	var re *chart.ReleaseError
	if errors.As(err, &re) {
		return Skip("helm upgrade refuses the release (release-upgradable)"), true
	}
	if _, ok := chart.IsRenderError(err); ok {
		return Skip("the target chart does not render with the effective values (chart-renders)"), true
	}
	return Result{}, false
}

// versionAnchored anchors a warning or failure of run that names no source
// of its own to where the target chart version is written
// (Env.ChartVersionAnchor: --chart-version, or the Chart.yaml line of the
// chart given, an umbrella chart's gitops-runtime dependency): the version
// an upgrade moves to causes what it deletes, refuses and changes, and
// that line is where a pull request's annotation points.
func versionAnchored(run func(context.Context, *Env) (Result, error)) func(context.Context, *Env) (Result, error) {
	return func(ctx context.Context, env *Env) (Result, error) {
		r, err := run(ctx, env)
		if err == nil && r.Source == nil && (r.Status == StatusWarn || r.Status == StatusFail) {
			r = r.WithSource(env.ChartVersionAnchor())
		}
		return r, err
	}
}
