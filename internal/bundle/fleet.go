package bundle

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FleetFormatVersion is the version of the fleet archive format this plugin
// writes and the newest it reads: 2 records the compiled run
// (FleetManifest.Spec), 1 the command line (FleetManifest.Flags).
const FleetFormatVersion = 2

// FleetManifestEntry is the fleet archive's first entry: its FleetManifest.
const FleetManifestEntry = "fleet.json"

// maxFleetManifest bounds fleet.json (16 MiB: far more than the manifest
// of tens of thousands of clusters).
const maxFleetManifest = 16 << 20

// maxInnerBundle bounds one cluster's bundle as the fleet archive holds it
// (gzip'd): its content is at most MaxSize uncompressed, and gzip and tar
// add far less than 1 MiB to that.
const maxInnerBundle = MaxSize + 1<<20

// FleetManifest describes a fleet archive (--bundle with --contexts or
// --all-contexts): fleet.json.
type FleetManifest struct {
	// Format is the fleet archive format version (FleetFormatVersion).
	Format int `json:"format"`
	// Kind is "fleet": what tells a fleet archive from a bundle.
	Kind string `json:"kind"`
	// Plugin is the version of the plugin that wrote it.
	Plugin string `json:"plugin"`
	// Time is when the run started (UTC).
	Time time.Time `json:"time"`
	// Mode is the run's mode: pre-install, post-install or upgrade.
	Mode string `json:"mode"`
	// Spec is the run as it was compiled, the same in every cluster's
	// bundle (format 2).
	Spec json.RawMessage `json:"spec,omitempty"`
	// Flags are the run's flags that shaped the checks, as given (format 1).
	Flags []Flag `json:"flags,omitempty"`
	// Clusters are the fleet's contexts, in the run's order.
	Clusters []FleetCluster `json:"clusters"`
}

