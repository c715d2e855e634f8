package images

import (
	"bytes"
	"encoding/json"
	"net/url"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Cluster is what the pull secrets of a pod are read from when the release
// does not render them (cluster.Snapshot answers it).
type Cluster interface {
	// ServiceAccount gets one ServiceAccount (Exists false when there is
	// none).
	ServiceAccount(namespace, name string) (cluster.ServiceAccount, error)
	// SecretKey gets one key of one Secret (found false when either is
	// missing).
	SecretKey(namespace, name, key string) (value []byte, found bool, err error)
}

// PodSecrets are the pull secrets a rendered pod gets: its own
// (spec.imagePullSecrets) and its ServiceAccount's (rendered by the chart,
// else read live), as the kubelet merges them
// (https://kubernetes.io/docs/tasks/configure-pod-container/configure-service-account/#add-imagepullsecrets-to-a-service-account).
type PodSecrets struct {
	// Names are the secrets' names, in order, without repeats.
	Names []string
	// ServiceAccount is the pod's ServiceAccount (chart.Pod.ServiceAccount).
	ServiceAccount string
}

// PullSecretsOf returns the pull secrets of pod p of rendering r, running
// in namespace ns.
func PullSecretsOf(c Cluster, r *chart.Rendering, p chart.Pod, ns string) (PodSecrets, error) {
	out := PodSecrets{ServiceAccount: p.ServiceAccount()}
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
	for _, o := range append(append([]chart.Object(nil), r.Objects...), r.Hooks...) {
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
	sa, err := c.ServiceAccount(ns, out.ServiceAccount)
	if err != nil {
		return out, err
	}
	for _, n := range sa.ImagePullSecrets {
		add(n)
	}
	return out, nil
}

// DockerConfigOf returns the .dockerconfigjson of pull secret name in
// namespace ns: a Secret rendering r holds, else the live one (a GET of
// that one key; the value is parsed and never printed). found is false
// when neither exists or it holds no such key.
func DockerConfigOf(c Cluster, r *chart.Rendering, ns, name string) (data []byte, found bool, err error) {
	for _, o := range r.Objects {
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
	return c.SecretKey(ns, name, corev1.DockerConfigJsonKey)
}

// DockerAuths is a parsed .dockerconfigjson: each registry host (as the
// kubelet matches it: scheme and path dropped, Docker Hub's names folded
// to docker.io) with its credentials.
type DockerAuths map[string]authn.AuthConfig

// ParseDockerConfig reads a .dockerconfigjson ({"auths": {HOST: {auth |
// username, password | identitytoken}}}, https://kubernetes.io/docs/concepts/containers/images/#config-json).
// The fields are read as they are (authn.AuthConfig's own decoding
// rejects an auth that is not base64, as a bundle's masked copy is): the
// registries a pull secret names count whatever its credentials hold.
func ParseDockerConfig(data []byte) (DockerAuths, error) {
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
	out := DockerAuths{}
	for k, v := range cfg.Auths {
		out[RegistryHost(k)] = authn.AuthConfig{Username: v.Username, Password: v.Password, Auth: v.Auth, IdentityToken: v.IdentityToken, RegistryToken: v.RegistryToken}
	}
	return out, nil
}

// RegistryHost normalises a registry as a pull secret or a reference names
// it: "https://index.docker.io/v1/" and "index.docker.io" are "docker.io".
func RegistryHost(s string) string {
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

// Hosts returns the registries a pull secret serves, sorted.
func (a DockerAuths) Hosts() []string {
	out := make([]string, 0, len(a))
	for h := range a {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// Resolve is authn.Keychain: the secret's credentials for the resource's
// registry, else anonymous.
func (a DockerAuths) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if c, ok := a[RegistryHost(r.RegistryStr())]; ok {
		return authn.FromConfig(c), nil
	}
	return authn.Anonymous, nil
}

// PodAuths is what a pod's pull secrets serve: the registries each names,
// and which of its secrets are missing.
type PodAuths struct {
	Secrets PodSecrets
	// ByHost maps a registry to the first of the pod's secrets naming it.
	ByHost map[string]string
	// Auths are the secrets read, in order; Used their names.
	Auths []DockerAuths
	Used  []string
	// Missing are the secrets that exist neither in the rendering nor in
	// the cluster.
	Missing []string
}

// AuthsOf reads the pull secrets of pod p of rendering r, running in
// namespace ns. A secret whose .dockerconfigjson does not parse serves
// nothing.
func AuthsOf(c Cluster, r *chart.Rendering, p chart.Pod, ns string) (*PodAuths, error) {
	sec, err := PullSecretsOf(c, r, p, ns)
	if err != nil {
		return nil, err
	}
	out := &PodAuths{Secrets: sec, ByHost: map[string]string{}}
	for _, n := range sec.Names {
		data, found, err := DockerConfigOf(c, r, ns, n)
		if err != nil {
			return nil, err
		}
		if !found {
			out.Missing = append(out.Missing, n)
			continue
		}
		a, err := ParseDockerConfig(data)
		if err != nil {
			continue
		}
		out.Auths, out.Used = append(out.Auths, a), append(out.Used, n)
		for _, h := range a.Hosts() {
			if _, ok := out.ByHost[h]; !ok {
				out.ByHost[h] = n
			}
		}
	}
	return out, nil
}

// Credentials names what Keychain holds: "pull secrets a, b and the local
// Docker configuration" (a recorded registry answer is keyed by it).
func (a *PodAuths) Credentials() string {
	if len(a.Auths) == 0 {
		return "the local Docker configuration"
	}
	return "pull secrets " + strings.Join(a.Used, ", ") + " and the local Docker configuration"
}

// Keychain is the pod's pull secrets, in order, then the local Docker
// configuration (~/.docker/config.json, its credential helpers): what an
// image is resolved with at its registry.
func (a *PodAuths) Keychain() authn.Keychain {
	ks := make([]authn.Keychain, 0, len(a.Auths)+1)
	for _, x := range a.Auths {
		ks = append(ks, x)
	}
	return authn.NewMultiKeychain(append(ks, authn.DefaultKeychain)...)
}
