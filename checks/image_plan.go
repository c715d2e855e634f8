package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

// ImagePlan lists every image the rendered release pulls or names (hooks,
// init containers, images in args and env, the charts' image annotations)
// and, with a mirror intent (--registry-mirror HOST[/PREFIX], else
// global.imageRegistry), fails for each image still pointing elsewhere,
// naming its workload and the values key that moves it, found by Helm's
// render (chart.Pending.ImageKeys, PlanMirror), or saying that the chart
// has no value for it (global.imageRegistry reaches only some templates
// of chart 0.30,
// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/values.yaml#L154).
// On an air-gapped cluster such an image is never pulled: impact
// runtime-breaks, install-fails when a hook pulls it (hookEffect).
// The hint gives the values as --set flags and the mirror list in the CSV
// layout of Codefresh's private-registry helper. With --upgrade it names
// the images new in the target chart, and the mirror list holds just
// those.
func ImagePlan() Check {
	return Check{
		Meta: Meta{
			ID:         "image-plan",
			Impact:     ImpactRuntimeBreaks,
			Category:   CategoryImages,
			Modes:      ModePre | ModeUpgrade,
			Title:      "Every image the install pulls comes from the intended registry",
			Severity:   SeverityFail,
			ReadsChart: true,
		},
		Run: runImagePlan,
	}
}

func runImagePlan(ctx context.Context, env *Env) (Result, error) {
	ri, skip, err := imagesOfRun(ctx, env)
	if skip != nil || err != nil {
		return deref(skip), err
	}
	all := distinctRefs(ri.refs)
	mirror, from := mirrorIntent(env)
	newRefs, newNote, err := newInTarget(ctx, env, all)
	if err != nil {
		return Result{}, err
	}
	if mirror == "" {
		r := Pass("%d images from %s; no mirror intent (--registry-mirror or global.imageRegistry)%s", len(all), registryCounts(all), newNote)
		if len(newRefs) > 0 {
			r.Hint = "images new in the target:\n" + strings.Join(newRefs, "\n")
		}
		return r, nil
	}
	elsewhereAny := false
	for _, ref := range ri.refs {
		elsewhereAny = elsewhereAny || !chart.AtMirror(ref.Ref, mirror)
	}
	if !elsewhereAny {
		// Nothing to move: no value to trace (ImageKeys renders the chart
		// again).
		r := Pass("all %d images are at %s (%s)%s", len(all), mirror, from, newNote)
		if env.Upgrading() && len(newRefs) > 0 {
			r.Hint = "mirror list of the images new in the target:\n" + mirrorCSV(newRefs, mirror)
		}
		return r, nil
	}
	keys, failed, err := env.Chart.ImageKeys(ctx, ri.pods, ri.refs)
	if err != nil {
		return Result{}, err
	}
	plan, err := env.Chart.PlanMirror(ctx, mirror, ri.pods, ri.refs, keys)
	if err != nil {
		return Result{}, err
	}
	unmoved := map[int]bool{}
	for _, i := range plan.Unmoved {
		unmoved[i] = true
	}
	var lines []string
	var objs []ObjectRef
	seenObj := map[ObjectRef]bool{}
	var elsewhere []string
	seenRef := map[string]bool{}
	hook := false // a hook pulls an image elsewhere
	noValue, untraced := 0, 0
	for i, ref := range ri.refs {
		if chart.AtMirror(ref.Ref, mirror) {
			continue
		}
		where := ref.Container + " " + ref.Field
		chartName := ref.Container
		if ref.Pod >= 0 {
			p := ri.pods[ref.Pod]
			hook = hook || (p.Hook != "" && ref.Pulled())
			where = podLabel(p) + " " + ref.Container + " " + ref.Field
			chartName = p.Chart(ri.r.ChartName)
			if o := podObject(p, env.Inputs); !seenObj[o] {
				seenObj[o] = true
				objs = append(objs, o)
			}
		}
		how := ""
		switch {
		case unmoved[i] && len(chart.FailuresIn(ref.Ref, failed)) > 0:
			untraced++
			how = fmt.Sprintf("no value of chart %s found for this, and %s", chartName, couldNotTrace(chart.FailuresIn(ref.Ref, failed)))
		case unmoved[i]:
			noValue++
			how = fmt.Sprintf("chart %s has no value for this", chartName)
		default:
			var set []string
			for _, k := range plan.Moves[i] {
				set = append(set, k.SetPath()+"="+k.Value)
			}
			how = "set " + strings.Join(set, " ")
		}
		lines = append(lines, fmt.Sprintf("%s (%s: %s)", ref.Ref, where, how))
		if !seenRef[ref.Ref] {
			seenRef[ref.Ref] = true
			elsewhere = append(elsewhere, ref.Ref)
		}
	}
	sort.Strings(elsewhere)
	listed := all
	if env.Upgrading() {
		listed = newRefs
	}
	csv := mirrorCSV(listed, mirror)
	var hint strings.Builder
	var flags, inLists []chart.ImageKey
	for _, k := range plan.Set {
		if k.InList() {
			inLists = append(inLists, k)
		} else {
			flags = append(flags, k)
		}
	}
	if len(flags) > 0 {
		hint.WriteString("install with these values (Helm renders the images they move at " + mirror + "):\n")
		for _, k := range flags {
			hint.WriteString("  " + k.SetFlag() + "\n")
		}
	}
	if len(inLists) > 0 {
		hint.WriteString("and, in a values file, these keys inside lists (Helm replaces a list whole, --set included: copy each list as you give it, or as the chart has it, and change only these):\n")
		for _, k := range inLists {
			hint.WriteString("  " + k.SetPath() + ": " + k.Value + "  (list " + k.ListPath() + ")\n")
		}
	}
	if untraced > 0 {
		hint.WriteString("the values that move some images could not be traced (Helm could not render the chart with them marked, or its objects did not decode): set them by hand, or mirror those images under their own names\n")
	}
	if noValue > 0 {
		hint.WriteString("the chart has no value for some images: mirror them under their own names and have the nodes' container runtime redirect their registries to " + mirror + "\n")
	}
	what := "mirror list (copy each source_image to its target_image)"
	if env.Upgrading() {
		what = "mirror list of the images new in the target"
	}
	hint.WriteString(what + ":\n" + csv)
	msg := fmt.Sprintf("%d of %d images are not at %s (%s)%s: %s", len(elsewhere), len(all), mirror, from, newNote, strings.Join(lines, "; "))
	return hookEffect(Fail("%s", msg).WithHint(hint.String()).WithObjects(objs...), hook), nil
}