// FleetCluster is one context of a fleet archive: its bundle (an entry of
// the archive, a single-cluster bundle as --bundle writes it), or why it
// has none.
type FleetCluster struct {
	Context string `json:"context"`
	// Bundle is the entry holding the context's bundle ("" when none) and
	// SHA256 the sha256 (hex) of that entry.
	Bundle string `json:"bundle,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// Error is why the context was not checked (its kubeconfig entry is
	// unusable: exit 2 in its own entry, no bundle).
	Error string `json:"error,omitempty"`
	// BundleError is why the context was checked but its bundle could not
	// be written (over MaxSize): a replay reports it as not checked.
	BundleError string `json:"bundleError,omitempty"`
}

// FleetEntryName is the entry of context's bundle in a fleet archive:
// clusters/NAME.tar.gz, NAME the context with every byte but ASCII letters,
// digits, '-', '_' and '.' written %XX (so '/' never makes a directory,
// and no two contexts share an entry), and a leading '.' escaped too.
func FleetEntryName(context string) string {
	var b strings.Builder
	for i := 0; i < len(context); i++ {
		c := context[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.' && i > 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return "clusters/" + b.String() + ".tar.gz"
}

// FleetWriter assembles a fleet archive: each cluster's bundle is written
// to a file of its own (Path) as the cluster's session ends, so that no
// more than one bundle is in memory at a time; Finish writes the archive
// from those files, atomically. Close removes the files.
type FleetWriter struct {
	path string
	dir  string
	n    int
}

// NewFleetWriter returns a writer of the fleet archive at path; its
// clusters' bundles wait in a temporary directory.
func NewFleetWriter(path string) (*FleetWriter, error) {
	dir, err := os.MkdirTemp("", "gitops-preflight-fleet-")
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	return &FleetWriter{path: path, dir: dir}, nil
}

// Path returns a new file name for one cluster's bundle (Recorder.Write
// writes it); Finish reads it back. Calls must not overlap (run.Fleet's
// Done calls never do).
func (w *FleetWriter) Path() string {
	w.n++
	return filepath.Join(w.dir, fmt.Sprintf("%d.tar.gz", w.n))
}

// Close removes the clusters' bundle files.
func (w *FleetWriter) Close() error { return os.RemoveAll(w.dir) }

// Finish writes the archive: fleet.json (m, its Format, Kind and each
// cluster's SHA256 filled here), then each cluster's bundle, read from
// files (keyed by context; a cluster with Bundle set must have one), to a
// temporary file beside the archive, renamed over it once complete. The
// error is one line.
func (w *FleetWriter) Finish(m FleetManifest, files map[string]string) (err error) {
	m.Format, m.Kind = FleetFormatVersion, "fleet"
	for i, c := range m.Clusters {
		if c.Bundle == "" {
			continue
		}
		sum, err := fileSHA256(files[c.Context])
		if err != nil {
			return fmt.Errorf("bundle %s: context %s: %w", w.path, c.Context, err)
		}
		m.Clusters[i].SHA256 = sum
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(w.path), "."+filepath.Base(w.path)+".tmp-")
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	zw := gzip.NewWriter(tmp)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: FleetManifestEntry, Mode: 0o600, Size: int64(len(mb)), ModTime: m.Time, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(mb); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	for _, c := range m.Clusters {
		if c.Bundle == "" {
			continue
		}
		if err := copyEntry(tw, c.Bundle, files[c.Context], m.Time); err != nil {
			return fmt.Errorf("bundle %s: context %s: %w", w.path, c.Context, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if err := os.Rename(tmp.Name(), w.path); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func copyEntry(tw *tar.Writer, name, path string, mod time.Time) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: st.Size(), ModTime: mod, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

// IsFleet reports whether the file at path is a fleet archive (its first
// entry is fleet.json); false when it cannot tell (Open or OpenFleet then
// says why).
func IsFleet(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return false
	}
	hdr, err := tar.NewReader(zr).Next()
	return err == nil && hdr.Name == FleetManifestEntry
}

// Fleet is an opened, verified fleet archive: its manifest, and each
// cluster's bundle in a file of its own until Close, opened one at a time
// (Bundle) so that a replay holds one bundle in memory, not the fleet.
type Fleet struct {
	Manifest FleetManifest
	path     string
	dir      string
	files    map[string]string // entry name -> file
}

// OpenFleet reads and verifies the fleet archive at path, keeping each
// cluster's bundle in a temporary file (Close removes them). The error is
// one line: the file cannot be read, is not a gzip'd tar or is truncated,
// is of a newer format than FleetFormatVersion, an entry is over its bound
// (a cluster's bundle over MaxSize plus 1 MiB), missing, unlisted or
// differs from its sha256 in fleet.json.
func OpenFleet(path string) (fl *Fleet, err error) {
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
	dir, err := os.MkdirTemp("", "gitops-preflight-fleet-replay-")
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	fl = &Fleet{path: path, dir: dir, files: map[string]string{}}
	defer func() {
		if err != nil {
			fl.Close()
			fl = nil
		}
	}()
	sums := map[string]string{}
	var m *FleetManifest
	tr := tar.NewReader(zr)
	cut := func(err error) error {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return bad("truncated (%v)", err)
		}
		return bad("not a gzip'd tar written by --bundle, or damaged: %v", err)
	}
	for first := true; ; first = false {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, cut(err)
		}
		if hdr.Name == FleetManifestEntry {
			if !first {
				return nil, bad("%s is not the first entry: the file was altered", FleetManifestEntry)
			}
			lr := &io.LimitedReader{R: tr, N: maxFleetManifest + 1}
			b, err := io.ReadAll(lr)
			if err != nil {
				return nil, cut(err)
			}
			if lr.N <= 0 {
				return nil, bad("%s over the %d MiB bound", FleetManifestEntry, maxFleetManifest>>20)
			}
			m = &FleetManifest{}
			if err := json.Unmarshal(b, m); err != nil {
				return nil, bad("%s is not valid: %v", FleetManifestEntry, err)
			}
			if m.Format > FleetFormatVersion {
				return nil, bad("fleet format version %d is newer than this plugin reads (%d): upgrade the plugin", m.Format, FleetFormatVersion)
			}
			continue
		}
		if first {
			return nil, bad("no %s first: not a fleet archive written by --bundle", FleetManifestEntry)
		}
		if _, dup := sums[hdr.Name]; dup {
			return nil, bad("entry %s appears twice: the file was altered", hdr.Name)
		}
		file := filepath.Join(dir, fmt.Sprintf("%d.tar.gz", len(sums)+1))
		sum, over, err := saveEntry(file, tr)
		if err != nil {
			return nil, cut(err)
		}
		if over {
			return nil, bad("entry %s over the %d MiB bound of one cluster's bundle", hdr.Name, maxInnerBundle>>20)
		}
		sums[hdr.Name], fl.files[hdr.Name] = sum, file
	}
	// Read to the end of the gzip stream: a cut there is a truncation too.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return nil, cut(err)
	}
	if m == nil {
		return nil, bad("no %s: not a fleet archive written by --bundle", FleetManifestEntry)
	}
	if m.Format < 1 || m.Kind != "fleet" {
		return nil, bad("%s has no format version or kind: not written by --bundle", FleetManifestEntry)
	}
	listed := map[string]bool{}
	for _, c := range m.Clusters {
		if c.Bundle == "" {
			continue
		}
		listed[c.Bundle] = true
		got, ok := sums[c.Bundle]
		switch {
		case !ok:
			return nil, bad("entry %s (context %s) listed in %s is missing: the file is truncated or was altered", c.Bundle, c.Context, FleetManifestEntry)
		case got != c.SHA256:
			return nil, bad("entry %s (context %s) does not match its sha256 in %s: the file was altered or damaged", c.Bundle, c.Context, FleetManifestEntry)
		}
	}
	for name := range sums {
		if !listed[name] {
			return nil, bad("entry %s is not listed in %s: the file was altered", name, FleetManifestEntry)
		}
	}
	fl.Manifest = *m
	return fl, nil
}

// saveEntry copies r to file, at most maxInnerBundle bytes (over says it
// had more), and returns the sha256 (hex) of what it copied.
func saveEntry(file string, r io.Reader) (sum string, over bool, err error) {
	out, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", false, err
	}
	defer out.Close()
	h := sha256.New()
	lr := &io.LimitedReader{R: r, N: maxInnerBundle + 1}
	if _, err := io.Copy(io.MultiWriter(out, h), lr); err != nil {
		return "", false, err
	}
	if lr.N <= 0 {
		return "", true, nil
	}
	return hex.EncodeToString(h.Sum(nil)), false, out.Close()
}

// Bundle opens (and verifies, as Open) the bundle of cluster c of the
// manifest; its errors name the context.
func (f *Fleet) Bundle(c FleetCluster) (*Bundle, error) {
	file, ok := f.files[c.Bundle]
	if c.Bundle == "" || !ok {
		return nil, fmt.Errorf("bundle %s: context %s has no bundle", f.path, c.Context)
	}
	b, err := Open(file)
	if err != nil {
		// Name the archive and the context, not the temporary file.
		return nil, errors.New(strings.Replace(err.Error(), "bundle "+file, fmt.Sprintf("bundle %s: context %s's bundle", f.path, c.Context), 1))
	}
	return b, nil
}

// Close removes the clusters' bundle files.
func (f *Fleet) Close() error {
	if f == nil || f.dir == "" {
		return nil
	}
	return os.RemoveAll(f.dir)
}
