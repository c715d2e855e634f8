package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// ociRegistry is an in-process OCI registry (go-containerregistry's
// pkg/registry) on 127.0.0.1 behind TLS, serving the public registries'
// host names, each from its own store: a run reaches it through
// --connect-to HOST:443:127.0.0.1:PORT (ConnectTo) and trusts it through
// --ca-file, so the chart's real image names are resolved with no change.
type ociRegistry struct {
	Port string
	ca   *testCA
	mu   sync.Mutex
	// stores are the registries by host; auth the user:password a host
	// asks for (Basic), "" for anonymous pulls.
	stores map[string]http.Handler
	auth   map[string]string
}

// startRegistry serves hosts (as go-containerregistry names them: Docker
// Hub is index.docker.io) with certificates ca issues, until t ends.
func startRegistry(t *testing.T, ca *testCA, hosts ...string) *ociRegistry {
	t.Helper()
	r := &ociRegistry{ca: ca, stores: map[string]http.Handler{}, auth: map[string]string{}}
	certs := map[string]*tls.Certificate{}
	for _, h := range hosts {
		r.stores[h] = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
		cert, _ := ca.Leaf(t, h, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
		certs[h] = &cert
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if c, ok := certs[hello.ServerName]; ok {
			return c, nil
		}
		return nil, fmt.Errorf("no certificate for %q", hello.ServerName)
	}}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	_, r.Port, _ = net.SplitHostPort(ln.Addr().String())
	return r
}

// ServeHTTP routes a request to its host's store, asking for Basic
// credentials (as a registry does, by a 401 with WWW-Authenticate) where
// the host needs them.
func (r *ociRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	host := req.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	r.mu.Lock()
	store, want := r.stores[host], r.auth[host]
	r.mu.Unlock()
	if store == nil {
		http.NotFound(w, req)
		return
	}
	if want != "" {
		user, pass, ok := req.BasicAuth()
		if !ok || user+":"+pass != want {
			w.Header().Set("WWW-Authenticate", `Basic realm="`+host+`"`)
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
			return
		}
	}
	store.ServeHTTP(w, req)
}

// requireAuth makes host refuse requests without user:password.
func (r *ociRegistry) requireAuth(host, user, password string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.auth[host] = user + ":" + password
}

// ConnectTo are the --connect-to rules (and --ca-file) that send every host
// of the registry to it.
func (r *ociRegistry) ConnectTo() []string {
	hosts := make([]string, 0, len(r.stores))
	for h := range r.stores {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	var out []string
	for _, h := range hosts {
		out = append(out, "--connect-to", h+":443:127.0.0.1:"+r.Port)
	}
	return append(out, "--ca-file", r.ca.PEM)
}

// transport reaches the registry as a run does through --connect-to.
func (r *ociRegistry) transport() http.RoundTripper {
	pool := x509.NewCertPool()
	pool.AddCert(r.ca.Cert)
	return &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, "127.0.0.1:"+r.Port)
		},
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
	}
}

// push stores a stub image (one random layer) under ref: an image of the
// one platform given, or an index of one image per platform.
func (r *ociRegistry) push(t *testing.T, ref string, platforms ...string) {
	t.Helper()
	parsed, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	imageFor := func(platform string) v1.Image {
		p, err := v1.ParsePlatform(platform)
		if err != nil {
			t.Fatal(err)
		}
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			t.Fatal(err)
		}
		return img
	}
	opts := []remote.Option{remote.WithTransport(r.transport())}
	r.mu.Lock()
	if a := r.auth[parsed.Context().RegistryStr()]; a != "" {
		user, pass, _ := strings.Cut(a, ":")
		opts = append(opts, remote.WithAuth(&authn.Basic{Username: user, Password: pass}))
	}
	r.mu.Unlock()
	if len(platforms) == 1 {
		err = remote.Write(parsed, imageFor(platforms[0]), opts...)
	} else {
		var idx v1.ImageIndex = empty.Index
		for _, pl := range platforms {
			p, _ := v1.ParsePlatform(pl)
			idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: imageFor(pl), Descriptor: v1.Descriptor{Platform: p}})
		}
		err = remote.WriteIndex(parsed, idx, opts...)
	}
	if err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
}