// hookEffect returns r with impact install-fails when a hook cannot pull
// its image: Helm waits for a hook's Job to complete and fails the install
// or upgrade when it does not (https://helm.sh/docs/topics/charts_hooks/#the-lifecycle-of-hooks);
// a runtime pod that cannot pull breaks the runtime only.
func hookEffect(r Result, hook bool) Result {
	if hook {
		return r.WithEffect(ImpactInstallFails)
	}
	return r
}

// newInTarget returns, in an --upgrade run, the images of refs (the
// target's) that the deployed revision does not pull or name, and a note
// for the message ("; 2 new in the target: ..."); nothing otherwise.
func newInTarget(ctx context.Context, env *Env, refs []string) ([]string, string, error) {
	if !env.Upgrading() {
		return nil, "", nil
	}
	up, err := env.Upgrade(ctx)
	if err != nil || up == nil || up.Current == nil {
		return nil, "", err
	}
	_, cur, err := chart.ReleaseImages(up.Current)
	if err != nil {
		return nil, "", err
	}
	had := map[string]bool{}
	for _, r := range cur {
		had[r.Ref] = true
	}
	var out []string
	for _, r := range refs {
		if !had[r] {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Sprintf("; none new since revision %d", up.Current.Version), nil
	}
	return out, fmt.Sprintf("; %d new since revision %d: %s", len(out), up.Current.Version, strings.Join(out, ", ")), nil
}

// couldNotTrace words the keys whose provenance render failed
// (chart.TraceFailure): "could not trace K1, K2 (Helm: <error of K1>)",
// at most three keys named.
func couldNotTrace(failed []chart.TraceFailure) string {
	var names []string
	for i, f := range failed {
		if i == 3 {
			names = append(names, fmt.Sprintf("%d more", len(failed)-3))
			break
		}
		names = append(names, f.SetPath())
	}
	return fmt.Sprintf("could not trace %s (Helm: %s)", strings.Join(names, ", "), failed[0].Err)
}

// deref returns *r, or the zero Result for nil.
func deref(r *Result) Result {
	if r == nil {
		return Result{}
	}
	return *r
}
