package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rspb "helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// Credentials planted in a cluster's answers: none may be written.
const (
	plantedToken    = "planted-token-4b1d"
	plantedJWT      = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlcGxhbnRlZA"
	plantedPassword = "hunter2-planted"
	plantedKeyBody  = "MIIEplantedPrivateKeyBody"
	plantedKey      = "-----BEGIN RSA PRIVATE KEY-----\n" + plantedKeyBody + "\n-----END RSA PRIVATE KEY-----\n"
)

var plantedAll = []string{plantedToken, plantedJWT, plantedPassword, plantedKeyBody,
	base64.StdEncoding.EncodeToString([]byte(plantedToken)), base64.StdEncoding.EncodeToString([]byte(plantedPassword))}

// helmRecord encodes r as Helm's Secrets driver does (base64 of gzip'd JSON).
func helmRecord(t *testing.T, r *rspb.Release) []byte {
	t.Helper()
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(js)
	_ = zw.Close()
	return []byte(base64.StdEncoding.EncodeToString(buf.Bytes()))
}

func plantedRelease(t *testing.T) *corev1.Secret {
	t.Helper()
	r := &rspb.Release{
		Name: "rt", Namespace: "ns", Version: 1, Info: &rspb.Info{Status: rspb.StatusDeployed, Notes: "login with password=" + plantedPassword},
		Config: map[string]any{
			"global": map[string]any{"codefresh": map[string]any{
				"accountId": "acct-1",
				"userToken": map[string]any{"token": plantedToken, "secretKeyRef": map[string]any{"name": "tok", "key": "token"}},
			}},
			"extra": map[string]any{"password": plantedPassword, "session": plantedJWT, "tls": plantedKey},
		},
		Manifest: "---\n# Source: a/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n---\n# Source: a/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: tok\nstringData:\n  token: " + plantedToken + "\ndata:\n  password: " + base64.StdEncoding.EncodeToString([]byte(plantedPassword)) + "\n",
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.rt.v1", Namespace: "ns", Labels: map[string]string{"owner": "helm", "name": "rt", "version": "1"}},
		Type:       cluster.HelmReleaseSecretType,
		Data:       map[string][]byte{"release": helmRecord(t, r)},
	}
}

// fakeAPI serves Secrets in protobuf or JSON, as the client asks, and
// counts requests.
func fakeAPI(t *testing.T, objs map[string]runtime.Object, hits *int) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*hits++
		obj, ok := objs[r.URL.Path]
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not found"}`)
			return
		}
		media := runtime.ContentTypeJSON
		if strings.Contains(r.Header.Get("Accept"), runtime.ContentTypeProtobuf) {
			media = runtime.ContentTypeProtobuf
		}
		info, _ := runtime.SerializerInfoForMediaType(secretCodecs.SupportedMediaTypes(), media)
		w.Header().Set("Content-Type", media)
		if err := secretCodecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion).Encode(obj, w); err != nil {
			t.Error(err)
		}
	}))
}

