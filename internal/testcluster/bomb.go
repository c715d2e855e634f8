package testcluster

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BombPayload returns the data["release"] value of a Helm release Secret
// whose gzip'd JSON expands to about expand bytes (a decompression bomb:
// 760 MB compress to about 740 KB, under the 1 MiB a Secret may hold).
// Build it once and share it between Secrets.
func BombPayload(expand int) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write([]byte(`{"name":"`))
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for n := 0; n < expand; n += len(chunk) {
		_, _ = zw.Write(chunk)
	}
	_, _ = zw.Write([]byte(`"}`))
	_ = zw.Close()
	return []byte(base64.StdEncoding.EncodeToString(buf.Bytes()))
}

// BombSecret is a Helm release Secret (type helm.sh/release.v1, labels
// owner=helm, name, version, status) of release name in ns carrying payload.
func BombSecret(ns, name string, payload []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      fmt.Sprintf("sh.helm.release.v1.%s.v1", name),
			Labels:    map[string]string{"owner": "helm", "name": name, "version": "1", "status": "deployed"},
		},
		Type: "helm.sh/release.v1",
		Data: map[string][]byte{"release": payload},
	}
}
