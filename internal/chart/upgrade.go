package chart

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/action"
	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	rspb "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/argocd"
)

// UpgradeValues are `helm upgrade`'s flags that decide which values the new
// revision gets beside -f/--set (Helm's pkg/action/upgrade.go reuseValues):
// with none of them and no -f/--set, the previous revision's values are
// reused; with -f/--set they are not. A bundle's spec records it as
// {"reuseValues": true}.
type UpgradeValues struct {
	// Reuse is --reuse-values: the given values over the previous computed
	// values (the target chart's new defaults are lost).
	Reuse bool `json:"reuseValues,omitempty"`
	// Reset is --reset-values: only the target chart's defaults and the
	// given values.
	Reset bool `json:"resetValues,omitempty"`
	// ResetThenReuse is --reset-then-reuse-values: the target chart's
	// defaults, the previous user values, then the given values.
	ResetThenReuse bool `json:"resetThenReuseValues,omitempty"`
}

// Upgrade is one `helm upgrade` predicted by Helm's own action.Upgrade (a
// client-side dry run over an in-memory copy of the release's revisions):
// the revision it starts from, the effective values and the rendered
// target.
type Upgrade struct {
	current struct {
		once sync.Once
		objs []Object
		err  error
	}
	// Last is the release's latest revision; Current is the revision Helm
	// upgrades from (the deployed one, else the last failed or superseded).
	Last, Current *rspb.Release
	// Target is the rendered target release; Chart is the target chart as
	// loaded (every subchart, enabled or not).
	Target *Rendering
	Chart  *helmchart.Chart
	// TargetManifest is the target's manifest as Helm applies it (hooks
	// excluded).
	TargetManifest string
	// Values are the user values the new revision records (Helm's
	// release.Config after its values rules).
	Values map[string]any
	// Options are the values flags of the upgrade; Given are the values of
	// -f/--set/--set-string.
	Options UpgradeValues
	Given   map[string]any
	// TargetDefaults are the target chart's own defaults (its values and its
	// subcharts', coalesced by Helm), whatever the values flags.
	TargetDefaults map[string]any
	// CurrentComputed and TargetComputed are the values each revision's
	// templates see: its chart's defaults coalesced with its user values.
	CurrentComputed, TargetComputed map[string]any
	// Sync is set when Argo CD performs the upgrade (PrepareSync): Current
	// is then the Application's inventory, not a Helm revision, and its
	// sync policy decides what is pruned and how objects are applied.
	Sync *argocd.Sync
	// caps are the cluster's capabilities the prediction rendered with.
	caps Capabilities
}

// ReleaseError is Helm refusing to upgrade the release before rendering
// anything: no deployed revision (`"R" has no deployed releases`), or an
// operation in progress (`another operation (install/upgrade/rollback) is in
// progress`). Raw is Helm's message.
type ReleaseError struct{ Raw string }

func (e *ReleaseError) Error() string { return e.Raw }

// errPendingText is Helm's errPending (pkg/action/action.go), the error of
// an upgrade of a release whose latest revision is pending-*.
const errPendingText = "another operation (install/upgrade/rollback) is in progress"

