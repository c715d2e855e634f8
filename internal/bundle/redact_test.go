package bundle

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcert"
)

// TestSecretValuesKeepWhatChecksJudge: in both encodings the API answers
// with, a Secret's empty value stays empty, the certificates of tls.crt and
// ca.crt are kept (and a private key pasted into tls.crt is not), and every
// other value is masked.
func TestSecretValuesKeepWhatChecksJudge(t *testing.T) {
	cert, key := testcert.SelfSigned(t, "runtime.example.com")
	sec := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: "cf"},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			"tls.crt": append(append([]byte(nil), cert...), key...),
			"tls.key": key,
			"ca.crt":  []byte("not a certificate at all"),
			"empty":   {},
			"token":   []byte("s3cr3t-value"),
			// A pull secret's registries are kept, its credentials not.
			corev1.DockerConfigJsonKey: []byte(`{"auths":{"ghcr.io":{"auth":"czNjcjN0LXZhbHVl","email":""},"quay.io":{"username":"bot","password":"s3cr3t-value"}}}`),
		},
	}
	check := func(t *testing.T, got *corev1.Secret, raw []byte) {
		t.Helper()
		if !bytes.Equal(got.Data["tls.crt"], cert) {
			t.Errorf("tls.crt = %q, want the certificate alone", got.Data["tls.crt"])
		}
		for _, k := range []string{"tls.key", "ca.crt", "token"} {
			if string(got.Data[k]) != Mask {
				t.Errorf("%s = %q, want %q", k, got.Data[k], Mask)
			}
		}
		if d := string(got.Data[corev1.DockerConfigJsonKey]); d != `{"auths":{"ghcr.io":{"auth":"***","email":""},"quay.io":{"password":"***","username":"***"}}}` {
			t.Errorf(".dockerconfigjson = %s, want its registries with every credential masked", d)
		}
		if v, ok := got.Data["empty"]; !ok || len(v) != 0 {
			t.Errorf("empty = %q (present %v), want an empty value", v, ok)
		}
		for _, leak := range []string{"PRIVATE KEY", "s3cr3t-value", "czNjcjN0LXZhbHVl", "not a certificate"} {
			if strings.Contains(string(raw), leak) {
				t.Errorf("the redacted answer holds %q", leak)
			}
		}
	}
	t.Run("json", func(t *testing.T) {
		in, err := json.Marshal(sec)
		if err != nil {
			t.Fatal(err)
		}
		out, ok := redactJSON(in)
		if !ok {
			t.Fatal("redactJSON refused a Secret")
		}
		var got corev1.Secret
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		check(t, &got, decodedData(t, &got))
	})
	t.Run("protobuf", func(t *testing.T) {
		info, _ := runtime.SerializerInfoForMediaType(secretCodecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
		var buf bytes.Buffer
		if err := secretCodecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion).Encode(sec, &buf); err != nil {
			t.Fatal(err)
		}
		out, ok := redactProtobuf(buf.Bytes())
		if !ok {
			t.Fatal("redactProtobuf refused a Secret")
		}
		obj, _, err := secretCodecs.UniversalDeserializer().Decode(out, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		check(t, obj.(*corev1.Secret), out)
	})
	t.Run("manifest", func(t *testing.T) {
		doc := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  empty: \"\"\n  password: hunter2\n  ca.crt: |\n" +
			indent(string(cert)+string(key), "    ")
		out := secretDoc(doc)
		if strings.Contains(out, "hunter2") || strings.Contains(out, "PRIVATE KEY") {
			t.Errorf("manifest Secret keeps a credential:\n%s", out)
		}
		if !strings.Contains(out, `empty: ""`) || !strings.Contains(out, strings.Split(string(cert), "\n")[1]) {
			t.Errorf("manifest Secret lost its empty value or its certificate:\n%s", out)
		}
	})
}

func decodedData(t *testing.T, s *corev1.Secret) []byte {
	t.Helper()
	var b []byte
	for _, v := range s.Data {
		b = append(b, v...)
	}
	return b
}

func indent(s, pre string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return pre + strings.Join(lines, "\n"+pre) + "\n"
}
