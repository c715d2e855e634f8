package chart

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	rspb "helm.sh/helm/v3/pkg/release"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
	goyaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// Hooks is what the chart's pre-install validation hooks will do, read from
// the rendered hook objects.
type Hooks struct {
	// ValidateValues is the rendered validate-values Job; nil when the chart
	// renders none (installer.skipValidation=true).
	ValidateValues *ValidateValues
	// ValidateUsage is true when the chart renders the validate-usage Job
	// (false with installer.skipUsageValidation=true).
	ValidateUsage bool
	// ValuesConfigMap is true when the chart renders the helm-values-config
	// ConfigMap, a copy of the release's values that exists while the hooks
	// run.
	ValuesConfigMap bool
	// ValidateValuesOnUpgrade and ValidateUsageOnUpgrade are true when the
	// Job's helm.sh/hook holds pre-upgrade: helm upgrade runs it too
	// (validate-values is "pre-install,pre-upgrade", validate-usage
	// "pre-install"). Argo CD runs every pre-install or pre-upgrade hook as
	// a PreSync hook of every sync.
	ValidateValuesOnUpgrade, ValidateUsageOnUpgrade bool
}

// ValidateValues is the environment of the validate-values Job's container
// (the chart's templates/hooks/pre-install/_env.yaml), the rules its shell
// script applies.
type ValidateValues struct {
	// ArgoCDVersionConstraint is REQUIRED_VERSION_CONSTRAINT: the Argo CD
	// versions the hook accepts, a semver constraint the hook checks with
	// semver-cli (">=3.2 <=3.4" in chart 0.30.0); "" when the Job does not
	// set it.
	ArgoCDVersionConstraint string
	// ArgoCDServerSelector is ARGOCD_LABELS without its trailing comma: the
	// label selector (installer.argoCdVersionCheck.argoServerLabels) the
	// hook lists Services with to find the Argo CD server
	// ("app.kubernetes.io/component=server,app.kubernetes.io/part-of=argocd");
	// "" when the Job does not set it.
	ArgoCDServerSelector string
	// ChecksArgoCDVersion is ARGOCD_CHECK_VERSION == "true": the hook checks
	// an existing Argo CD (argo-cd.enabled=false).
	ChecksArgoCDVersion bool
}

// ArgoCDRuleSource says where a value of ArgoCDRules comes from.
type ArgoCDRuleSource int

// The sources of ArgoCDRules' values.
const (
	// RuleAssumed: the chart was not rendered, so today's chart's hook is
	// assumed (plan.DefaultArgoCDVersionRange, plan.DefaultArgoCDServerSelector).
	RuleAssumed ArgoCDRuleSource = iota
	// RuleNoHook: the chart renders no validate-values hook
	// (installer.skipValidation=true): nothing checks Argo CD at install,
	// and the default is used.
	RuleNoHook
	// RuleFromHook: the validate-values hook's environment sets it.
	RuleFromHook
	// RuleUnsetInHook: the hook renders without it: the default is used.
	RuleUnsetInHook
)

// ArgoCDRules are the rules the chart's validate-values hook applies to an
// existing Argo CD (its REQUIRED_VERSION_CONSTRAINT and ARGOCD_LABELS, the
// chart's templates/hooks/pre-install/_env.yaml), and where each comes
// from.
type ArgoCDRules struct {
	// Range is the Argo CD version constraint, Selector the label selector
	// of the Argo CD server Service.
	Range, Selector         string
	RangeFrom, SelectorFrom ArgoCDRuleSource
	// Enforced is true when the hook checks the version when Helm runs it
	// (Helm then fails): the rendered hook says so (ARGOCD_CHECK_VERSION),
	// or the chart was not rendered and today's chart's hook is assumed.
	Enforced bool
}

