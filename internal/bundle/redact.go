package bundle

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"mime"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/redact"
)

// Mask replaces every redacted value (redact.Mask). A redacted value is
// never empty and an empty one stays empty, so a check that only tests
// whether a value is set keeps its verdict on replay; one that reads the
// value itself (the user token sent to the platform) does not. Public
// certificates (a Secret's tls.crt and ca.crt) are kept, their CERTIFICATE
// blocks only.
const Mask = redact.Mask

// lastApplied is the annotation kubectl apply keeps a copy of the object in:
// a Secret's data included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// secretsPath matches the API paths of Secrets (a list, or one by name).
var secretsPath = regexp.MustCompile(`^/api/v1/(?:namespaces/[^/]+/)?secrets(?:/|\?|$)`)

// podLogPath matches the API paths of a container's log.
var podLogPath = regexp.MustCompile(`^/api/v1/namespaces/[^/]+/pods/[^/]+/log(?:\?|$)`)

// redactExchange masks the Secrets of a recorded answer, and the
// credential-looking values of a container's log, line by line. An answer about
// Secrets that cannot be decoded is dropped (replayed as an error), never
// written as is.
func redactExchange(e *Exchange) {
	for i, w := range e.Warnings {
		e.Warnings[i] = redact.String(w)
	}
	if podLogPath.MatchString(e.URI) {
		e.Body = []byte(redactLog(string(e.Body)))
		return
	}
	if !secretsPath.MatchString(e.URI) || len(e.Body) == 0 {
		return
	}
	media, _, _ := mime.ParseMediaType(e.ContentType)
	var out []byte
	var ok bool
	switch media {
	case runtime.ContentTypeJSON:
		out, ok = redactJSON(e.Body)
	case runtime.ContentTypeProtobuf:
		out, ok = redactProtobuf(e.Body)
	}
	if !ok {
		e.Body, e.Status, e.ContentType = nil, 0, ""
		e.Err = "the answer about Secrets could not be redacted, so the bundle does not hold it"
		return
	}
	e.Body = out
}

// secretCodecs decode and encode the answers about Secrets: core/v1
// Secrets and Status, and the metadata-only kinds of meta.k8s.io/v1.
var secretCodecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(metav1.AddMetaToScheme(s))
	return serializer.NewCodecFactory(s)
}()

