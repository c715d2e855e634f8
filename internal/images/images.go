package images

import (
	"sort"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

// Rendered is a rendering read for its images: its pods (hooks included)
// and every image reference in them (chart.Rendering.Images).
type Rendered struct {
	Rendering *chart.Rendering
	Pods      []chart.Pod
	Refs      []chart.ImageRef
}

// Read reads the pods and image references of r.
func Read(r *chart.Rendering) (*Rendered, error) {
	pods, refs, err := r.Images()
	if err != nil {
		return nil, err
	}
	return &Rendered{Rendering: r, Pods: pods, Refs: refs}, nil
}

// MirrorIntent is where the user means every image to come from, and what
// says so: mirrorFlag (--registry-mirror HOST[/PREFIX]), else
// imageRegistry (global.imageRegistry, a trailing slash dropped); "" for
// none.
func MirrorIntent(mirrorFlag, imageRegistry string) (mirror, from string) {
	if mirrorFlag != "" {
		return mirrorFlag, "--registry-mirror"
	}
	if m := strings.TrimSuffix(imageRegistry, "/"); m != "" {
		return m, "global.imageRegistry"
	}
	return "", ""
}

// DistinctRefs returns the distinct references of refs, sorted.
func DistinctRefs(refs []chart.ImageRef) []string {
	set := map[string]bool{}
	for _, r := range refs {
		set[r.Ref] = true
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// MirrorCSV is the mirror list of refs in the layout of Codefresh's
// private-registry helper (image-mirror.csv: a source_image,target_image
// header, then one row per image,
// https://github.com/codefresh-io/gitops-runtime-helm/blob/6d30d53152ac1648847b0c712d9e8a691d744e1e/scripts/private-registry-utils/private-registry-utils.py
// generate_mirror_csv).
func MirrorCSV(refs []string, mirror string) string {
	var b strings.Builder
	b.WriteString("source_image,target_image\n")
	for _, r := range refs {
		b.WriteString(r + "," + chart.MirrorTarget(r, mirror) + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// NewIn returns the references of target that current (the images of the
// deployed revision, chart.ReleaseImages) does not pull or name, in
// target's order.
func NewIn(target []string, current []chart.ImageRef) []string {
	had := map[string]bool{}
	for _, r := range current {
		had[r.Ref] = true
	}
	var out []string
	for _, r := range target {
		if !had[r] {
			out = append(out, r)
		}
	}
	return out
}

// AllAt reports whether every reference is at mirror (chart.AtMirror).
func (ri *Rendered) AllAt(mirror string) bool {
	for _, ref := range ri.Refs {
		if !chart.AtMirror(ref.Ref, mirror) {
			return false
		}
	}
	return true
}

// Unmirrored is one reference not at the mirror, and how a mirror plan
// moves it.
type Unmirrored struct {
	Ref chart.ImageRef
	// Pod is the reference's pod; nil for a chart's annotation.
	Pod *chart.Pod
	// Chart is the chart whose template renders the pod (chart.Pod.Chart),
	// or whose annotation names the image.
	Chart string
	// Unmoved is set when no value of the chart moves it
	// (chart.MirrorPlan.Unmoved); Failures are then the traces that failed
	// for it (chart.FailuresIn: a value may move it that could not be
	// traced). Moves are the values that move it otherwise.
	Unmoved  bool
	Failures []chart.TraceFailure
	Moves    []chart.ImageKey
}

// Unmirrored returns the references not at mirror, in order, each with how
// plan (chart.Pending.PlanMirror, whose provenance traces failed) moves
// it.
func (ri *Rendered) Unmirrored(mirror string, plan *chart.MirrorPlan, failed []chart.TraceFailure) []Unmirrored {
	unmoved := map[int]bool{}
	for _, i := range plan.Unmoved {
		unmoved[i] = true
	}
	var out []Unmirrored
	for i, ref := range ri.Refs {
		if chart.AtMirror(ref.Ref, mirror) {
			continue
		}
		u := Unmirrored{Ref: ref, Chart: ref.Container, Unmoved: unmoved[i]}
		if ref.Pod >= 0 {
			u.Pod = &ri.Pods[ref.Pod]
			u.Chart = u.Pod.Chart(ri.Rendering.ChartName)
		}
		if u.Unmoved {
			u.Failures = chart.FailuresIn(ref.Ref, failed)
		} else {
			u.Moves = plan.Moves[i]
		}
		out = append(out, u)
	}
	return out
}

// UnservedRegistries returns the registries (RegistryHost, sorted) pod
// (an index of ri.Pods) pulls from that authenticated says need
// credentials and none of its pull secrets (a) names.
func (ri *Rendered) UnservedRegistries(pod int, a *PodAuths, authenticated func(host string) bool) []string {
	var regs []string
	seen := map[string]bool{}
	for _, r := range ri.Refs {
		h := RegistryHost(chart.Registry(r.Ref))
		if r.Pod != pod || !r.Pulled() || seen[h] {
			continue
		}
		seen[h] = true
		if authenticated(h) {
			if _, ok := a.ByHost[h]; !ok {
				regs = append(regs, h)
			}
		}
	}
	sort.Strings(regs)
	return regs
}