// ArgoCDRulesOf reads the Argo CD rules from h, the rendered validation
// hooks (nil when the chart was not rendered), defaults filled in.
// helmUpgrade is true when helm upgrade runs the hooks: it runs only the
// pre-upgrade ones (https://helm.sh/docs/topics/charts_hooks/#the-available-hooks),
// so a validate-values hook that is not one checks nothing then; an
// install, and an Argo CD sync (which runs every pre-install or
// pre-upgrade hook as a PreSync hook), run it.
func ArgoCDRulesOf(h *Hooks, helmUpgrade bool) ArgoCDRules {
	out := ArgoCDRules{Range: plan.DefaultArgoCDVersionRange, Selector: plan.DefaultArgoCDServerSelector}
	switch {
	case h == nil:
		out.Enforced = true
		out.RangeFrom, out.SelectorFrom = RuleAssumed, RuleAssumed
	case h.ValidateValues == nil:
		out.RangeFrom, out.SelectorFrom = RuleNoHook, RuleNoHook
	default:
		vv := h.ValidateValues
		out.Enforced = vv.ChecksArgoCDVersion && (!helmUpgrade || h.ValidateValuesOnUpgrade)
		out.RangeFrom, out.SelectorFrom = RuleFromHook, RuleFromHook
		if vv.ArgoCDVersionConstraint != "" {
			out.Range = vv.ArgoCDVersionConstraint
		} else {
			out.RangeFrom = RuleUnsetInHook
		}
		if vv.ArgoCDServerSelector != "" {
			out.Selector = vv.ArgoCDServerSelector
		} else {
			out.SelectorFrom = RuleUnsetInHook
		}
	}
	return out
}

// KubeVersionRule is the kubeVersion one chart of the rendered tree declares
// in its Chart.yaml (a Masterminds/semver constraint). Helm refuses an
// install when the root chart's is not met ("chart requires kubeVersion: …
// which is incompatible with Kubernetes …", helm.sh/helm/v3/pkg/action
// Install.RunWithContext) and never checks a subchart's.
type KubeVersionRule struct {
	// Chart is the chart's path in the tree, aliases applied:
	// "gitops-runtime", "gitops-runtime/argo-cd".
	Chart string
	// Version is that chart's version.
	Version string
	// Constraint is its kubeVersion, e.g. ">=1.25.0-0".
	Constraint string
	// Root is true for the chart being installed (the one Helm enforces).
	Root bool
}

// Allows reports whether the cluster version kubeVersion ("v1.30.2",
// vendor suffixes included, as /version reports it) meets the rule, judged
// as Helm judges the root chart's: chartutil.ParseKubeVersion, then
// chartutil.IsCompatibleRange. A constraint or version that does not parse
// is not met, as in Helm.
func (r KubeVersionRule) Allows(kubeVersion string) bool {
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		return false
	}
	return chartutil.IsCompatibleRange(r.Constraint, kv.String())
}

// KubeVersionRules returns the kubeVersion of c and of every chart under it
// that declares one, parent first. Given the chart Helm rendered (its
// disabled subcharts dropped by Helm's dependency processing) they are the
// rules of what the install deploys; given a loaded chart, of every
// dependency, enabled or not.
func KubeVersionRules(c *helmchart.Chart) []KubeVersionRule {
	var out []KubeVersionRule
	var walk func(c *helmchart.Chart, parent string, root bool)
	walk = func(c *helmchart.Chart, parent string, root bool) {
		if c == nil || c.Metadata == nil {
			return
		}
		path := c.Metadata.Name
		if parent != "" {
			path = parent + "/" + path
		}
		if kv := strings.TrimSpace(c.Metadata.KubeVersion); kv != "" {
			out = append(out, KubeVersionRule{Chart: path, Version: c.Metadata.Version, Constraint: kv, Root: root})
		}
		for _, d := range c.Dependencies() {
			walk(d, path, false)
		}
	}
	walk(c, "", true)
	return out
}

