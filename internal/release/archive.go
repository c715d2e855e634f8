package release

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// File is one entry of a release archive, at the archive root.
type File struct {
	Name string // name inside the archive
	Src  string // path on disk
	Mode os.FileMode
}

// krewLicenseNames are the names validate-krew-manifest accepts as a license
// file (case-insensitive; https://github.com/kubernetes-sigs/krew/tree/v0.5.0/cmd/validate-krew-manifest).
var krewLicenseNames = []string{"license", "license.txt", "license.md", "licenses", "licenses.txt", "licenses.md", "copying", "copying.txt"}

// WriteArchive writes files to dst as a zip (when dst ends in .zip) or a
// gzipped tar, entries named as given (a "dir/" entry precedes the first
// file in a directory), mtime set to modTime so that the same inputs give
// the same bytes.
func WriteArchive(dst string, files []File, modTime time.Time) (err error) {
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	if strings.HasSuffix(dst, ".zip") {
		return writeZip(out, files, modTime)
	}
	return writeTarGz(out, files, modTime)
}

func writeTarGz(w io.Writer, files []File, modTime time.Time) error {
	gz := gzip.NewWriter(w)
	gz.ModTime = modTime
	tw := tar.NewWriter(gz)
	dirs := map[string]bool{}
	for _, f := range files {
		// A directory entry before the first file in it: Helm 3's
		// extractor creates no parent directories (it opens bin/x and fails).
		for _, d := range parentDirs(f.Name) {
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Name: d, Mode: 0o755, ModTime: modTime, Typeflag: tar.TypeDir, Format: tar.FormatPAX}); err != nil {
				return err
			}
		}
		data, err := os.ReadFile(f.Src)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: f.Name, Mode: int64(f.Mode.Perm()), Size: int64(len(data)), ModTime: modTime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, files []File, modTime time.Time) error {
	zw := zip.NewWriter(w)
	dirs := map[string]bool{}
	for _, f := range files {
		for _, d := range parentDirs(f.Name) {
			if dirs[d] {
				continue
			}
			dirs[d] = true
			hdr := &zip.FileHeader{Name: d, Method: zip.Store, Modified: modTime}
			hdr.SetMode(os.ModeDir | 0o755)
			if _, err := zw.CreateHeader(hdr); err != nil {
				return err
			}
		}
		data, err := os.ReadFile(f.Src)
		if err != nil {
			return err
		}
		hdr := &zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: modTime}
		hdr.SetMode(f.Mode.Perm())
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := fw.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// parentDirs returns the directories of an archive path, outermost first,
// each ending in "/": "a/b/c" gives "a/", "a/b/".
func parentDirs(name string) []string {
	var out []string
	for i, c := range name {
		if c == '/' {
			out = append(out, name[:i+1])
		}
	}
	return out
}

// ArchiveEntry is a file listed in an archive.
type ArchiveEntry struct {
	Name string
	Mode os.FileMode
}

// ListArchive returns the regular files of a .zip or .tar.gz archive, sorted.
func ListArchive(p string) ([]ArchiveEntry, error) {
	var out []ArchiveEntry
	if strings.HasSuffix(p, ".zip") {
		zr, err := zip.OpenReader(p)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		for _, f := range zr.File {
			if !f.Mode().IsDir() {
				out = append(out, ArchiveEntry{Name: f.Name, Mode: f.Mode()})
			}
		}
	} else {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		tr := tar.NewReader(gz)
		for {
			hdr, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			if hdr.Typeflag == tar.TypeReg {
				out = append(out, ArchiveEntry{Name: hdr.Name, Mode: os.FileMode(hdr.Mode).Perm()})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// CheckKrewArchive checks what a krew install of the archive relies on: the
// platform's bin is in it (executable, except on Windows where the mode is
// not used), and so is a license file, which krew-index CI requires to be
// extracted (https://github.com/kubernetes-sigs/krew/tree/v0.5.0/cmd/validate-krew-manifest). Every file is extracted since the
// manifest leaves `files` unset.
func CheckKrewArchive(p, bin string, windows bool) error {
	entries, err := ListArchive(p)
	if err != nil {
		return err
	}
	var haveBin, haveLicense bool
	for _, e := range entries {
		if path.Clean(e.Name) == path.Clean(bin) {
			haveBin = true
			if !windows && e.Mode&0o111 == 0 {
				return fmt.Errorf("%s: %s is not executable (mode %v)", p, bin, e.Mode)
			}
		}
		for _, l := range krewLicenseNames {
			if strings.EqualFold(path.Base(e.Name), l) {
				haveLicense = true
			}
		}
	}
	if !haveBin {
		return fmt.Errorf("%s: bin %s is not in the archive", p, bin)
	}
	if !haveLicense {
		return fmt.Errorf("%s: no LICENSE (or alike) file in the archive", p)
	}
	return nil
}

// SHA256File returns the lowercase hex sha256 of a file, the form krew wants.
func SHA256File(p string) (string, error) {
	f, err := os.Open(p)
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

// CheckHelmArchive checks what `helm plugin install <archive>` relies on:
// plugin.yaml at the archive root (Helm 3 requires it there) and bin, where
// plugin.yaml points, in the archive and executable.
func CheckHelmArchive(p, bin string) error {
	entries, err := ListArchive(p)
	if err != nil {
		return err
	}
	var haveBin, haveYAML bool
	for _, e := range entries {
		switch e.Name {
		case bin:
			haveBin = e.Mode&0o111 != 0
		case "plugin.yaml":
			haveYAML = true
		}
	}
	if !haveYAML {
		return fmt.Errorf("%s: no plugin.yaml at the archive root", p)
	}
	if !haveBin {
		return fmt.Errorf("%s: no executable %s, where plugin.yaml points", p, bin)
	}
	return nil
}
