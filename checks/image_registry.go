package checks

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/images"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/schedule"
)

// ImageRegistry (opt-in, --registry-check: the one image check that dials)
// resolves the manifest of every image the rendered pods pull or name with
// go-containerregistry, through --connect-to and --ca-file as the probes,
// authenticated with the pod's pull secrets (read in the runtime namespace)
// and then the local Docker configuration, records its digest and
// platforms, and compares the platforms with the architectures
// (kubernetes.io/arch) of the Ready nodes the pod can land on (its
// nodeSelector, required node affinity and tolerations). Fails naming the
// image, the registry's answer and the platforms; impact install-fails when
// the image is a hook's. Each answer goes through the prober's Tape
// (probe.Prober.Registry): a --bundle records it and a replay gives it back
// without dialling, so the replay reports what the run did.
func ImageRegistry() Check {
	return Check{
		Meta: Meta{
			ID:         "image-registry",
			Impact:     ImpactRuntimeBreaks,
			Category:   CategoryImages,
			Modes:      ModePre | ModeUpgrade,
			Title:      "Every image resolves at its registry for the nodes its pod can land on",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
			ReadsChart: true,
		},
		Run: runImageRegistry,
	}
}

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

// registryResolver is the run's resolver (shared by image-registry and
// image-pull-secrets), one per snapshot.
func registryResolver(env *Env) (*images.Resolver, error) {
	return memoOr(env, "images/resolver", func() (*images.Resolver, error) {
		return images.NewResolver(), nil
	})
}

// registryAnswer says what the registry said, in a few words.
func registryAnswer(r images.Resolved) string {
	switch {
	case r.Err != nil:
		return oneLineOf(r.Err.Error())
	case r.NeedsAuth():
		return fmt.Sprintf("unauthorized (HTTP %d)", r.Status)
	case r.Status == http.StatusNotFound:
		return "not found (HTTP 404)"
	case r.Code == string(transport.ManifestUnknownErrorCode), r.Code == string(transport.NameUnknownErrorCode):
		return "not found (" + r.Code + ")"
	}
	return fmt.Sprintf("HTTP %d", r.Status)
}

func runImageRegistry(ctx context.Context, env *Env) (Result, error) {
	if !env.Images.RegistryCheck {
		return Skip("not run: it dials the image registries; give --registry-check"), nil
	}
	ri, auths, skip, err := pullContext(ctx, env)
	if skip != nil || err != nil {
		return deref(skip), err
	}
	nodes, err := env.Cluster.Nodes()
	if err != nil {
		return Result{}, err
	}
	rs, err := registryResolver(env)
	if err != nil {
		return Result{}, err
	}
	var problems []string
	var objs []ObjectRef
	seen := map[string]bool{}
	checked := map[string]bool{}
	hook := false
	for _, ref := range ri.Refs {
		if ref.Pod < 0 {
			continue
		}
		p := ri.Pods[ref.Pod]
		a := auths[ref.Pod]
		res := rs.Get(ctx, env.Probe, ref.Ref, a.Credentials(), a.Keychain())
		checked[ref.Ref] = true
		var problem string
		if !res.OK() {
			via := "the local Docker config"
			if s, ok := a.ByHost[images.RegistryHost(chart.Registry(ref.Ref))]; ok {
				via = "pull secret " + s
			}
			problem = fmt.Sprintf("%s: %s (with %s)", ref.Ref, registryAnswer(res), via)
		} else if ref.Pulled() {
			archs := schedule.NodePlatforms(p.Spec, nodes)
			if missing := images.Unserved(res.Platforms, archs); len(missing) > 0 {
				problem = fmt.Sprintf("%s: platforms %s, none for the %s nodes the pod can land on", ref.Ref, strings.Join(res.Platforms, ", "), strings.Join(missing, ", "))
			}
		}
		if problem != "" && !seen[problem] {
			seen[problem] = true
			hook = hook || p.Hook != ""
			problems = append(problems, problem+" ("+podLabel(p)+")")
			objs = append(objs, podObject(p, env.Inputs))
		}
	}
	if len(problems) > 0 {
		return hookEffect(Fail("%d of %d images cannot be pulled as planned: %s", len(problems), len(checked), strings.Join(problems, "; ")).
			WithHint("mirror or push the missing images, give the pods a pull secret for the registries that refuse (see image-pull-secrets), and pick images with a manifest for every node architecture (kubernetes.io/arch)").
			WithObjects(objs...), hook), nil
	}
	return Pass("%d images resolve at their registries, each with a platform for the nodes its pod can land on", len(checked)), nil
}