// readHooks reads the validation hooks of a rendered release.
func readHooks(hooks []*rspb.Hook) (Hooks, error) {
	var h Hooks
	for _, hk := range hooks {
		if hk == nil {
			continue
		}
		switch {
		case hk.Kind == "Job" && hk.Name == plan.ValidateValuesJob:
			var job batchv1.Job
			if err := yaml.Unmarshal([]byte(hk.Manifest), &job); err != nil {
				return Hooks{}, err
			}
			h.ValidateValues = validateValuesOf(&job)
			h.ValidateValuesOnUpgrade = slices.Contains(hk.Events, rspb.HookPreUpgrade)
		case hk.Kind == "Job" && hk.Name == plan.ValidateUsageJob:
			h.ValidateUsage = true
			h.ValidateUsageOnUpgrade = slices.Contains(hk.Events, rspb.HookPreUpgrade)
		case hk.Kind == "ConfigMap" && hk.Name == plan.HelmValuesConfigMap:
			h.ValuesConfigMap = true
		}
	}
	return h, nil
}

// validateValuesOf reads the validate-values container's literal
// environment (the first container when none has the Job's name).
func validateValuesOf(job *batchv1.Job) *ValidateValues {
	cs := job.Spec.Template.Spec.Containers
	if len(cs) == 0 {
		return &ValidateValues{}
	}
	c := cs[0]
	for _, x := range cs {
		if x.Name == plan.ValidateValuesJob {
			c = x
			break
		}
	}
	v := &ValidateValues{}
	for _, e := range c.Env {
		switch e.Name {
		case "REQUIRED_VERSION_CONSTRAINT":
			v.ArgoCDVersionConstraint = strings.TrimSpace(e.Value)
		case "ARGOCD_LABELS":
			// The chart writes "k=v," for each label; the hook strips the
			// last comma (sed 's/,$//').
			v.ArgoCDServerSelector = strings.TrimSuffix(strings.TrimSpace(e.Value), ",")
		case "ARGOCD_CHECK_VERSION":
			v.ChecksArgoCDVersion = e.Value == "true"
		}
	}
	return v
}

// RuntimeShape is what the chart README's multi-runtime rule reads of a
// gitops-runtime release ("Multi Runtime Installation",
// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/README.md#multi-runtime-installation):
// its chart version, whether it runs in namespaced mode and which
// cluster-wide parts (CRDs) it installed.
type RuntimeShape struct {
	ChartVersion string
	// SingleNamespace is global.runtime.singleNamespace of the release's
	// computed values (the chart's defaults under the user's, coalesced by
	// Helm's chartutil.CoalesceValues).
	SingleNamespace bool
	// CRDs are the names of the CustomResourceDefinitions in the release's
	// manifest.
	CRDs []string
}

// ReleaseShape reads the RuntimeShape of a stored release.
func ReleaseShape(rel *rspb.Release) (RuntimeShape, error) {
	var s RuntimeShape
	if rel == nil || rel.Chart == nil || rel.Chart.Metadata == nil {
		return s, errors.New("release record has no chart")
	}
	s.ChartVersion = rel.Chart.Metadata.Version
	vals, err := chartutil.CoalesceValues(rel.Chart, rel.Config)
	if err != nil {
		return s, fmt.Errorf("values of release %s: %w", rel.Name, err)
	}
	if x, err := vals.PathValue("global.runtime.singleNamespace"); err == nil {
		s.SingleNamespace, _ = x.(bool)
	}
	for _, doc := range splitDocuments(rel.Manifest) {
		// Only the head of each document is decoded (goyaml.v3 into a
		// struct of two fields: no JSON conversion of a whole CRD schema).
		var head struct {
			Kind     string `yaml:"kind"`
			Metadata struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
		}
		if err := goyaml.Unmarshal([]byte(doc), &head); err != nil {
			return s, fmt.Errorf("manifest of release %s: %w", rel.Name, err)
		}
		if head.Kind == "CustomResourceDefinition" {
			s.CRDs = append(s.CRDs, head.Metadata.Name)
		}
	}
	sort.Strings(s.CRDs)
	return s, nil
}

// CRDs returns the names of the CustomResourceDefinitions the rendering
// installs (rendered as templates; a chart's crds/ directory is not among
// them), sorted.
func (r *Rendering) CRDs() []string {
	var out []string
	for _, o := range r.Objects {
		if o.Kind == "CustomResourceDefinition" {
			out = append(out, o.Name)
		}
	}
	sort.Strings(out)
	return out
}