// PrepareUpgrade runs Helm's action.Upgrade as `helm upgrade NAME CHART -n
// NAMESPACE` with vals (the -f/--set values, merged as Helm merges them)
// and opts would, in client-side dry-run mode over revisions (the release's
// revisions, as decoded from its storage: the latest at least, and the last
// deployed one when the latest is not), with the cluster's capabilities. c
// is not modified. The error is *ReleaseError (Helm refuses the release) or
// *RenderError (the target does not render with the effective values).
func PrepareUpgrade(ctx context.Context, c *helmchart.Chart, name, namespace string, revisions []*rspb.Release, vals map[string]any, opts UpgradeValues, caps Capabilities) (*Upgrade, error) {
	mem := driver.NewMemory()
	mem.SetNamespace(namespace)
	store := storage.Init(mem)
	var prev map[string]any
	for _, r := range revisions {
		if err := store.Create(r); err != nil {
			return nil, fmt.Errorf("release %s revision %d: %w", r.Name, r.Version, err)
		}
		if r.Info != nil && r.Info.Status == rspb.StatusDeployed {
			prev = r.Config
		}
	}
	cfg := &action.Configuration{
		Releases:     store,
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartutil.DefaultCapabilities.Copy(),
		Log:          func(string, ...any) {},
	}
	if caps.KubeVersion != "" {
		kv, err := chartutil.ParseKubeVersion(caps.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("kubernetes version %q: %w", caps.KubeVersion, err)
		}
		cfg.Capabilities.KubeVersion = *kv
	}
	cfg.Capabilities.APIVersions = append(cfg.Capabilities.APIVersions, caps.APIVersions...)

	u := action.NewUpgrade(cfg)
	u.Namespace = namespace
	u.DryRun = true
	u.DryRunOption = "client"
	u.ReuseValues, u.ResetValues, u.ResetThenReuseValues = opts.Reuse, opts.Reset, opts.ResetThenReuse
	if vals == nil {
		vals = map[string]any{}
	}
	// The files a template may read are judged over every value the
	// templates can see: the given ones and the previous revision's.
	target := withoutUnreadFiles(c, map[string]any{"given": vals, "previous": prev}, false)
	rel, err := u.RunWithContext(ctx, name, target, copyValues(vals))
	if err != nil {
		if errors.Is(err, driver.ErrNoDeployedReleases) || err.Error() == errPendingText {
			return nil, &ReleaseError{Raw: err.Error()}
		}
		return nil, &RenderError{Raw: err.Error()}
	}
	out := &Upgrade{Values: rel.Config, Chart: c, TargetManifest: rel.Manifest, Options: opts, Given: vals, caps: caps}
	if out.TargetDefaults, err = chartutil.CoalesceValues(c, map[string]any{}); err != nil {
		return nil, fmt.Errorf("target chart defaults: %w", err)
	}
	if out.Last, err = store.Last(name); err != nil {
		return nil, err
	}
	out.Current = out.Last
	if out.Last.Info.Status != rspb.StatusDeployed {
		if d, err := store.Deployed(name); err == nil {
			out.Current = d
		}
	}
	if out.Target, err = rendering(c.Metadata, rel); err != nil {
		return nil, err
	}
	// Helm coalesces the target's values over its (possibly replaced, with
	// --reuse-values) chart defaults; rel.Chart is the chart it rendered.
	if out.TargetComputed, err = chartutil.CoalesceValues(rel.Chart, rel.Config); err != nil {
		return nil, fmt.Errorf("target values: %w", err)
	}
	if out.Current.Chart != nil {
		if out.CurrentComputed, err = chartutil.CoalesceValues(out.Current.Chart, out.Current.Config); err != nil {
			return nil, fmt.Errorf("values of revision %d: %w", out.Current.Version, err)
		}
	}
	return out, nil
}

// Upgradable asks Helm's action.Upgrade whether it upgrades the release at
// all, whatever the chart: PrepareUpgrade of an empty chart over revisions.
// The error is *ReleaseError (Helm's refusal) or nil.
func Upgradable(ctx context.Context, name, namespace string, revisions []*rspb.Release) error {
	empty := &helmchart.Chart{Metadata: &helmchart.Metadata{APIVersion: "v2", Name: "upgradable", Version: "0.0.0"}}
	_, err := PrepareUpgrade(ctx, empty, name, namespace, revisions, nil, UpgradeValues{}, Capabilities{})
	var re *ReleaseError
	if errors.As(err, &re) {
		return re
	}
	return nil
}

// CurrentObjects returns the objects of the revision Helm upgrades from, as
// its stored manifest holds them (hooks excluded: Helm neither updates nor
// deletes them on upgrade).
func (u *Upgrade) CurrentObjects() ([]Object, error) {
	// Parsed once: helm-ownership, argo-crds-ownership and upgrade-deletes
	// all read it, concurrently.
	u.current.once.Do(func() { u.current.objs, u.current.err = ManifestObjects(u.Current.Manifest) })
	return u.current.objs, u.current.err
}

