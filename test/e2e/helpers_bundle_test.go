package e2e

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tarEntries calls each with every entry of the gzip'd tar at path, in
// order: its header and its content.
func tarEntries(t *testing.T, path string, each func(hdr *tar.Header, data []byte)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		each(hdr, data)
	}
}

// untarred returns every byte of the bundle's entries, uncompressed.
func untarred(t *testing.T, path string) string {
	t.Helper()
	var b strings.Builder
	tarEntries(t, path, func(_ *tar.Header, data []byte) { b.Write(data) })
	return b.String()
}

// untarredDeep is untarred with every entry that is itself a gzip'd tar
// (a cluster's bundle in a fleet archive) uncompressed too.
func untarredDeep(t *testing.T, path string) string {
	t.Helper()
	var b strings.Builder
	tarEntries(t, path, func(hdr *tar.Header, data []byte) {
		fmt.Fprintf(&b, "%q\n", hdr.Name)
		if !strings.HasSuffix(hdr.Name, ".tar.gz") {
			b.Write(data)
			return
		}
		inner := filepath.Join(t.TempDir(), "inner.tgz")
		if err := os.WriteFile(inner, data, 0o600); err != nil {
			t.Fatal(err)
		}
		b.WriteString(untarred(t, inner))
	})
	return b.String()
}
