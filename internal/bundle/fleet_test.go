package bundle

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeFleet records two clusters' bundles (recordRun) and writes a fleet
// archive of them and of a context with no bundle; it returns its path.
func writeFleet(t *testing.T) string {
	t.Helper()
	w, err := NewFleetWriter(filepath.Join(t.TempDir(), "fleet.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	files := map[string]string{}
	m := FleetManifest{Plugin: "test", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Mode: "pre-install", Flags: []Flag{{Name: "only", Values: []string{"a"}}}}
	for _, ctx := range []string{"prod/eu", "dev"} {
		src, _, _ := recordRun(t)
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := w.Path()
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		files[ctx] = p
		m.Clusters = append(m.Clusters, FleetCluster{Context: ctx, Bundle: FleetEntryName(ctx)})
	}
	m.Clusters = append(m.Clusters, FleetCluster{Context: "broken", Error: "kubeconfig context broken: no such file"})
	if err := w.Finish(m, files); err != nil {
		t.Fatal(err)
	}
	return w.path
}

func TestFleetArchiveRoundTrip(t *testing.T) {
	path := writeFleet(t)
	if !IsFleet(path) {
		t.Fatal("IsFleet: false for a fleet archive")
	}
	single, _, _ := recordRun(t)
	if IsFleet(single) {
		t.Error("IsFleet: true for a single bundle")
	}
	if entries, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".fleet.tgz.tmp-*")); len(entries) != 0 {
		t.Errorf("temporary files left beside the archive: %v", entries)
	}
	f, err := OpenFleet(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := f.Manifest
	if m.Format != FleetFormatVersion || m.Kind != "fleet" || m.Mode != "pre-install" || m.Plugin != "test" || len(m.Clusters) != 3 {
		t.Fatalf("manifest %+v", m)
	}
	var order []string
	for _, c := range m.Clusters {
		order = append(order, c.Context)
	}
	if strings.Join(order, ",") != "prod/eu,dev,broken" {
		t.Errorf("contexts %v, want the run's order", order)
	}
	if c := m.Clusters[0]; c.Bundle != "clusters/prod%2Feu.tar.gz" || len(c.SHA256) != 64 {
		t.Errorf("cluster 0: %+v", c)
	}
	for _, c := range m.Clusters[:2] {
		b, err := f.Bundle(c)
		if err != nil {
			t.Fatalf("%s: %v", c.Context, err)
		}
		if b.Manifest.Context != "ctx" || b.Getenv("HELM_BIN") != "/opt/helm" {
			t.Errorf("%s: bundle manifest %+v", c.Context, b.Manifest)
		}
	}
	if c := m.Clusters[2]; c.Bundle != "" || c.Error == "" {
		t.Errorf("cluster with no bundle: %+v", c)
	}
	if _, err := f.Bundle(m.Clusters[2]); err == nil {
		t.Error("Bundle of a context with none: no error")
	}
	dir := f.dir
	f.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Close left %s", dir)
	}
}

func TestFleetEntryName(t *testing.T) {
	for ctx, want := range map[string]string{
		"kind-dev":                   "clusters/kind-dev.tar.gz",
		"arn:aws:eks:eu/prod":        "clusters/arn%3Aaws%3Aeks%3Aeu%2Fprod.tar.gz",
		"..":                         "clusters/%2E..tar.gz",
		"a b@c":                      "clusters/a%20b%40c.tar.gz",
		"../../etc/passwd":           "clusters/%2E.%2F..%2Fetc%2Fpasswd.tar.gz",
		"user@cluster.example.com_1": "clusters/user%40cluster.example.com_1.tar.gz",
	} {
		if got := FleetEntryName(ctx); got != want {
			t.Errorf("FleetEntryName(%q) = %q, want %q", ctx, got, want)
		}
	}
}

func fleetManifestJSON(format int, clusters ...FleetCluster) string {
	b, _ := json.Marshal(FleetManifest{Format: format, Kind: "fleet", Clusters: clusters})
	return string(b)
}

func TestOpenFleetRefusesADamagedArchive(t *testing.T) {
	good := writeFleet(t)
	whole, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.tgz")
	if err := os.WriteFile(cut, whole[:len(whole)*2/3], 0o600); err != nil {
		t.Fatal(err)
	}
	inner := "inner bundle bytes"
	entry := FleetCluster{Context: "a", Bundle: FleetEntryName("a"), SHA256: sum(inner)}
	for _, tt := range []struct {
		name, path, want string
	}{
		{"newer format", writeTar(t, [][2]string{{FleetManifestEntry, fleetManifestJSON(FleetFormatVersion+1, entry)}, {entry.Bundle, inner}}), fmt.Sprintf("fleet format version %d is newer than this plugin reads (%d)", FleetFormatVersion+1, FleetFormatVersion)},
		{"tampered bundle", writeTar(t, [][2]string{{FleetManifestEntry, fleetManifestJSON(1, entry)}, {entry.Bundle, inner + "x"}}), "does not match its sha256 in fleet.json"},
		{"missing bundle", writeTar(t, [][2]string{{FleetManifestEntry, fleetManifestJSON(1, entry)}}), "listed in fleet.json is missing"},
		{"unlisted entry", writeTar(t, [][2]string{{FleetManifestEntry, fleetManifestJSON(1, entry)}, {entry.Bundle, inner}, {"clusters/x.tar.gz", "x"}}), "entry clusters/x.tar.gz is not listed"},
		{"twice", writeTar(t, [][2]string{{FleetManifestEntry, fleetManifestJSON(1, entry)}, {entry.Bundle, inner}, {entry.Bundle, inner}}), "appears twice"},
		{"manifest not first", writeTar(t, [][2]string{{entry.Bundle, inner}, {FleetManifestEntry, fleetManifestJSON(1, entry)}}), "no fleet.json first"},
		{"no kind", writeTar(t, [][2]string{{FleetManifestEntry, `{"format":1}`}}), "no format version or kind"},
		{"truncated", cut, "truncated"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := OpenFleet(tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("OpenFleet: %v, want one line with %q", err, tt.want)
			}
			if f != nil {
				t.Error("OpenFleet returned an archive with its error")
			}
		})
	}
	// A bundle inside whose own manifest is damaged: the error names the
	// context, not a temporary file.
	t.Run("a damaged bundle inside", func(t *testing.T) {
		bad := writeTar(t, [][2]string{{manifestEntry, manifestJSON(1, map[string]string{apiEntry: sum("[]")})}, {apiEntry, "[]"}, {"extra", "x"}})
		b, err := os.ReadFile(bad)
		if err != nil {
			t.Fatal(err)
		}
		e := FleetCluster{Context: "a", Bundle: FleetEntryName("a"), SHA256: sum(string(b))}
		p := writeTar(t, [][2]string{{FleetManifestEntry, fleetManifestJSON(1, e)}, {e.Bundle, string(b)}})
		f, err := OpenFleet(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, err = f.Bundle(e)
		if err == nil || !strings.Contains(err.Error(), "bundle "+p+": context a's bundle: entry extra is not listed") {
			t.Errorf("Bundle: %v", err)
		}
	})
	if f, err := OpenFleet(good); err != nil {
		t.Errorf("a whole archive: %v", err)
	} else {
		f.Close()
	}
}
