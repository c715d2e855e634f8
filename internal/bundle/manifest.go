package bundle

import "time"

// FormatVersion is the version of the bundle format this plugin writes and
// the newest it reads.
const FormatVersion = 1

// MaxSize bounds a bundle's entries, uncompressed and together: 64 MiB.
// Writing a larger bundle fails, and so does opening one.
const MaxSize = 64 << 20

// Names of a bundle's entries.
const (
	manifestEntry = "manifest.json"
	apiEntry      = "api.json"
	hostEntry     = "host.json"
	// ValuesEntry holds the effective chart values (YAML), redacted.
	ValuesEntry = "values.yaml"
	// ChartEntry holds the packaged chart the run rendered (helm package).
	ChartEntry = "chart.tgz"
	// SourcesEntry holds where each value of the run came from (JSON: the
	// values files' lines, the flags, redacted), so that a replay anchors
	// its findings where the live run did.
	SourcesEntry = "sources.json"
	// WaiversEntry holds the --waivers file of the run.
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
	// Flags are the run's flags that shape the checks, as given.
	Flags []Flag `json:"flags"`
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
