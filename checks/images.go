package checks

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// ImageOptions are the image checks' inputs.
type ImageOptions struct {
	// Mirror is --registry-mirror: the HOST[/PREFIX] every image should be
	// pulled from ("" = none given; global.imageRegistry, when set, is the
	// intent then).
	Mirror string `json:"mirror,omitempty"`
	// RegistryCheck is --registry-check: image-registry resolves each
	// image at its registry (the only image check that dials).
	RegistryCheck bool `json:"registryCheck,omitempty"`
}

// renderedImages is the run's rendering read for the image and egress
// checks: its pods (hooks included) and every image reference in them.
type renderedImages struct {
	r    *chart.Rendering
	pods []chart.Pod
	refs []chart.ImageRef
}

// imagesOfRun reads the pods and image references of the run's rendering,
// once per snapshot. skip is set, with the reason, when the chart was not
// loaded or does not render.
func imagesOfRun(ctx context.Context, env *Env) (ri *renderedImages, skip *Result, err error) {
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
	read := func() (*renderedImages, error) {
		pods, refs, err := r.Images()
		if err != nil {
			return nil, err
		}
		return &renderedImages{r: r, pods: pods, refs: refs}, nil
	}
	ri, err = memoOr(env, "images/rendered", read)
	return ri, nil, err
}

func oneLineOf(s string) string { return strings.Join(strings.Fields(s), " ") }

// mirrorIntent is where the user means every image to come from, and what
// says so: --registry-mirror, else global.imageRegistry; "" for none.
func mirrorIntent(env *Env) (mirror, from string) {
	if env.Images.Mirror != "" {
		return env.Images.Mirror, "--registry-mirror"
	}
	if m := strings.TrimSuffix(env.Inputs.ImageRegistry, "/"); m != "" {
		return m, "global.imageRegistry"
	}
	return "", ""
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

// distinctRefs returns the distinct references of refs, sorted.
func distinctRefs(refs []chart.ImageRef) []string {
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

// mirrorCSV is the mirror list of refs in the layout of Codefresh's
// private-registry helper (image-mirror.csv: a source_image,target_image
// header, then one row per image,
// https://github.com/codefresh-io/gitops-runtime-helm/blob/6d30d53152ac1648847b0c712d9e8a691d744e1e/scripts/private-registry-utils/private-registry-utils.py
// generate_mirror_csv).
func mirrorCSV(refs []string, mirror string) string {
	var b strings.Builder
	b.WriteString("source_image,target_image\n")
	for _, r := range refs {
		b.WriteString(r + "," + chart.MirrorTarget(r, mirror) + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// memoOr computes f once per snapshot and key (cluster.Memo), or just
// calls it when the Env has no snapshot.
func memoOr[T any](env *Env, key string, f func() (T, error)) (T, error) {
	if env.Cluster == nil {
		return f()
	}
	return cluster.Memo(env.Cluster, key, f)
}