// dockerConfigJSON is a .dockerconfigjson granting user:password at host.
func dockerConfigJSON(host, user, password string) string {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	b, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"auth": auth}}})
	return string(b)
}

// forwardProxy is an HTTP forward proxy on 127.0.0.1 that forwards
// nothing: it records the destination of every request sent to it (the
// host:port of a CONNECT, the host of an absolute-URI request) and
// refuses it.
type forwardProxy struct {
	URL  string
	mu   sync.Mutex
	seen map[string]bool
}

func startForwardProxy(t *testing.T) *forwardProxy {
	t.Helper()
	p := &forwardProxy{seen: map[string]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		dest := req.Host
		if req.Method != http.MethodConnect && req.URL.Host != "" {
			dest = req.URL.Host
		}
		if _, _, err := net.SplitHostPort(dest); err != nil {
			dest = net.JoinHostPort(dest, "80")
		}
		p.mu.Lock()
		p.seen[dest] = true
		p.mu.Unlock()
		w.WriteHeader(http.StatusForbidden)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	p.URL = "http://" + ln.Addr().String()
	return p
}

// reset forgets the destinations seen so far.
func (p *forwardProxy) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = map[string]bool{}
}

// destinations returns the destinations seen since the last reset, sorted.
func (p *forwardProxy) destinations() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.seen))
	for d := range p.seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// proxyClientURLs is the environment variable that makes the test binary a
// proxy client (see init): the URLs it requests, one a line.
const proxyClientURLs = "E2E_PROXY_CLIENT_URLS"

