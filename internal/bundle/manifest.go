package bundle

import (
	"encoding/json"
	"time"
)

// FormatVersion is the version of the bundle format this plugin writes and
// the newest it reads. Format 2 records the compiled run (Manifest.Spec);
// format 1 recorded the command line (Manifest.Flags), the effective values
// (ValuesEntry) and the --waivers file (WaiversEntry), and still replays.
const FormatVersion = 2

// MaxSize bounds a bundle's entries, uncompressed and together: 64 MiB.
// Writing a larger bundle fails, and so does opening one.
const MaxSize = 64 << 20

// Names of a bundle's entries.
const (
	manifestEntry = "manifest.json"
	apiEntry      = "api.json"
	hostEntry     = "host.json"
	// ValuesEntry holds the effective chart values (YAML), redacted, in a
	// bundle of format 1 (format 2 keeps them in the spec).
	ValuesEntry = "values.yaml"
	// ChartEntry holds the packaged chart the run rendered (helm package).
	ChartEntry = "chart.tgz"
	// WaiversEntry holds the --waivers file of the run, in a bundle of
	// format 1 (format 2 keeps the parsed waivers in the spec).
	WaiversEntry = "waivers.yaml"
)

// Manifest describes a bundle: manifest.json.
type Manifest struct {
	// Format is the bundle format version (FormatVersion when written).
	Format int `json:"format"`
	// Plugin is the version of the plugin that wrote it.
	Plugin string `json:"plugin"`
	// Time is when the run started (UTC).
	Time time.Time `json:"time"`
	// Context and Server name the cluster as the kubeconfig did;
	// ServerVersion is its /version gitVersion ("" when unread).
	Context       string `json:"context"`
	Server        string `json:"server"`
	ServerVersion string `json:"serverVersion,omitempty"`
	// Mode is the run's mode: pre-install, post-install or upgrade.
	Mode string `json:"mode"`
	// Spec is the run as it was compiled (internal/run's Spec, versioned
	// there): what a replay runs again. Format 2.
	Spec json.RawMessage `json:"spec,omitempty"`
	// Flags are the run's flags that shaped the checks, as given: what a
	// bundle of format 1 kept instead of Spec.
	Flags []Flag `json:"flags,omitempty"`
	// ChartError is why the run's chart could not be loaded ("" when it
	// was, or when the run used none): a replay reports the same.
	ChartError string `json:"chartError,omitempty"`
	// Entries maps every other entry's name to the sha256 (hex) of its
	// content.
	Entries map[string]string `json:"entries"`
}

// Flag is one command-line flag as given: its name and every value.
type Flag struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// Flag returns the last value the recorded run gave the named flag (the
// one that took effect), or "" when it gave none.
func (m Manifest) Flag(name string) string {
	for _, f := range m.Flags {
		if f.Name == name && len(f.Values) > 0 {
			return f.Values[len(f.Values)-1]
		}
	}
	return ""
}
