package cluster

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BombSecret returns a release Secret whose gzip payload expands to n bytes
// of a JSON string (a decompression bomb when n is large). When lie is true
// the gzip trailer claims a size of 100 bytes.
func bombSecret(t testing.TB, n int, lie bool) *corev1.Secret {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write([]byte(`{"name":"`))
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for written := 0; written < n; written += len(chunk) {
		zw.Write(chunk)
	}
	zw.Write([]byte(`"}`))
	zw.Close()
	b := buf.Bytes()
	if lie {
		binary.LittleEndian.PutUint32(b[len(b)-4:], 100)
	}
	enc := base64.StdEncoding.EncodeToString(b)
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "sh.helm.release.v1.bomb.v1"}, Data: map[string][]byte{"release": []byte(enc)}}
}

func TestDecodeHelmReleaseCapsDecompression(t *testing.T) {
	for _, lie := range []bool{false, true} {
		sec := bombSecret(t, 64<<20, lie)
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := DecodeHelmRelease(sec)
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		var ue *UnreadableReleaseError
		if !errors.As(err, &ue) || ue.Namespace != "x" || ue.Name != "sh.helm.release.v1.bomb.v1" {
			t.Fatalf("lie=%v: err = %v, want an UnreadableReleaseError", lie, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 6*MaxReleaseSize { // io.ReadAll doubles its buffer up to the cap; -race adds more
			t.Errorf("lie=%v: decoding allocated %d MiB, want at most ~%d MiB", lie, grew>>20, 6*MaxReleaseSize>>20)
		}
	}
}

func TestDecodeHelmReleaseUnderCap(t *testing.T) {
	rls, err := DecodeHelmRelease(bombSecret(t, 1<<20, false))
	if err != nil || len(rls.Name) < 1<<20 {
		t.Fatalf("a 1 MiB payload: %v", err)
	}
}