// The test binary, started by viaProxy with proxyClientURLs set, is a Go
// HTTP client with a pod's environment and nothing else: it requests each
// URL through net/http's own proxy selection from the environment
// (http.ProxyFromEnvironment: HTTP_PROXY, HTTPS_PROXY, NO_PROXY in either
// case, as the runtime's Go programs read them), dialling only 127.0.0.1
// (the proxy) so that nothing leaves the machine, and exits.
func init() {
	urls := os.Getenv(proxyClientURLs)
	if urls == "" {
		return
	}
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if h, _, _ := net.SplitHostPort(addr); h != "127.0.0.1" {
				return nil, fmt.Errorf("not dialling %s", addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	var wg sync.WaitGroup
	for _, u := range strings.Split(urls, "\n") {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, err := client.Get(u); err == nil {
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	os.Exit(0) //nolint:forbidigo // the test binary run as a proxy client by viaProxy: a child process, its work done
}

// viaProxy requests urls from a process whose environment is env (a pod's:
// its proxy variables) and returns the destinations that reached p.
func viaProxy(t *testing.T, p *forwardProxy, env map[string]string, urls []string) []string {
	t.Helper()
	p.reset()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{proxyClientURLs + "=" + strings.Join(urls, "\n")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("proxy client: %v\n%s", err, out)
	}
	return p.destinations()
}

// renderedPod is a pod template of `helm template` output.
type renderedPod struct {
	Kind, Name string
	Hook       bool
	Spec       corev1.PodSpec
}

// Ref names the pod's workload as the checks do: "Kind/name".
func (p renderedPod) Ref() string { return p.Kind + "/" + p.Name }

// renderedManifest reads the workloads and ConfigMaps of a `helm
// template` output.
func renderedManifest(t *testing.T, manifest string) (pods []renderedPod, configMaps map[string]map[string]string) {
	t.Helper()
	configMaps = map[string]map[string]string{}
	for _, doc := range strings.Split("\n"+manifest, "\n---") {
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Data map[string]string `json:"data"`
			Spec struct {
				Template    *corev1.PodTemplateSpec `json:"template"`
				JobTemplate *struct {
					Spec struct {
						Template corev1.PodTemplateSpec `json:"template"`
					} `json:"spec"`
				} `json:"jobTemplate"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("helm template document: %v\n%s", err, doc)
		}
		hook := o.Metadata.Annotations["helm.sh/hook"] != ""
		switch {
		case o.Kind == "ConfigMap":
			configMaps[o.Metadata.Name] = o.Data
		case o.Spec.Template != nil:
			pods = append(pods, renderedPod{Kind: o.Kind, Name: o.Metadata.Name, Hook: hook, Spec: o.Spec.Template.Spec})
		case o.Spec.JobTemplate != nil:
			pods = append(pods, renderedPod{Kind: o.Kind, Name: o.Metadata.Name, Hook: hook, Spec: o.Spec.JobTemplate.Spec.Template.Spec})
		}
	}
	return pods, configMaps
}

// imageLike is an image reference that names its registry, with a tag or
// digest: what a test counts as an image in `helm template` output.
var imageLike = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*\.[a-z]+(:[0-9]+)?/[a-z0-9._/-]+(:[A-Za-z0-9._-]+|@sha256:[0-9a-f]{64})$`)

// podImages returns the images a rendered pod pulls (its containers' and
// init containers') and names (image references in its containers' args
// and environment, ConfigMap references resolved), by workload ("Kind/name"),
// each set sorted.
func podImages(pods []renderedPod, configMaps map[string]map[string]string) (pulled, named map[string][]string) {
	pulled, named = map[string][]string{}, map[string][]string{}
	add := func(m map[string][]string, k, v string) {
		for _, x := range m[k] {
			if x == v {
				return
			}
		}
		m[k] = append(m[k], v)
		sort.Strings(m[k])
	}
	for _, p := range pods {
		for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
			add(pulled, p.Ref(), c.Image)
			for _, a := range append(append([]string(nil), c.Command...), c.Args...) {
				if _, v, ok := strings.Cut(a, "="); ok {
					a = v
				}
				if imageLike.MatchString(a) {
					add(named, p.Ref(), a)
				}
			}
			for _, e := range c.Env {
				v := e.Value
				if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
					v = configMaps[e.ValueFrom.ConfigMapKeyRef.Name][e.ValueFrom.ConfigMapKeyRef.Key]
				}
				if imageLike.MatchString(v) {
					add(named, p.Ref(), v)
				}
			}
		}
	}
	return pulled, named
}

// releaseRendered returns what Helm rendered for the last revision of
// release rel in ns, as helm template prints it: its manifest and hooks,
// read from the release record (helm get manifest, helm get hooks), with no
// render of its own.
func releaseRendered(t *testing.T, c *tc.Cluster, rel, ns string) string {
	t.Helper()
	var parts []string
	for _, what := range []string{"manifest", "hooks"} {
		out, code := helmCmd(t, c, tc.HelmBinary(t), "get", what, rel, "-n", ns)
		if code != 0 {
			t.Fatalf("helm get %s %s: exit %d\n%s", what, rel, code, out)
		}
		parts = append(parts, out)
	}
	return strings.Join(parts, "\n---\n")
}

// helmTemplate runs real `helm template` of the fixture chart 0.30.0 as
// release cf-gitops-runtime in ns with values and extra flags, and returns
// the manifest (hooks included).
func helmTemplate(t *testing.T, ns, values string, extra ...string) string {
	t.Helper()
	return helmTemplateOf(t, fixtureChart(t), ns, values, extra...)
}

// helmTemplateOf is helmTemplate of the chart at chartDir.
func helmTemplateOf(t *testing.T, chartDir, ns, values string, extra ...string) string {
	t.Helper()
	return helmTemplateWith(t, tc.HelmBinary(t), chartDir, ns, values, extra...)
}

// helmTemplateWith is helmTemplateOf with the Helm client at helm.
func helmTemplateWith(t *testing.T, helm, chartDir, ns, values string, extra ...string) string {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(helm, append([]string{"template", "cf-gitops-runtime", chartDir, "-n", ns, "-f", values}, extra...)...)
	cmd.Env = helmClientEnv(home)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s template %s %s: %v\n%s", filepath.Base(helm), chartDir, strings.Join(extra, " "), err, stderr.String())
	}
	return string(out)
}

// hintFlags returns the --set and --set-string flags a hint prints, one a
// line ("  --set a.b=c"), as helm arguments.
func hintFlags(t *testing.T, hint string) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(strings.NewReader(hint))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "--set" || f[i] == "--set-string" {
				out = append(out, f[i], strings.Trim(f[i+1], `'`))
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no --set flag in hint %q", hint)
	}
	return out
}
