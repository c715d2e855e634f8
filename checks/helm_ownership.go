package checks

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/admission"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/apply"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// OwnershipConflict is one object of the rendered release that `helm
// install` could not create or adopt as it is.
type OwnershipConflict struct {
	Object     ObjectRef
	APIVersion string
	// Resource and ResourceVersion locate the existing object (for --fix).
	Resource        schema.GroupVersionResource
	ResourceVersion string
	// Why is a short phrase: "no Helm ownership metadata", "hook ... already
	// exists", "kind not served by the cluster".
	Why string
	// Owner is who holds it: "no owner", "deployed release x in namespace y",
	// "release x in namespace y, which no longer exists".
	Owner string
	// OwnerRelease is the owner's release record when it still exists (and
	// is not this release): adoption is then refused.
	OwnerRelease *cluster.HelmRecord
	// Missing is true when the cluster does not serve the kind at all.
	Missing bool
	// Hook is true for a hook object Helm would fail to re-create.
	Hook bool
	// Fields are the metadata to set to adopt it, old → new.
	Fields []FieldChange
}

// Adoptable reports whether --fix may adopt the object: it exists, is not a
// hook, and no other release that still exists owns it.
func (c OwnershipConflict) Adoptable() bool {
	return !c.Missing && !c.Hook && c.OwnerRelease == nil
}

// HelmOwnership passes when every object the rendered release would create
// either does not exist yet or passes Helm's ownership rule for this
// release (helm.sh/helm/v3 pkg/action/validate.go checkOwnership: label
// app.kubernetes.io/managed-by=Helm, annotations meta.helm.sh/release-name
// and meta.helm.sh/release-namespace equal to the release's), and every
// kind it renders is served by the cluster. Unlike Helm, which stops at the
// first, it reports every conflict, grouped by kind, with its current owner.
// A hook object that exists is a conflict only when its
// helm.sh/hook-delete-policy is set and lacks before-hook-creation (Helm's
// default deletes and re-creates it; https://helm.sh/docs/topics/charts_hooks/).
// Each kind is listed once, metadata-only, from the shared snapshot
// (cluster-scoped kinds cluster-wide, namespaced kinds in their namespace).
// argoproj.io CRDs are left to argo-crds-ownership, so that no object is
// reported twice. Fixable: --fix adopts the objects no existing release
// owns and refuses the others, naming their owner.
func HelmOwnership() Check {
	return Check{
		Meta: Meta{
			ID:         "helm-ownership",
			Impact:     ImpactInstallFails,
			ReadsChart: true,
			Category:   CategoryConflicts,
			Modes:      ModePre | ModeUpgrade,
			Title:      "No object of the rendered release exists without Helm ownership for it",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
			Fixable:    true,
		},
		Run:  runHelmOwnership,
		Plan: planHelmOwnership,
	}
}

func runHelmOwnership(ctx context.Context, env *Env) (Result, error) {
	if r, ok := argoSyncSkip(ctx, env); ok {
		return r, nil
	}
	r, skip, err := renderingForChecks(ctx, env)
	if skip != nil || err != nil {
		return derefResult(skip), err
	}
	conflicts, checked, err := HelmOwnershipConflicts(ctx, env, r)
	if err != nil {
		return Result{}, err
	}
	rel, ns := env.Inputs.ReleaseName, env.Inputs.Namespace
	ssa, who, err := helm4Conflicts(ctx, env, r)
	if err != nil {
		return Result{}, err
	}
	if len(conflicts) == 0 && len(ssa) == 0 {
		return Pass("none of the %d objects of release %s in namespace %s exists without Helm ownership for it; every kind is served%s", checked, rel, ns, who), nil
	}
	if len(conflicts) == 0 {
		return ssaFail(ssa, who, rel, ns), nil
	}
	g := groupConflicts(conflicts)
	parts, hints := g.words(rel, ns)
	refs := g.refs
	if len(ssa) > 0 {
		f := ssaFail(ssa, who, rel, ns)
		parts = append(parts, f.Message)
		hints = append(hints, f.Hint)
		refs = append(refs, f.Objects...)
	}
	return Fail("%d of %d objects of release %s in namespace %s conflict: %s", len(conflicts), checked, rel, ns, strings.Join(parts, "; ")).
		WithHint(strings.Join(hints, "\n")).WithObjects(refs...), nil
}

// conflictGroups are the ownership conflicts as helm-ownership words them:
// per kind (kinds in first-seen order) the objects Helm cannot adopt, the
// kinds the cluster does not serve, the objects named, and the releases
// that still exist and own some.
type conflictGroups struct {
	groups, missing []string
	refs            []ObjectRef
	refusedOwners   map[string]bool
}

