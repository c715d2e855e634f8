package images

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// Resolved is one image's manifest as the registry answered (a refusal is
// an answer), or Err: no answer at all.
type Resolved struct {
	probe.RegistryAnswer
	Err error
}

// OK reports whether the registry served the manifest.
func (r Resolved) OK() bool { return r.Err == nil && r.Status == 0 }

// NeedsAuth reports whether the registry refused for want of credentials
// (HTTP 401 or 403).
func (r Resolved) NeedsAuth() bool {
	return r.Err == nil && (r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden)
}

// registryTransport dials as the prober does (--connect-to, --ca-file, the
// probe timeout).
func registryTransport(p *probe.Prober) http.RoundTripper {
	return &http.Transport{
		DialContext:         p.DialContext,
		TLSClientConfig:     &tls.Config{RootCAs: p.Roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: p.Timeout,
	}
}

// resolveImage asks ref's registry for its manifest with kc, whose
// credentials creds names ("anonymous", "pull secrets a, b and the local
// Docker configuration"): through p.Registry, so that a bundle records the
// answer and its replay gives it back.
func resolveImage(ctx context.Context, p *probe.Prober, ref, creds string, kc authn.Keychain) Resolved {
	a, err := p.Registry(ref+" as "+creds, func() (*probe.RegistryAnswer, error) {
		return askRegistry(ctx, p, ref, kc)
	})
	if err != nil || a == nil {
		return Resolved{Err: cmp.Or(err, errors.New("no answer"))}
	}
	return Resolved{RegistryAnswer: *a}
}

// askRegistry gets ref's manifest with go-containerregistry (bounded by
// three probe timeouts): its digest and platforms (an index's, else the
// image config's), or the status and code the registry refused with.
func askRegistry(ctx context.Context, p *probe.Prober, ref string, kc authn.Keychain) (*probe.RegistryAnswer, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*p.Timeout)
	defer cancel()
	desc, err := remote.Get(r, remote.WithContext(ctx), remote.WithAuthFromKeychain(kc), remote.WithTransport(registryTransport(p)))
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
	// An image config that names no OS, architecture or variant has no
	// platform (ConfigFile.Platform is nil): it is left out, as an index's
	// "unknown" platforms are above.
	if pf := cfg.Platform(); pf != nil {
		out.Platforms = []string{pf.String()}
	}
	return out, nil
}

// Resolver resolves each (image, credentials) once.
type Resolver struct {
	mu   sync.Mutex
	memo map[string]*resolveOnce
}

type resolveOnce struct {
	once sync.Once
	r    Resolved
}

// NewResolver returns a Resolver that has resolved nothing yet.
func NewResolver() *Resolver {
	return &Resolver{memo: map[string]*resolveOnce{}}
}

// Get resolves ref with kc, whose credentials creds names, through prober
// p (its --connect-to, --ca-file and timeout; its Tape records or replays
// the answer under "REF as CREDS"), once per (ref, creds).
func (rs *Resolver) Get(ctx context.Context, p *probe.Prober, ref, creds string, kc authn.Keychain) Resolved {
	rs.mu.Lock()
	e, ok := rs.memo[ref+" as "+creds]
	if !ok {
		e = &resolveOnce{}
		rs.memo[ref+" as "+creds] = e
	}
	rs.mu.Unlock()
	e.once.Do(func() { e.r = resolveImage(ctx, p, ref, creds, kc) })
	return e.r
}

// RefusingAnonymous asks each registry of refs, anonymously, for one of
// its images (the first of refs it holds): the registries
// (chart.Registry) that refuse need credentials.
func (rs *Resolver) RefusingAnonymous(ctx context.Context, p *probe.Prober, refs []string) map[string]bool {
	byReg := map[string]string{}
	for _, r := range refs {
		if _, ok := byReg[chart.Registry(r)]; !ok {
			byReg[chart.Registry(r)] = r
		}
	}
	out := map[string]bool{}
	for reg, ref := range byReg {
		if rs.Get(ctx, p, ref, "anonymous", authn.NewMultiKeychain()).NeedsAuth() {
			out[reg] = true
		}
	}
	return out
}

// Unserved returns the node platforms ("linux/amd64") no image platform
// serves (a variant, "linux/arm/v7", serves its architecture). With no
// platform known (an image config that names none, an index of "unknown"
// platforms only) nothing is judged: none is returned.
func Unserved(platforms, nodePlatforms []string) []string {
	if len(platforms) == 0 {
		return nil
	}
	var out []string
	for _, na := range nodePlatforms {
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
