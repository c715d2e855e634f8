package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"
)

// Write redacts what r recorded and writes the bundle to path: m (its
// Format and Entries filled here) and the recorded exchanges and host
// reads, plus files (ValuesEntry, ChartEntry, WaiversEntry), each once
// redacted by the caller where it holds values. The error is one line.
func (r *Recorder) Write(path string, m Manifest, files map[string][]byte) error {
	r.mu.Lock()
	exchanges := r.sortedExchanges()
	h := r.host
	hooks, err := hookEntries(r.hooks)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	for _, e := range exchanges {
		redactExchange(e)
	}
	redactHost(&h)
	entries := hooks
	if entries[apiEntry], err = json.Marshal(exchanges); err != nil {
		return err
	}
	if entries[hostEntry], err = json.Marshal(h); err != nil {
		return err
	}
	for k, v := range files {
		entries[k] = v
	}
	m.Format = FormatVersion
	m.Entries = map[string]string{}
	total := 0
	for k, v := range entries {
		sum := sha256.Sum256(v)
		m.Entries[k] = hex.EncodeToString(sum[:])
		total += len(v)
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if total+len(mb) > MaxSize {
		return fmt.Errorf("bundle %s: %d MiB uncompressed, over the %d MiB bound; nothing written", path, (total+len(mb))>>20, MaxSize>>20)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(entries))
	for k := range entries {
		names = append(names, k)
	}
	sort.Strings(names)
	put := func(name string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(b)), ModTime: m.Time, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	if err := put(manifestEntry, mb); err != nil {
		return err
	}
	for _, n := range names {
		if err := put(n, entries[n]); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	return nil
}

// Open reads and verifies the bundle at path. The error is one line: the
// file cannot be read, is not a gzip'd tar or is truncated, is over MaxSize
// uncompressed, is of a newer format than FormatVersion, or an entry is
// missing, unlisted or differs from its sha256 in the manifest.
func Open(path string) (*Bundle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	defer f.Close()
	bad := func(format string, a ...any) error {
		return fmt.Errorf("bundle %s: "+format, append([]any{path}, a...)...)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, bad("not a gzip'd tar written by --bundle: %v", err)
	}
	limited := &io.LimitedReader{R: zr, N: MaxSize + 1}
	tr := tar.NewReader(limited)
	entries := map[string][]byte{}
	var m *Manifest
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, truncated(bad, limited, err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, truncated(bad, limited, err)
		}
		if _, dup := entries[hdr.Name]; dup {
			return nil, bad("entry %s appears twice: the file was altered", hdr.Name)
		}
		entries[hdr.Name] = b
		if hdr.Name == manifestEntry {
			m = &Manifest{}
			if err := json.Unmarshal(b, m); err != nil {
				return nil, bad("manifest.json is not valid: %v", err)
			}
			if m.Format > FormatVersion {
				return nil, bad("format version %d is newer than this plugin reads (%d): upgrade the plugin", m.Format, FormatVersion)
			}
		}
	}
	// Read to the end of the gzip stream: a cut there is a truncation too.
	if _, err := io.Copy(io.Discard, limited); err != nil {
		return nil, truncated(bad, limited, err)
	}
	if limited.N <= 0 {
		return nil, bad("over the %d MiB bound uncompressed", MaxSize>>20)
	}
	if m == nil {
		return nil, bad("no manifest.json: not written by --bundle")
	}
	if m.Format < 1 {
		return nil, bad("manifest.json has no format version: not written by --bundle")
	}
	for name, b := range entries {
		if name == manifestEntry {
			continue
		}
		want, ok := m.Entries[name]
		if !ok {
			return nil, bad("entry %s is not listed in the manifest: the file was altered", name)
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != want {
			return nil, bad("entry %s does not match its sha256 in the manifest: the file was altered or damaged", name)
		}
	}
	for name := range m.Entries {
		if _, ok := entries[name]; !ok {
			return nil, bad("entry %s listed in the manifest is missing: the file is truncated or was altered", name)
		}
	}
	return newBundle(*m, entries)
}

func truncated(bad func(string, ...any) error, l *io.LimitedReader, err error) error {
	if l.N <= 0 {
		return bad("over the %d MiB bound uncompressed", MaxSize>>20)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return bad("truncated (%v)", err)
	}
	return bad("not a gzip'd tar written by --bundle, or damaged: %v", err)
}

// Now is when a bundle is written (tests replace it).
var Now = func() time.Time { return time.Now().UTC() }