// groupConflicts groups conflicts by kind.
func groupConflicts(conflicts []OwnershipConflict) conflictGroups {
	var kinds []string
	byKind := map[string][]OwnershipConflict{}
	for _, c := range conflicts {
		if _, ok := byKind[c.Object.Kind]; !ok {
			kinds = append(kinds, c.Object.Kind)
		}
		byKind[c.Object.Kind] = append(byKind[c.Object.Kind], c)
	}
	g := conflictGroups{refs: make([]ObjectRef, 0, len(conflicts)), refusedOwners: map[string]bool{}}
	for _, k := range kinds {
		var items []string
		for _, c := range byKind[k] {
			g.refs = append(g.refs, c.Object)
			if c.Missing {
				g.missing = append(g.missing, fmt.Sprintf("%s (%s)", k, c.APIVersion))
				break
			}
			name := c.Object.Name
			if c.Object.Namespace != "" {
				name = c.Object.Namespace + "/" + name
			}
			items = append(items, fmt.Sprintf("%s (%s; %s)", name, c.Why, c.Owner))
			if c.OwnerRelease != nil {
				g.refusedOwners[c.OwnerRelease.Name+" in namespace "+c.OwnerRelease.Namespace] = true
			}
		}
		if len(items) > 0 {
			g.groups = append(g.groups, fmt.Sprintf("%s ×%d: %s", k, len(items), strings.Join(items, ", ")))
		}
	}
	return g
}

// words are the parts of helm-ownership's failure and their hints, for
// release rel in namespace ns.
func (g conflictGroups) words(rel, ns string) (parts, hints []string) {
	if len(g.missing) > 0 {
		parts = append(parts, "kinds the cluster does not serve (helm install fails with \"no matches for kind\"): "+strings.Join(g.missing, ", "))
	}
	if len(g.groups) > 0 {
		parts = append(parts, "objects helm install cannot adopt (\"invalid ownership metadata\" or \"already exists\"): "+strings.Join(g.groups, "; "))
		hints = append(hints, fmt.Sprintf("adopt the objects no existing release owns: kubectl gitops-preflight --fix --chart ... --release-name %s -n %s (or Helm ≥ 3.17: helm install --take-ownership, which also takes objects from releases that still exist)", rel, ns),
			"Helm 4 installs with server-side apply: once adopted, objects whose fields another field manager set (kubectl apply, a controller) need helm install --force-conflicts")
	}
	if len(g.refusedOwners) > 0 {
		owners := make([]string, 0, len(g.refusedOwners))
		for o := range g.refusedOwners {
			owners = append(owners, o)
		}
		sort.Strings(owners)
		hints = append(hints, "objects owned by a release that still exists are never adopted: uninstall it or install as that release ("+strings.Join(owners, "; ")+")")
	}
	if len(g.missing) > 0 {
		hints = append(hints, "install the CRDs of the missing kinds first (for HTTPRoute: the Gateway API CRDs, https://gateway-api.sigs.k8s.io/guides/#installing-gateway-api), or change the values that render them")
	}
	return parts, hints
}

// helm4Conflicts predicts, when the Helm that will run is Helm 4 (whose
// helm install applies server-side, https://helm.sh/docs/), the
// field-manager conflicts of the objects of r that already exist (those
// --fix adopts or adopted, argoproj.io CRDs included): each is applied as a
// server-side dry run under Helm's field manager "helm", conflicts not
// forced (internal/apply). It returns none with Helm 3, in an --upgrade run
// (upgrade-apply tries every change there) and without a REST
// configuration; who says which Helm, for the pass message.
func helm4Conflicts(ctx context.Context, env *Env, r *chart.Rendering) ([]admission.Refusal, string, error) {
	if env.Upgrading() {
		return nil, "", nil
	}
	major, from := helmMajor(ctx, env)
	if major < 4 {
		return nil, "", nil
	}
	if env.Cluster.Clients().Config == nil {
		return nil, "", nil
	}
	api, err := env.Cluster.APIResources()
	if err != nil {
		return nil, "", err
	}
	var docs []string
	for _, o := range r.Objects {
		gvr, namespaced, ok := api.Resource(o.APIVersion, o.Kind)
		if !ok {
			continue
		}
		objNS := ""
		if namespaced {
			if objNS = o.Namespace; objNS == "" {
				objNS = env.Inputs.Namespace
			}
		}
		existing, err := env.Cluster.Objects(gvr, objNS)
		if err != nil {
			return nil, "", err
		}
		if _, ok := existing[objNS+"/"+o.Name]; ok {
			docs = append(docs, o.Doc)
		}
	}
	who := fmt.Sprintf("; Helm %d (%s) applies server-side", major, from)
	if len(docs) == 0 {
		return nil, who, nil
	}
	e, err := dryRunEngine(ctx, env)
	if err != nil {
		return nil, "", err
	}
	refused, err := apply.DryRunExisting(ctx, e, applyCluster{env.Cluster}, apply.Existing{Release: env.Inputs.ReleaseName, Namespace: env.Inputs.Namespace,
		Manifest: strings.Join(docs, "\n---\n")})
	if err != nil {
		return nil, "", fmt.Errorf("trying the existing objects with server-side apply: %w", err)
	}
	if len(refused) == 0 {
		return nil, who + " without field-manager conflicts on the " + plural(len(docs), "existing object"), nil
	}
	return refused, who, nil
}