// InCurrent returns whether an object of the target is in the revision Helm
// upgrades from (same group, kind, namespace and name, Helm's
// isMatchingInfo). Helm updates those without its ownership check and checks
// only the objects it creates (pkg/action/upgrade.go: existingResourceConflict
// of toBeCreated, https://github.com/helm/helm/blob/main/pkg/action/upgrade.go).
func (u *Upgrade) InCurrent() (func(Object) bool, error) {
	cur, err := u.CurrentObjects()
	if err != nil {
		return nil, err
	}
	keys := make(map[string]bool, len(cur))
	for _, o := range cur {
		keys[o.matchKey()] = true
	}
	return func(o Object) bool { return keys[o.matchKey()] }, nil
}

// ManifestObjects parses a release manifest (YAML documents separated by
// "---", as Helm stores them) into its objects, in Helm's manifest order.
// A manifest is parsed once per process (the last few are kept): the
// caller gets its own slice.
func ManifestObjects(manifest string) ([]Object, error) {
	return manifestObjectsOnce(manifest)
}

// parseManifest is ManifestObjects' parse: the documents split as Helm's
// releaseutil.SplitManifests splits them (splitDocuments), in order.
func parseManifest(manifest string) ([]Object, error) {
	var out []Object
	for _, m := range splitDocuments(manifest) {
		o, ok, err := parse(m)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, o)
		}
	}
	return out, nil
}

// Removed returns the objects of the current revision the target no longer
// renders: what Helm's kube client deletes after the upgrade
// (pkg/kube/client.go Update: original.Difference(target), matched by API
// group, kind, namespace and name, the version aside), before it looks at
// helm.sh/resource-policy: keep on the live object.
func (u *Upgrade) Removed() ([]Object, error) {
	cur, err := u.CurrentObjects()
	if err != nil {
		return nil, err
	}
	rendered := map[string]bool{}
	for _, o := range u.Target.Objects {
		rendered[o.matchKey()] = true
	}
	var out []Object
	for _, o := range cur {
		if !rendered[o.matchKey()] {
			out = append(out, o)
		}
	}
	return out, nil
}

// Group returns the object's API group ("" for the core group).
func (o Object) Group() string {
	if i := strings.IndexByte(o.APIVersion, '/'); i >= 0 {
		return o.APIVersion[:i]
	}
	return ""
}

func (o Object) matchKey() string {
	return o.Group() + "/" + o.Kind + "/" + o.Namespace + "/" + o.Name
}

// rendering builds the Rendering of a release Helm rendered.
func rendering(md *helmchart.Metadata, rel *rspb.Release) (*Rendering, error) {
	r := &Rendering{ChartName: md.Name, ChartVersion: md.Version}
	var manifest strings.Builder
	manifest.WriteString(rel.Manifest)
	for _, h := range rel.Hooks {
		manifest.WriteString("\n---\n# Source: " + h.Path + "\n" + h.Manifest + "\n")
	}
	r.Manifest = manifest.String()
	r.releaseManifest = rel.Manifest
	var err error
	if r.ValidationHooks, err = readHooks(rel.Hooks); err != nil {
		return nil, fmt.Errorf("rendered hooks: %w", err)
	}
	r.KubeVersions = KubeVersionRules(rel.Chart)
	r.ChartImages = chartImages(rel.Chart)
	// In Helm's manifest order (SplitManifests returns a map): the
	// checks' messages list objects in the same order on every run.
	if r.Objects, err = ManifestObjects(rel.Manifest); err != nil {
		return nil, err
	}
	for _, h := range rel.Hooks {
		o, ok, err := parse(h.Manifest)
		if err != nil {
			return nil, err
		}
		if ok {
			o.Template = h.Path
			o.Hook, o.Events, o.Weight = true, h.Events, h.Weight
			for _, p := range h.DeletePolicies {
				o.DeletePolicies = append(o.DeletePolicies, string(p))
			}
			r.Hooks = append(r.Hooks, o)
		}
	}
	return r, nil
}