// recordRun records reads of a planted cluster through real client-go
// clients (protobuf for Secrets, as cluster.NewClients asks) and writes
// the bundle; it returns the bundle's path and the server.
func recordRun(t *testing.T) (string, *httptest.Server, *int) {
	t.Helper()
	plain := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "ns", Annotations: map[string]string{lastApplied: `{"data":{"token":"` + plantedToken + `"}}`}},
		Data:       map[string][]byte{"token": []byte(plantedToken), "password": []byte(plantedPassword), "tls.key": []byte(plantedKey), "jwt": []byte(plantedJWT)},
	}
	var hits int
	srv := fakeAPI(t, map[string]runtime.Object{
		"/api/v1/namespaces/ns/secrets/creds":                    plain,
		"/api/v1/namespaces/ns/secrets/sh.helm.release.v1.rt.v1": plantedRelease(t),
	}, &hits)
	t.Cleanup(srv.Close)
	rec := NewRecorder()
	for _, media := range []string{runtime.ContentTypeProtobuf, runtime.ContentTypeJSON} {
		kube := clientFor(t, srv.URL, rec.Wrap(http.DefaultTransport), media)
		for _, name := range []string{"creds", "sh.helm.release.v1.rt.v1"} {
			if _, err := kube.CoreV1().Secrets("ns").Get(context.Background(), name, metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	get := rec.Getenv(func(k string) string { return map[string]string{"HELM_BIN": "/opt/helm", "API_TOKEN": plantedToken}[k] })
	get("HELM_BIN")
	get("API_TOKEN")
	get("UNSET")
	_, _ = rec.LookPath(func(string) (string, error) { return "", errors.New("executable file not found in $PATH") })("helm")
	_, _ = rec.Command(func(context.Context, string, ...string) ([]byte, error) { return []byte("v3.17.0+gabc\n"), nil })(context.Background(), "/opt/helm", "version", "--short")
	_, _ = rec.Probe("tls g.codefresh.io:443 via ", func() (probe.Result, error) {
		return probe.Result{TLS: &probe.TLSResult{Via: "127.0.0.1:9", Leaf: &probe.Cert{Subject: "CN=x"}, ChainErr: errors.New("x509: unknown authority")}}, nil
	})
	_, _ = rec.Probe("dns h:443", func() (probe.Result, error) { return probe.Result{}, errors.New("no such host") })
	_, _ = rec.Probe("registry quay.io/a/b:1 as anonymous", func() (probe.Result, error) {
		return probe.Result{Registry: &probe.RegistryAnswer{Digest: "sha256:ab", Platforms: []string{"linux/amd64", "linux/arm64"}}}, nil
	})
	_, _ = rec.Probe("registry ghcr.io/c/d:2 as anonymous", func() (probe.Result, error) {
		return probe.Result{Registry: &probe.RegistryAnswer{Status: 401, Code: "UNAUTHORIZED"}}, nil
	})
	path := filepath.Join(t.TempDir(), "b.tgz")
	m := Manifest{Plugin: "test", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Context: "ctx", Server: srv.URL, Mode: "pre-install", Flags: []Flag{{Name: "only", Values: []string{"a", "b"}}}}
	values := Values(map[string]any{"global": map[string]any{"codefresh": map[string]any{"userToken": map[string]any{"token": plantedToken}, "accountId": "acct-1"}}})
	vb, _ := json.Marshal(values)
	if err := rec.Write(path, m, map[string][]byte{ValuesEntry: vb}); err != nil {
		t.Fatal(err)
	}
	return path, srv, &hits
}

func clientFor(t *testing.T, host string, rt http.RoundTripper, media string) kubernetes.Interface {
	t.Helper()
	cfg := restConfig(host, rt)
	cfg.AcceptContentTypes = media
	cfg.ContentType = media
	k, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestReplayAnswersAsRecorded(t *testing.T) {
	path, srv, hits := recordRun(t)
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	before := *hits
	if b.Manifest.Format != FormatVersion || b.Manifest.Context != "ctx" || b.Manifest.Flags[0].Values[1] != "b" {
		t.Errorf("manifest %+v", b.Manifest)
	}
	for _, media := range []string{runtime.ContentTypeProtobuf, runtime.ContentTypeJSON} {
		cfg := b.RESTConfig()
		kube := clientFor(t, cfg.Host, cfg.Transport, media)
		sec, err := kube.CoreV1().Secrets("ns").Get(context.Background(), "creds", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", media, err)
		}
		// Redacted, never empty: a presence check keeps its verdict.
		if string(sec.Data["token"]) != Mask || len(sec.Data) != 4 || sec.Annotations[lastApplied] != Mask {
			t.Errorf("%s: replayed Secret %v %v", media, sec.Data, sec.Annotations)
		}
		rel, err := kube.CoreV1().Secrets("ns").Get(context.Background(), "sh.helm.release.v1.rt.v1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := cluster.DecodeHelmRelease(rel)
		if err != nil {
			t.Fatalf("%s: the release record is no longer decodable: %v", media, err)
		}
		cf := r.Config["global"].(map[string]any)["codefresh"].(map[string]any)
		ut := cf["userToken"].(map[string]any)
		if cf["accountId"] != "acct-1" || ut["token"] != Mask || ut["secretKeyRef"].(map[string]any)["name"] != "tok" {
			t.Errorf("%s: release values %v", media, r.Config)
		}
		if !strings.Contains(r.Manifest, "kind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n") || !strings.Contains(r.Manifest, "token: '***'") {
			t.Errorf("%s: release manifest %q", media, r.Manifest)
		}
		_, err = kube.CoreV1().Secrets("ns").Get(context.Background(), "never-read", metav1.GetOptions{})
		if !errors.Is(err, ErrOffline) && (err == nil || !strings.Contains(err.Error(), "not recorded in the bundle")) {
			t.Errorf("%s: an unrecorded request: %v", media, err)
		}
	}
	if *hits != before {
		t.Errorf("the replay sent %d requests to the server", *hits-before)
	}
	_ = srv
	if b.Getenv("HELM_BIN") != "/opt/helm" || b.Getenv("API_TOKEN") != Mask || b.Getenv("UNSET") != "" {
		t.Errorf("env %v", b.host.Env)
	}
	if _, err := b.LookPath("helm"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("lookPath: %v", err)
	}
	if out, err := b.Command(context.Background(), "/opt/helm", "version", "--short"); err != nil || string(out) != "v3.17.0+gabc\n" {
		t.Errorf("command: %q %v", out, err)
	}
	if _, err := b.Command(context.Background(), "/opt/helm", "list"); !errors.Is(err, ErrOffline) {
		t.Errorf("unrecorded command: %v", err)
	}
	r, err := b.Probe("tls g.codefresh.io:443 via ", nil)
	if err != nil || r.TLS == nil || r.TLS.Via != "127.0.0.1:9" || r.TLS.ChainErr == nil || r.TLS.ChainErr.Error() != "x509: unknown authority" || r.TLS.HostErr != nil {
		t.Errorf("tls probe %+v %v", r.TLS, err)
	}
	if _, err := b.Probe("dns h:443", nil); err == nil || err.Error() != "no such host" {
		t.Errorf("dns probe: %v", err)
	}
	if _, err := b.Probe("http https://x via ", nil); !errors.Is(err, ErrOffline) {
		t.Errorf("unrecorded probe: %v", err)
	}
	if r, err := b.Probe("registry quay.io/a/b:1 as anonymous", nil); err != nil || r.Registry == nil || r.Registry.Digest != "sha256:ab" || strings.Join(r.Registry.Platforms, " ") != "linux/amd64 linux/arm64" {
		t.Errorf("registry answer %+v %v", r.Registry, err)
	}
	if r, err := b.Probe("registry ghcr.io/c/d:2 as anonymous", nil); err != nil || r.Registry == nil || r.Registry.Status != 401 || r.Registry.Code != "UNAUTHORIZED" {
		t.Errorf("registry refusal %+v %v", r.Registry, err)
	}
}

// TestNoPlantedCredentialIsWritten: a token, a JWT, a PEM private key and a
// password, in a Secret (protobuf and JSON, and its last-applied
// annotation), in a Helm release's values, manifest and notes, in the
// environment and in the effective values, are in no byte of the bundle.
func TestNoPlantedCredentialIsWritten(t *testing.T) {
	path, _, _ := recordRun(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	// The release record is base64 of gzip inside the Secret: open every
	// layer too.
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	all := string(raw)
	for _, e := range b.exchanges {
		if obj, _, err := secretCodecs.UniversalDeserializer().Decode(e.Body, nil, nil); err == nil {
			if s, ok := obj.(*corev1.Secret); ok && s.Type == cluster.HelmReleaseSecretType {
				r, err := cluster.DecodeHelmRelease(s)
				if err != nil {
					t.Fatal(err)
				}
				js, _ := json.Marshal(r)
				all += string(js)
			}
		}
	}
	for _, p := range plantedAll {
		if strings.Contains(all, p) {
			t.Errorf("planted %q is in the bundle", p)
		}
	}
	if !strings.Contains(all, "acct-1") {
		t.Error("a value that is no credential was redacted too (acct-1)")
	}
}

// writeTar writes a bundle file of entries (manifest.json first when given).
func writeTar(t *testing.T, entries [][2]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: e[0], Mode: 0o600, Size: int64(len(e[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write([]byte(e[1]))
	}
	_ = tw.Close()
	_ = zw.Close()
	p := filepath.Join(t.TempDir(), "b.tgz")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func manifestJSON(format int, entries map[string]string) string {
	b, _ := json.Marshal(Manifest{Format: format, Entries: entries})
	return string(b)
}

func TestOpenRefusesADamagedBundle(t *testing.T) {
	api, host := "[]", "{}"
	good := map[string]string{apiEntry: sum(api), hostEntry: sum(host)}
	goodPath, _, _ := recordRun(t)
	whole, err := os.ReadFile(goodPath)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.tgz")
	if err := os.WriteFile(cut, whole[:len(whole)*2/3], 0o600); err != nil {
		t.Fatal(err)
	}
	notGzip := filepath.Join(t.TempDir(), "x.tgz")
	if err := os.WriteFile(notGzip, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path, want string
	}{
		{"newer format", writeTar(t, [][2]string{{manifestEntry, manifestJSON(FormatVersion+1, good)}, {apiEntry, api}, {hostEntry, host}}), fmt.Sprintf("format version %d is newer than this plugin reads (%d)", FormatVersion+1, FormatVersion)},
		{"tampered entry", writeTar(t, [][2]string{{manifestEntry, manifestJSON(1, good)}, {apiEntry, `[{"method":"GET"}]`}, {hostEntry, host}}), "entry api.json does not match its sha256"},
		{"missing entry", writeTar(t, [][2]string{{manifestEntry, manifestJSON(1, good)}, {apiEntry, api}}), "entry host.json listed in the manifest is missing"},
		{"unlisted entry", writeTar(t, [][2]string{{manifestEntry, manifestJSON(1, good)}, {apiEntry, api}, {hostEntry, host}, {"extra", "x"}}), "entry extra is not listed"},
		{"no manifest", writeTar(t, [][2]string{{apiEntry, api}}), "no manifest.json"},
		{"truncated", cut, "truncated"},
		{"not gzip", notGzip, "not a gzip'd tar"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Open: %v, want one line with %q", err, tt.want)
			}
		})
	}
	if _, err := Open(writeTar(t, [][2]string{{manifestEntry, manifestJSON(1, good)}, {apiEntry, api}, {hostEntry, host}})); err != nil {
		t.Errorf("a whole bundle: %v", err)
	}
}

func restConfig(host string, rt http.RoundTripper) *rest.Config {
	return &rest.Config{Host: host, Transport: rt}
}

// TestStreamClosedByTheClientIsRecorded: a streaming answer the server never
// ends (a streaming list) is recorded with what the client read, when the
// client closes it, without waiting for the server.
func TestStreamClosedByTheClientIsRecorded(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", runtime.ContentTypeProtobuf+";stream=watch")
		_, _ = io.WriteString(w, "frames")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	rec := NewRecorder()
	client := &http.Client{Transport: rec.Wrap(http.DefaultTransport)}
	resp, err := client.Get(srv.URL + "/api/v1/pods?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	path := filepath.Join(t.TempDir(), "s.tgz")
	if err := rec.Write(path, Manifest{Server: srv.URL}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	replayed, err := (&http.Client{Transport: b.RESTConfig().Transport}).Get(srv.URL + "/api/v1/pods?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(replayed.Body)
	if err != nil || string(got) != "frames" || replayed.Header.Get("Content-Type") != runtime.ContentTypeProtobuf+";stream=watch" {
		t.Errorf("replayed %q %v %q", got, err, replayed.Header.Get("Content-Type"))
	}
}
