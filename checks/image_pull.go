package checks

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
)

// podSecrets are the pull secrets a rendered pod gets: its own
// (spec.imagePullSecrets) and its ServiceAccount's (rendered by the chart,
// else read live), as the kubelet merges them
// (https://kubernetes.io/docs/tasks/configure-pod-container/configure-service-account/#add-imagepullsecrets-to-a-service-account).
type podSecrets struct {
	// Names are the secrets' names, in order, without repeats.
	Names []string
	// ServiceAccount is the pod's ServiceAccount (chart.Pod.ServiceAccount).
	ServiceAccount string
}

// pullSecretsOf returns the pull secrets of pod p.
func pullSecretsOf(env *Env, ri *renderedImages, p chart.Pod) (podSecrets, error) {
	out := podSecrets{ServiceAccount: p.ServiceAccount()}
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			out.Names = append(out.Names, n)
		}
	}
	for _, r := range p.Spec.ImagePullSecrets {
		add(r.Name)
	}
	ns := podNamespace(p, env.Inputs)
	for _, o := range append(append([]chart.Object(nil), ri.r.Objects...), ri.r.Hooks...) {
		if o.Kind != "ServiceAccount" || o.Name != out.ServiceAccount || (o.Namespace != "" && o.Namespace != ns) {
			continue
		}
		var sa corev1.ServiceAccount
		if err := yaml.Unmarshal([]byte(o.Doc), &sa); err != nil {
			return out, err
		}
		for _, r := range sa.ImagePullSecrets {
			add(r.Name)
		}
		return out, nil
	}
	sa, err := env.Cluster.ServiceAccount(ns, out.ServiceAccount)
	if err != nil {
		return out, err
	}
	for _, n := range sa.ImagePullSecrets {
		add(n)
	}
	return out, nil
}

// dockerConfigOf returns the .dockerconfigjson of pull secret name in
// namespace ns: a Secret the chart renders, else the live one (a GET of
// that one key; the value is parsed and never printed). found is false
// when neither exists or it holds no such key.
func dockerConfigOf(env *Env, ri *renderedImages, ns, name string) (data []byte, found bool, err error) {
	for _, o := range ri.r.Objects {
		if o.Kind != "Secret" || o.Name != name || (o.Namespace != "" && o.Namespace != ns) {
			continue
		}
		var s corev1.Secret
		if err := yaml.Unmarshal([]byte(o.Doc), &s); err != nil {
			return nil, false, err
		}
		if v, ok := s.Data[corev1.DockerConfigJsonKey]; ok {
			return v, true, nil
		}
		v, ok := s.StringData[corev1.DockerConfigJsonKey]
		return []byte(v), ok, nil
	}
	return env.Cluster.SecretKey(ns, name, corev1.DockerConfigJsonKey)
}

// dockerAuths is a parsed .dockerconfigjson: each registry host (as the
// kubelet matches it: scheme and path dropped, Docker Hub's names folded
// to docker.io) with its credentials.
type dockerAuths map[string]authn.AuthConfig

// parseDockerConfig reads a .dockerconfigjson ({"auths": {HOST: {auth |
// username, password | identitytoken}}}, https://kubernetes.io/docs/concepts/containers/images/#config-json).
// The fields are read as they are (authn.AuthConfig's own decoding
// rejects an auth that is not base64, as a bundle's masked copy is): the
// registries a pull secret names count whatever its credentials hold.
func parseDockerConfig(data []byte) (dockerAuths, error) {
	var cfg struct {
		Auths map[string]struct {
			Username      string `json:"username"`
			Password      string `json:"password"`
			Auth          string `json:"auth"`
			IdentityToken string `json:"identitytoken"`
			RegistryToken string `json:"registrytoken"`
		} `json:"auths"`
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&cfg); err != nil {
		return nil, err
	}
	out := dockerAuths{}
	for k, v := range cfg.Auths {
		out[registryHost(k)] = authn.AuthConfig{Username: v.Username, Password: v.Password, Auth: v.Auth, IdentityToken: v.IdentityToken, RegistryToken: v.RegistryToken}
	}
	return out, nil
}

// registryHost normalises a registry as a pull secret or a reference names
// it: "https://index.docker.io/v1/" and "index.docker.io" are "docker.io".
func registryHost(s string) string {
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		s = u.Host
	}
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	s = strings.ToLower(s)
	switch s {
	case "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com":
		return "docker.io"
	}
	return s
}

// hosts returns the registries a pull secret serves, sorted.
func (a dockerAuths) hosts() []string {
	out := make([]string, 0, len(a))
	for h := range a {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// Resolve is authn.Keychain: the secret's credentials for the resource's
// registry, else anonymous.
func (a dockerAuths) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if c, ok := a[registryHost(r.RegistryStr())]; ok {
		return authn.FromConfig(c), nil
	}
	return authn.Anonymous, nil
}

// podAuths is what a pod's pull secrets serve: the registries each names,
// and which of its secrets are missing.
type podAuths struct {
	secrets podSecrets
	// byHost maps a registry to the first of the pod's secrets naming it.
	byHost  map[string]string
	auths   []dockerAuths
	used    []string // the secrets auths were read from
	missing []string
}

// authsOf reads a rendered pod's pull secrets.
func authsOf(env *Env, ri *renderedImages, p chart.Pod) (*podAuths, error) {
	sec, err := pullSecretsOf(env, ri, p)
	if err != nil {
		return nil, err
	}
	out := &podAuths{secrets: sec, byHost: map[string]string{}}
	for _, n := range sec.Names {
		data, found, err := dockerConfigOf(env, ri, podNamespace(p, env.Inputs), n)
		if err != nil {
			return nil, err
		}
		if !found {
			out.missing = append(out.missing, n)
			continue
		}
		a, err := parseDockerConfig(data)
		if err != nil {
			continue
		}
		out.auths, out.used = append(out.auths, a), append(out.used, n)
		for _, h := range a.hosts() {
			if _, ok := out.byHost[h]; !ok {
				out.byHost[h] = n
			}
		}
	}
	return out, nil
}

// credentials names what keychain holds: "pull secrets a, b and the local
// Docker configuration".
func (a *podAuths) credentials() string {
	if len(a.auths) == 0 {
		return "the local Docker configuration"
	}
	return "pull secrets " + strings.Join(a.used, ", ") + " and the local Docker configuration"
}

// keychain is the pod's pull secrets, in order, then the local Docker
// configuration (~/.docker/config.json, its credential helpers): what
// --registry-check resolves an image with.
func (a *podAuths) keychain() authn.Keychain {
	ks := make([]authn.Keychain, 0, len(a.auths)+1)
	for _, x := range a.auths {
		ks = append(ks, x)
	}
	return authn.NewMultiKeychain(append(ks, authn.DefaultKeychain)...)
}

// pullContext is the pods of the run's rendering (imagesOfRun: skip is set
// when there is none to read) with their pull secrets read, once per
// snapshot.
func pullContext(ctx context.Context, env *Env) (ri *renderedImages, auths []*podAuths, skip *Result, err error) {
	if ri, skip, err = imagesOfRun(ctx, env); skip != nil || err != nil {
		return nil, nil, skip, err
	}
	read := func() ([]*podAuths, error) {
		out := make([]*podAuths, len(ri.pods))
		for i, p := range ri.pods {
			a, err := authsOf(env, ri, p)
			if err != nil {
				return nil, err
			}
			out[i] = a
		}
		return out, nil
	}
	auths, err = memoOr(env, "images/pullsecrets", read)
	return ri, auths, nil, err
}
