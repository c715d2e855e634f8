package images

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// liveCluster answers ServiceAccount and SecretKey from maps ("ns/name",
// "ns/name/key"); a read of anything else is an error.
type liveCluster struct {
	sas     map[string]cluster.ServiceAccount
	secrets map[string]string
}

func (c liveCluster) ServiceAccount(ns, name string) (cluster.ServiceAccount, error) {
	if sa, ok := c.sas[ns+"/"+name]; ok {
		return sa, nil
	}
	return cluster.ServiceAccount{}, errors.New("unexpected read of ServiceAccount " + ns + "/" + name)
}

func (c liveCluster) SecretKey(ns, name, key string) ([]byte, bool, error) {
	v, ok := c.secrets[ns+"/"+name+"/"+key]
	return []byte(v), ok, nil
}

// TestAuthsOf: app's own secret and its rendered ServiceAccount's, one of
// them rendered, one live and one missing; op's ServiceAccount read live.
func TestAuthsOf(t *testing.T) {
	cfg := func(host string) string { return `{"auths":{"` + host + `":{"auth":"dTpw"}}}` }
	ri := rendered(t, twoPods+`---
apiVersion: v1
kind: ServiceAccount
metadata: {name: app}
imagePullSecrets: [{name: rendered-pull}, {name: gone}, {name: quay-pull}]
---
apiVersion: v1
kind: Secret
metadata: {name: rendered-pull}
type: kubernetes.io/dockerconfigjson
data: {.dockerconfigjson: `+base64.StdEncoding.EncodeToString([]byte(cfg("https://index.docker.io/v1/")))+`}
`)
	c := liveCluster{
		sas:     map[string]cluster.ServiceAccount{"rt/default": {Exists: true, ImagePullSecrets: []string{"quay-pull"}}},
		secrets: map[string]string{"rt/quay-pull/.dockerconfigjson": cfg("quay.io")},
	}
	a, err := AuthsOf(c, ri.Rendering, ri.Pods[0], "rt")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Secrets.Names, []string{"quay-pull", "rendered-pull", "gone"}) || a.Secrets.ServiceAccount != "app" {
		t.Errorf("app's secrets %+v", a.Secrets)
	}
	if !slices.Equal(a.Missing, []string{"gone"}) || a.ByHost["quay.io"] != "quay-pull" || a.ByHost["docker.io"] != "rendered-pull" {
		t.Errorf("app: %+v", a)
	}
	if got := a.Credentials(); got != "pull secrets quay-pull, rendered-pull and the local Docker configuration" {
		t.Errorf("credentials %q", got)
	}
	op, err := AuthsOf(c, ri.Rendering, ri.Pods[1], "rt")
	if err != nil || op.Secrets.ServiceAccount != "default" || op.ByHost["quay.io"] != "quay-pull" {
		t.Errorf("op: %+v, %v", op, err)
	}
	if _, err := AuthsOf(c, ri.Rendering, ri.Pods[1], "other"); err == nil {
		t.Error("a ServiceAccount of another namespace read from the map")
	}
	if got := (&PodAuths{}).Credentials(); got != "the local Docker configuration" {
		t.Errorf("credentials %q", got)
	}
}

func TestParseDockerConfig(t *testing.T) {
	a, err := ParseDockerConfig([]byte(`{"auths":{"https://index.docker.io/v1/":{"auth":"eDp5"},"mirror.example:5000":{"username":"u","password":"p"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Hosts(); len(got) != 2 || got[0] != "docker.io" || got[1] != "mirror.example:5000" {
		t.Errorf("hosts %v", got)
	}
	// The keychain answers with a registry's own credentials, else anonymous.
	reg, _ := name.NewRegistry("mirror.example:5000")
	if auth, err := a.Resolve(reg); err != nil || auth == authn.Anonymous {
		t.Errorf("mirror.example:5000: %v, %v", auth, err)
	}
	reg, _ = name.NewRegistry("quay.io")
	if auth, err := a.Resolve(reg); err != nil || auth != authn.Anonymous {
		t.Errorf("quay.io: %v, %v", auth, err)
	}
	// A bundle's copy: the credentials masked, the registries kept.
	a, err = ParseDockerConfig([]byte(`{"auths":{"ghcr.io":{"auth":"***"}}}`))
	if err != nil || strings.Join(a.Hosts(), " ") != "ghcr.io" {
		t.Errorf("masked pull secret: hosts %v, %v", a.Hosts(), err)
	}
}

func TestRegistryHost(t *testing.T) {
	for in, want := range map[string]string{
		"https://index.docker.io/v1/": "docker.io", "registry-1.docker.io": "docker.io", "Quay.IO": "quay.io",
		"mirror.example:5000/cf": "mirror.example:5000", "http://ghcr.io": "ghcr.io",
	} {
		if got := RegistryHost(in); got != want {
			t.Errorf("RegistryHost(%q) = %q, want %q", in, got, want)
		}
	}
}