// ssaFail is helm-ownership's failure for Helm 4's field-manager conflicts.
func ssaFail(ssa []admission.Refusal, who, rel, ns string) Result {
	parts := make([]string, 0, len(ssa))
	refs := make([]ObjectRef, 0, len(ssa))
	for _, r := range ssa {
		parts = append(parts, fmt.Sprintf("%s %s: %s", r.Kind, r.Name, r.Reason))
		refs = append(refs, ObjectRef{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name})
	}
	holds := "1 object holds fields"
	if len(ssa) > 1 {
		holds = fmt.Sprintf("%d objects hold fields", len(ssa))
	}
	return Fail("helm install of release %s in namespace %s fails with server-side apply (%s): %s of another field manager: %s",
		rel, ns, strings.TrimPrefix(who, "; "), holds, strings.Join(first(parts, 4), "; ")).
		WithHint("give Helm the fields: helm install --force-conflicts (Helm 4), or remove them from the other field manager's applied configuration; with Helm 3 (client-side apply) there is no conflict").
		WithObjects(refs...)
}

// HelmOwnershipConflicts checks every object of r Helm will create (every
// object before an install; before an upgrade, those not in the deployed
// revision) against the cluster: it returns the conflicts in rendering order
// and how many objects were checked (argoproj.io CRDs excluded:
// argo-crds-ownership reports them).
func HelmOwnershipConflicts(ctx context.Context, env *Env, r *chart.Rendering) ([]OwnershipConflict, int, error) {
	api, err := env.Cluster.APIResources()
	if err != nil {
		return nil, 0, err
	}
	created, err := createdByHelm(ctx, env)
	if err != nil {
		return nil, 0, err
	}
	rel, ns := env.Inputs.ReleaseName, env.Inputs.Namespace
	var records map[string]cluster.HelmRecord
	var out []OwnershipConflict
	checked := 0
	missingSeen := map[string]bool{}
	objs := append(append([]chart.Object(nil), r.Objects...), r.Hooks...)
	judged := func(o chart.Object) bool {
		return (o.Kind != "CustomResourceDefinition" || !strings.HasSuffix(o.Name, "."+ArgoGroup)) && (o.Hook || created(o))
	}
	listOwnedKinds(ctx, env, api, objs, judged)
	for _, o := range objs {
		if !judged(o) {
			continue
		}
		checked++
		gvr, namespaced, ok := api.Resource(o.APIVersion, o.Kind)
		if !ok {
			key := o.APIVersion + "/" + o.Kind
			if !missingSeen[key] {
				missingSeen[key] = true
				out = append(out, OwnershipConflict{Object: ObjectRef{Kind: o.Kind, Name: o.Name}, APIVersion: o.APIVersion, Missing: true, Why: "kind not served by the cluster"})
			}
			continue
		}
		objNS := ""
		if namespaced {
			objNS = o.Namespace
			if objNS == "" {
				objNS = ns
			}
		}
		existing, err := env.Cluster.Objects(gvr, objNS)
		if err != nil {
			return nil, 0, err
		}
		cur, ok := existing[objNS+"/"+o.Name]
		if !ok {
			continue
		}
		c := OwnershipConflict{Object: ObjectRef{Kind: o.Kind, Namespace: objNS, Name: o.Name}, APIVersion: o.APIVersion, Resource: gvr, ResourceVersion: cur.ResourceVersion}
		if o.Hook {
			if len(o.DeletePolicies) == 0 || chart.HasHookPolicy(o.DeletePolicies, release.HookBeforeHookCreation) {
				continue // Helm deletes and re-creates it
			}
			c.Hook = true
			c.Why = "hook already exists and its delete policy " + strings.Join(o.DeletePolicies, ",") + " lacks before-hook-creation"
		} else {
			c.Fields = ownershipFields(cur.Labels, cur.Annotations, rel, ns)
			if len(c.Fields) == 0 {
				continue
			}
			c.Why = ownershipWhy(c.Fields)
		}
		if records == nil {
			if records, err = env.Cluster.HelmReleaseRecords(); err != nil {
				return nil, 0, err
			}
		}
		c.Owner, c.OwnerRelease = describeOwner(records, cur.Annotations, rel, ns)
		out = append(out, c)
	}
	return out, checked, nil
}

