package cluster

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// FuzzDecodeHelmRelease decodes arbitrary payloads, raw and gzip'd: never a
// panic, and a payload over MaxReleaseSize is never decoded.
func FuzzDecodeHelmRelease(f *testing.F) {
	f.Add([]byte(`{"name":"cf-gitops-runtime","info":{"status":"deployed"},"chart":{"metadata":{"name":"gitops-runtime","version":"0.30.0"}},"version":1}`), true)
	f.Add([]byte(`{"name":1}`), false)
	f.Add([]byte{0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff}, false)
	f.Add([]byte("null"), true)
	f.Fuzz(func(t *testing.T, payload []byte, compress bool) {
		if compress {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			_, _ = zw.Write(payload)
			_ = zw.Close()
			payload = b.Bytes()
		}
		sec := &corev1.Secret{Data: map[string][]byte{"release": []byte(base64.StdEncoding.EncodeToString(payload))}}
		rls, err := DecodeHelmRelease(sec)
		var ue *UnreadableReleaseError
		if errors.As(err, &ue) && rls != nil {
			t.Fatal("an unreadable release was decoded")
		}
	})
}