// redactProtobuf masks a Secret or SecretList (or passes a Status or a
// metadata-only answer, with last-applied masked) in protobuf.
func redactProtobuf(b []byte) ([]byte, bool) {
	obj, gvk, err := secretCodecs.UniversalDeserializer().Decode(b, nil, nil)
	if err != nil {
		return nil, false
	}
	switch o := obj.(type) {
	case *corev1.Secret:
		redactSecret(o)
	case *corev1.SecretList:
		for i := range o.Items {
			redactSecret(&o.Items[i])
		}
	case *metav1.PartialObjectMetadata:
		maskAnnotation(o.Annotations)
	case *metav1.PartialObjectMetadataList:
		for i := range o.Items {
			maskAnnotation(o.Items[i].Annotations)
		}
	case *metav1.Status:
	default:
		return nil, false
	}
	info, ok := runtime.SerializerInfoForMediaType(secretCodecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		return nil, false
	}
	var buf bytes.Buffer
	enc := secretCodecs.EncoderForVersion(info.Serializer, gvk.GroupVersion())
	if err := enc.Encode(obj, &buf); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

func redactSecret(s *corev1.Secret) {
	maskAnnotation(s.Annotations)
	for k, v := range s.Data {
		if s.Type == cluster.HelmReleaseSecretType && k == "release" {
			s.Data[k] = redactRelease(v)
			continue
		}
		s.Data[k] = maskSecretValue(k, v)
	}
	for k, v := range s.StringData {
		s.StringData[k] = string(maskSecretValue(k, []byte(v)))
	}
}

// publicCertKeys are the Secret keys that hold public certificates
// (kubernetes.io/tls's tls.crt, and the CA bundle ca.crt that cert-manager
// and service meshes write): a check reads their hosts and expiry.
var publicCertKeys = []string{corev1.TLSCertKey, corev1.ServiceAccountRootCAKey}

// maskSecretValue is the bundle's copy of one value of a Secret: empty stays
// empty (a check tells an empty value from a set one), the PEM CERTIFICATE
// blocks of a public certificate key are kept (anything else in it, a
// private key pasted beside the certificate included, is left out), a
// pull secret's .dockerconfigjson keeps the registries it names (every
// credential in it Mask: image-pull-secrets judges which registries a pod
// can authenticate to), and every other value is Mask.
func maskSecretValue(key string, v []byte) []byte {
	if len(v) == 0 {
		return v
	}
	if key == corev1.DockerConfigJsonKey {
		if out, ok := maskDockerConfig(v); ok {
			return out
		}
		return []byte(Mask)
	}
	if slices.Contains(publicCertKeys, key) {
		var out []byte
		for rest := v; ; {
			var b *pem.Block
			if b, rest = pem.Decode(rest); b == nil {
				break
			}
			if b.Type == "CERTIFICATE" && len(b.Headers) == 0 {
				out = append(out, pem.EncodeToMemory(b)...)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return []byte(Mask)
}

// maskDockerConfig returns a .dockerconfigjson ({"auths": {REGISTRY:
// {FIELD: VALUE}}}) with every VALUE Mask (an empty one left empty), the
// registries kept; false when v is not one.
func maskDockerConfig(v []byte) ([]byte, bool) {
	var cfg struct {
		Auths map[string]map[string]any `json:"auths"`
	}
	if err := json.Unmarshal(v, &cfg); err != nil || cfg.Auths == nil {
		return nil, false
	}
	out := map[string]map[string]string{}
	for reg, fields := range cfg.Auths {
		m := map[string]string{}
		for k, f := range fields {
			if s, ok := f.(string); ok && s == "" {
				m[k] = ""
				continue
			}
			m[k] = Mask
		}
		out[reg] = m
	}
	b, err := json.Marshal(map[string]any{"auths": out})
	return b, err == nil
}

func maskAnnotation(a map[string]string) {
	if _, ok := a[lastApplied]; ok {
		a[lastApplied] = Mask
	}
}

// redactJSON masks the Secrets of a JSON answer: a Secret, a SecretList, a
// metadata-only object or list (last-applied masked), or a Status.
func redactJSON(b []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, false
	}
	secretMap := func(o map[string]any, secret bool) {
		if md, ok := o["metadata"].(map[string]any); ok {
			if a, ok := md["annotations"].(map[string]any); ok {
				if _, ok := a[lastApplied]; ok {
					a[lastApplied] = Mask
				}
			}
		}
		if !secret {
			return
		}
		helm := o["type"] == cluster.HelmReleaseSecretType
		if d, ok := o["data"].(map[string]any); ok {
			for k, v := range d {
				s, _ := v.(string)
				raw, err := base64.StdEncoding.DecodeString(s)
				switch {
				case err != nil:
					d[k] = base64.StdEncoding.EncodeToString([]byte(Mask))
				case helm && k == "release":
					d[k] = base64.StdEncoding.EncodeToString(redactRelease(raw))
				default:
					d[k] = base64.StdEncoding.EncodeToString(maskSecretValue(k, raw))
				}
			}
		}
		if d, ok := o["stringData"].(map[string]any); ok {
			for k, v := range d {
				s, _ := v.(string)
				d[k] = string(maskSecretValue(k, []byte(s)))
			}
		}
	}
	switch obj["kind"] {
	case "Secret", "PartialObjectMetadata":
		secretMap(obj, obj["kind"] == "Secret")
	case "SecretList", "PartialObjectMetadataList":
		items, _ := obj["items"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				secretMap(m, obj["kind"] == "SecretList")
			}
		}
	case "Status":
	default:
		return nil, false
	}
	out, err := json.Marshal(obj)
	return out, err == nil
}

// redactRelease masks a Helm release record's payload (the Secret's
// data["release"]: base64 of gzip'd JSON, as Helm's storage driver writes
// it): secret-looking values of its config (the user's values), the Secrets
// of its manifest and hooks, and its notes. The record stays decodable; a
// payload that cannot be decoded (or is over cluster.MaxReleaseSize) is
// masked whole.
func redactRelease(payload []byte) []byte {
	raw, err := base64.StdEncoding.DecodeString(string(payload))
	if err != nil {
		return []byte(Mask)
	}
	if len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return []byte(Mask)
		}
		raw, err = io.ReadAll(io.LimitReader(zr, cluster.MaxReleaseSize+1))
		if err != nil || len(raw) > cluster.MaxReleaseSize {
			return []byte(Mask)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var rls map[string]any
	if err := dec.Decode(&rls); err != nil {
		return []byte(Mask)
	}
	if cfg, ok := rls["config"].(map[string]any); ok {
		rls["config"] = Values(cfg)
	}
	if m, ok := rls["manifest"].(string); ok {
		rls["manifest"] = manifest(m)
	}
	if hooks, ok := rls["hooks"].([]any); ok {
		for _, h := range hooks {
			if hm, ok := h.(map[string]any); ok {
				if m, ok := hm["manifest"].(string); ok {
					hm["manifest"] = manifest(m)
				}
			}
		}
	}
	if info, ok := rls["info"].(map[string]any); ok {
		if n, ok := info["notes"].(string); ok {
			info["notes"] = redact.String(n)
		}
	}
	js, err := json.Marshal(rls)
	if err != nil {
		return []byte(Mask)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(js)
	_ = zw.Close()
	return []byte(base64.StdEncoding.EncodeToString(buf.Bytes()))
}

// docSeparator splits a manifest into documents, as Helm's
// releaseutil.SplitManifests does.
var docSeparator = regexp.MustCompile(`(?:^|\s*\n)---\s*`)

// manifest masks the data and stringData values of the Secrets among a
// rendered manifest's documents; the other documents are kept byte for
// byte.
func manifest(m string) string {
	var b strings.Builder
	pos := 0
	for _, loc := range docSeparator.FindAllStringIndex(m, -1) {
		b.WriteString(secretDoc(m[pos:loc[0]]))
		b.WriteString(m[loc[0]:loc[1]])
		pos = loc[1]
	}
	b.WriteString(secretDoc(m[pos:]))
	return b.String()
}

func secretDoc(doc string) string {
	if !strings.Contains(doc, "Secret") {
		return doc
	}
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		return redact.String(doc)
	}
	if obj["kind"] != "Secret" {
		return doc
	}
	for _, field := range []string{"data", "stringData"} {
		d, ok := obj[field].(map[string]any)
		if !ok {
			continue
		}
		for k, v := range d {
			s, _ := v.(string)
			if field == "stringData" {
				d[k] = string(maskSecretValue(k, []byte(s)))
			} else if raw, err := base64.StdEncoding.DecodeString(s); err == nil {
				d[k] = base64.StdEncoding.EncodeToString(maskSecretValue(k, raw))
			} else {
				d[k] = base64.StdEncoding.EncodeToString([]byte(Mask))
			}
		}
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		if a, ok := md["annotations"].(map[string]any); ok {
			if _, ok := a[lastApplied]; ok {
				a[lastApplied] = Mask
			}
		}
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		return Mask
	}
	lead := doc[:len(doc)-len(strings.TrimLeft(doc, "\n"))]
	return lead + string(out)
}

// Values returns a copy of chart values with every secret-looking string
// masked: the value of a key internal/redact treats as a credential
// (token, password, secret, apiKey, ...) whole, and the credentials
// redact.String finds in any other string (a JWT, a PEM private key, a
// URL's password). References to Secrets (secretKeyRef, existingSecret,
// ...) are kept.
func Values(v map[string]any) map[string]any {
	out, _ := valuesOf("", v).(map[string]any)
	return out
}

func valuesOf(key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = valuesOf(k, e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = valuesOf(key, e)
		}
		return out
	case string:
		return maskString(key, x)
	default:
		return v
	}
}

// maskString is Mask when key names a credential (as internal/redact
// judges "key: value"), else value with redact.String's masks.
func maskString(key, value string) string {
	if value == "" {
		return value
	}
	if key != "" {
		kv := key + ": " + value
		if redact.String(kv) != kv {
			return Mask
		}
	}
	return redact.String(value)
}

func redactHost(h *host) {
	for k, v := range h.Env {
		h.Env[k] = maskString(k, v)
	}
	for k, o := range h.Commands {
		h.Commands[k] = outcome{Out: redact.String(o.Out), Err: redact.String(o.Err)}
	}
}

// Text returns s with every credential value masked (package redact): for
// text a bundle keeps, such as the --set expression a value came from.
func Text(s string) string { return redact.String(s) }
