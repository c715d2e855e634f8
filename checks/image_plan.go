package checks

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/images"
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
	all := images.DistinctRefs(ri.Refs)
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
	if ri.AllAt(mirror) {
		// Nothing to move: no value to trace (ImageKeys renders the chart
		// again).
		r := Pass("all %d images are at %s (%s)%s", len(all), mirror, from, newNote)
		if env.Upgrading() && len(newRefs) > 0 {
			r.Hint = "mirror list of the images new in the target:\n" + images.MirrorCSV(newRefs, mirror)
		}
		return r, nil
	}
	keys, failed, err := env.Chart.ImageKeys(ctx, ri.Pods, ri.Refs)
	if err != nil {
		return Result{}, err
	}
	plan, err := env.Chart.PlanMirror(ctx, mirror, ri.Pods, ri.Refs, keys)
	if err != nil {
		return Result{}, err
	}
	w := wordUnmirrored(ri.Unmirrored(mirror, plan, failed), env.Inputs)
	listed := all
	if env.Upgrading() {
		listed = newRefs
	}
	hint := mirrorHint(plan.Set, mirror, w, env.Upgrading()) + images.MirrorCSV(listed, mirror)
	msg := fmt.Sprintf("%d of %d images are not at %s (%s)%s: %s", w.refs, len(all), mirror, from, newNote, strings.Join(w.lines, "; "))
	return hookEffect(Fail("%s", msg).WithHint(hint).WithObjects(w.objs...), w.hook), nil
}

// unmirroredWords are the images not at the mirror as image-plan words
// them: a line each, the distinct references and the workloads, whether a
// hook pulls one, and how many no value moves (noValue) or moves only
// through a value that could not be traced (untraced).
type unmirroredWords struct {
	lines             []string
	objs              []ObjectRef
	refs              int
	hook              bool
	noValue, untraced int
}

// wordUnmirrored words the images of um (images.Rendered.Unmirrored).
func wordUnmirrored(um []images.Unmirrored, in Inputs) unmirroredWords {
	var w unmirroredWords
	seenObj := map[ObjectRef]bool{}
	seenRef := map[string]bool{}
	for _, u := range um {
		ref := u.Ref
		where := ref.Container + " " + ref.Field
		if p := u.Pod; p != nil {
			w.hook = w.hook || (p.Hook != "" && ref.Pulled())
			where = podLabel(*p) + " " + ref.Container + " " + ref.Field
			if o := podObject(*p, in); !seenObj[o] {
				seenObj[o] = true
				w.objs = append(w.objs, o)
			}
		}
		how := ""
		switch {
		case u.Unmoved && len(u.Failures) > 0:
			w.untraced++
			how = fmt.Sprintf("no value of chart %s found for this, and %s", u.Chart, couldNotTrace(u.Failures))
		case u.Unmoved:
			w.noValue++
			how = fmt.Sprintf("chart %s has no value for this", u.Chart)
		default:
			var set []string
			for _, k := range u.Moves {
				set = append(set, k.SetPath()+"="+k.Value)
			}
			how = "set " + strings.Join(set, " ")
		}
		w.lines = append(w.lines, fmt.Sprintf("%s (%s: %s)", ref.Ref, where, how))
		if !seenRef[ref.Ref] {
			seenRef[ref.Ref] = true
			w.refs++
		}
	}
	return w
}

// mirrorHint is image-plan's hint up to its mirror list: the values to set
// (--set flags, and the keys inside lists for a values file), what to do
// for the images no value moves, and the line that introduces the list.
func mirrorHint(set []chart.ImageKey, mirror string, w unmirroredWords, upgrading bool) string {
	var hint strings.Builder
	var flags, inLists []chart.ImageKey
	for _, k := range set {
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
	if w.untraced > 0 {
		hint.WriteString("the values that move some images could not be traced (Helm could not render the chart with them marked, or its objects did not decode): set them by hand, or mirror those images under their own names\n")
	}
	if w.noValue > 0 {
		hint.WriteString("the chart has no value for some images: mirror them under their own names and have the nodes' container runtime redirect their registries to " + mirror + "\n")
	}
	what := "mirror list (copy each source_image to its target_image)"
	if upgrading {
		what = "mirror list of the images new in the target"
	}
	return hint.String() + what + ":\n"
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
	out := images.NewIn(refs, cur)
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

// imagesOfRun reads the pods and image references of the run's rendering
// (images.Read), once per snapshot. skip is set, with the reason, when the
// chart was not loaded or does not render.
func imagesOfRun(ctx context.Context, env *Env) (ri *images.Rendered, skip *Result, err error) {
	r, err := env.Rendering(ctx)
	if err != nil {
		var le *chart.LoadError
		switch {
		case errors.As(err, &le):
			s := Skip("no chart rendered: %s", oneLineOf(le.Error()))
			return nil, &s, nil
		default:
			if _, ok := chart.IsRenderError(err); ok {
				s := Skip("the chart does not render with these values (see chart-renders)")
				return nil, &s, nil
			}
		}
		return nil, nil, err
	}
	ri, err = memoOr(env, "images/rendered", func() (*images.Rendered, error) { return images.Read(r) })
	return ri, nil, err
}

func oneLineOf(s string) string { return strings.Join(strings.Fields(s), " ") }

// memoOr computes f once per snapshot and key (cluster.Memo), or just
// calls it when the Env has no snapshot.
func memoOr[T any](env *Env, key string, f func() (T, error)) (T, error) {
	if env.Cluster == nil {
		return f()
	}
	return cluster.Memo(env.Cluster, key, f)
}

// mirrorIntent is where the user means every image to come from, and what
// says so (images.MirrorIntent): --registry-mirror, else
// global.imageRegistry; "" for none.
func mirrorIntent(env *Env) (mirror, from string) {
	return images.MirrorIntent(env.Images.Mirror, env.Inputs.ImageRegistry)
}

// podNamespace is the namespace a rendered pod runs in: its manifest's, else
// the release namespace.
func podNamespace(p chart.Pod, in Inputs) string {
	if p.Namespace != "" {
		return p.Namespace
	}
	return in.Namespace
}

// podObject names a rendered pod's workload.
func podObject(p chart.Pod, in Inputs) ObjectRef {
	return ObjectRef{Kind: p.Kind, Namespace: podNamespace(p, in), Name: p.Name}
}

// podLabel says which workload a reference is in, and where: "Job/validate-values
// (hook) image", "Deployment/argo-workflow-controller args".
func podLabel(p chart.Pod) string {
	s := p.Ref()
	if p.Hook != "" {
		s += " (hook)"
	}
	return s
}

// registryCounts says how many distinct images come from each registry:
// "quay.io ×14, docker.io ×2".
func registryCounts(refs []string) string {
	n := map[string]int{}
	for _, r := range refs {
		n[chart.Registry(r)]++
	}
	regs := make([]string, 0, len(n))
	for r := range n {
		regs = append(regs, r)
	}
	sort.Slice(regs, func(i, j int) bool {
		if n[regs[i]] != n[regs[j]] {
			return n[regs[i]] > n[regs[j]]
		}
		return regs[i] < regs[j]
	})
	parts := make([]string, len(regs))
	for i, r := range regs {
		parts[i] = fmt.Sprintf("%s ×%d", r, n[r])
	}
	return strings.Join(parts, ", ")
}