// ownershipFields is Helm's checkOwnership as the metadata to set: the
// label and the two annotations that differ from this release's.
func ownershipFields(labels, annotations map[string]string, rel, ns string) []FieldChange {
	want := [3]struct{ field, key, old, new string }{
		{"metadata.labels", HelmManagedByLabel, labels[HelmManagedByLabel], HelmManagedByValue},
		{"metadata.annotations", HelmReleaseNameAnnotation, annotations[HelmReleaseNameAnnotation], rel},
		{"metadata.annotations", HelmReleaseNamespaceAnnotation, annotations[HelmReleaseNamespaceAnnotation], ns},
	}
	var out []FieldChange
	for _, w := range want {
		if w.old != w.new {
			out = append(out, FieldChange{Field: w.field + "[" + w.key + "]", Old: w.old, New: w.new})
		}
	}
	return out
}

func ownershipWhy(fields []FieldChange) string {
	if len(fields) == 3 && fields[0].Old == "" && fields[1].Old == "" && fields[2].Old == "" {
		return "no Helm ownership metadata"
	}
	var parts []string
	for _, f := range fields {
		key := f.Field[strings.IndexByte(f.Field, '[')+1 : len(f.Field)-1]
		if f.Old == "" {
			parts = append(parts, "missing "+key)
		} else {
			parts = append(parts, fmt.Sprintf("%s=%s", key, f.Old))
		}
	}
	return strings.Join(parts, ", ")
}

// refusal is the reason --fix gives for an object it will not adopt.
func refusal(c OwnershipConflict) string {
	switch {
	case c.OwnerRelease != nil:
		return fmt.Sprintf("%s: uninstall it or install as that release", c.Owner)
	case c.Hook:
		return c.Why + ": --fix never deletes; delete it or set helm.sh/hook-delete-policy: before-hook-creation"
	}
	return c.Why
}

// adoptionChange is the merge patch that adopts c (only the differing
// label/annotations, with the resourceVersion read, so a changed object is
// refused by the API server), or a refused change.
func adoptionChange(c OwnershipConflict) (Change, error) {
	if !c.Adoptable() {
		return Change{Object: c.Object, Refused: refusal(c)}, nil
	}
	patch, err := ownershipPatch(c.Fields, c.ResourceVersion)
	if err != nil {
		return Change{}, err
	}
	return Change{Object: c.Object, Resource: c.Resource, Fields: c.Fields, PatchType: types.MergePatchType, Patch: patch}, nil
}

func planHelmOwnership(ctx context.Context, env *Env) ([]Change, error) {
	r, skip, err := renderingForChecks(ctx, env)
	if err != nil {
		return nil, err
	}
	if skip != nil {
		return nil, errors.New(skip.Message)
	}
	conflicts, _, err := HelmOwnershipConflicts(ctx, env, r)
	if err != nil {
		return nil, err
	}
	var out []Change
	for _, c := range conflicts {
		if c.Missing {
			continue // nothing to adopt; the report names the kind
		}
		ch, err := adoptionChange(c)
		if err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, nil
}

// listOwnedKinds lists, at once (Snapshot.ReadObjectLists), every kind and
// namespace of the objects judged holds, into the run's snapshot, where the
// ownership loop then finds them: one round trip for all instead of one per
// kind in turn. Errors are left for the loop, which reads the same memoized
// lists.
func listOwnedKinds(ctx context.Context, env *Env, api *cluster.APIResources, objs []chart.Object, judged func(chart.Object) bool) {
	seen := map[cluster.ObjectList]bool{}
	var lists []cluster.ObjectList
	for _, o := range objs {
		if !judged(o) {
			continue
		}
		gvr, namespaced, ok := api.Resource(o.APIVersion, o.Kind)
		if !ok {
			continue
		}
		l := cluster.ObjectList{Resource: gvr}
		if namespaced {
			if l.Namespace = o.Namespace; l.Namespace == "" {
				l.Namespace = env.Inputs.Namespace
			}
		}
		if !seen[l] {
			seen[l] = true
			lists = append(lists, l)
		}
	}
	env.Cluster.ReadObjectLists(ctx, lists)
}
