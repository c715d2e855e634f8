package checks

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
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

// resolved is one image's manifest as the registry answered (a refusal is
// an answer), or Err: no answer at all.
type resolved struct {
	probe.RegistryAnswer
	Err error
}

// registryTransport dials as the probes do (--connect-to, --ca-file, the
// probe timeout).
func registryTransport(env *Env) http.RoundTripper {
	return &http.Transport{
		DialContext:         env.Probe.DialContext,
		TLSClientConfig:     &tls.Config{RootCAs: env.Probe.Roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: env.Probe.Timeout,
	}
}

// resolveImage asks ref's registry for its manifest with kc, whose
// credentials creds names ("anonymous", "pull secrets a, b and the local
// Docker configuration"): through env.Probe.Registry, so that a bundle
// records the answer and its replay gives it back.
func resolveImage(ctx context.Context, env *Env, ref, creds string, kc authn.Keychain) resolved {
	a, err := env.Probe.Registry(ref+" as "+creds, func() (*probe.RegistryAnswer, error) {
		return askRegistry(ctx, env, ref, kc)
	})
	if err != nil || a == nil {
		return resolved{Err: cmp.Or(err, errors.New("no answer"))}
	}
	return resolved{RegistryAnswer: *a}
}

// askRegistry gets ref's manifest with go-containerregistry: its digest and
// platforms (an index's, else the image config's), or the status and code
// the registry refused with.
func askRegistry(ctx context.Context, env *Env, ref string, kc authn.Keychain) (*probe.RegistryAnswer, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*env.Probe.Timeout)
	defer cancel()
	desc, err := remote.Get(r, remote.WithContext(ctx), remote.WithAuthFromKeychain(kc), remote.WithTransport(registryTransport(env)))
	var te *transport.Error
	if errors.As(err, &te) {
		a := &probe.RegistryAnswer{Status: te.StatusCode}
		if len(te.Errors) > 0 {
			a.Code = string(te.Errors[0].Code)
		}
		return a, nil
	}
	if err != nil {
		return nil, err
	}
	out := &probe.RegistryAnswer{Digest: desc.Digest.String()}
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, err
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return nil, err
		}
		for _, m := range im.Manifests {
			if m.Platform != nil && m.Platform.OS != "unknown" {
				out.Platforms = append(out.Platforms, m.Platform.String())
			}
		}
		return out, nil
	}
	img, err := desc.Image()
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	out.Platforms = []string{cfg.Platform().String()}
	return out, nil
}

// ok reports whether the registry served the manifest.
func (r resolved) ok() bool { return r.Err == nil && r.Status == 0 }

// answer says what the registry said, in a few words.
func (r resolved) answer() string {
	switch {
	case r.Err != nil:
		return oneLineOf(r.Err.Error())
	case r.needsAuth():
		return fmt.Sprintf("unauthorized (HTTP %d)", r.Status)
	case r.Status == http.StatusNotFound:
		return "not found (HTTP 404)"
	case r.Code == string(transport.ManifestUnknownErrorCode), r.Code == string(transport.NameUnknownErrorCode):
		return "not found (" + r.Code + ")"
	}
	return fmt.Sprintf("HTTP %d", r.Status)
}

// needsAuth reports whether the registry refused for want of credentials.
func (r resolved) needsAuth() bool {
	return r.Err == nil && (r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden)
}

// resolver resolves each (image, credentials) once per run.
type resolver struct {
	mu   sync.Mutex
	memo map[string]*resolveOnce
}

type resolveOnce struct {
	once sync.Once
	r    resolved
}

// get resolves ref with kc, whose credentials creds names (resolveImage).
func (rs *resolver) get(ctx context.Context, env *Env, ref, creds string, kc authn.Keychain) resolved {
	rs.mu.Lock()
	e, ok := rs.memo[ref+" as "+creds]
	if !ok {
		e = &resolveOnce{}
		rs.memo[ref+" as "+creds] = e
	}
	rs.mu.Unlock()
	e.once.Do(func() { e.r = resolveImage(ctx, env, ref, creds, kc) })
	return e.r
}

// registryResolver is the run's resolver (shared by image-registry and
// image-pull-secrets).
func registryResolver(env *Env) (*resolver, error) {
	return memoOr(env, "images/resolver", func() (*resolver, error) {
		return &resolver{memo: map[string]*resolveOnce{}}, nil
	})
}

// anonymousAnswers asks each registry of refs, anonymously, for one of its
// images (--registry-check): the registries that refuse need credentials.
func anonymousAnswers(ctx context.Context, env *Env, refs []string) (map[string]bool, error) {
	rs, err := registryResolver(env)
	if err != nil {
		return nil, err
	}
	byReg := map[string]string{}
	for _, r := range refs {
		if _, ok := byReg[chart.Registry(r)]; !ok {
			byReg[chart.Registry(r)] = r
		}
	}
	out := map[string]bool{}
	for reg, ref := range byReg {
		if rs.get(ctx, env, ref, "anonymous", authn.NewMultiKeychain()).needsAuth() {
			out[reg] = true
		}
	}
	return out, nil
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
	for _, ref := range ri.refs {
		if ref.Pod < 0 {
			continue
		}
		p := ri.pods[ref.Pod]
		a := auths[ref.Pod]
		res := rs.get(ctx, env, ref.Ref, a.credentials(), a.keychain())
		checked[ref.Ref] = true
		var problem string
		if !res.ok() {
			via := "the local Docker config"
			if s, ok := a.byHost[registryHost(chart.Registry(ref.Ref))]; ok {
				via = "pull secret " + s
			}
			problem = fmt.Sprintf("%s: %s (with %s)", ref.Ref, res.answer(), via)
		} else if ref.Pulled() {
			archs := nodeArchs(p.Spec, nodes)
			if missing := unservedArchs(res.Platforms, archs); len(missing) > 0 {
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

// nodeArchs returns the architectures (kubernetes.io/arch) of the Ready
// nodes a pod with spec can land on.
func nodeArchs(spec corev1.PodSpec, nodes []cluster.Node) []string {
	set := map[string]bool{}
	for _, n := range nodes {
		if !n.Ready || n.Unschedulable {
			continue
		}
		obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}, Spec: corev1.NodeSpec{Taints: n.TaintList}}
		if !nodeAdmits(&spec, obj) {
			continue
		}
		arch := n.Labels[corev1.LabelArchStable]
		if arch == "" {
			continue
		}
		os := n.Labels[corev1.LabelOSStable]
		if os == "" {
			os = "linux"
		}
		set[os+"/"+arch] = true
	}
	out := make([]string, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// unservedArchs returns the node platforms ("linux/amd64") no image
// platform serves (a variant, "linux/arm/v7", serves its architecture).
func unservedArchs(platforms, nodeArchs []string) []string {
	var out []string
	for _, na := range nodeArchs {
		ok := false
		for _, p := range platforms {
			if p == na || strings.HasPrefix(p, na+"/") {
				ok = true
			}
		}
		if !ok {
			out = append(out, na)
		}
	}
	return out
}
