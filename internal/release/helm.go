package release

import (
	"errors"
	"fmt"
	"os"
	"regexp"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"
)

// HelmPlatformCommand mirrors Helm 3.4-3.17's PlatformCommand (os, arch,
// command; `args` needs Helm 3.18).
type HelmPlatformCommand struct {
	OS      string `json:"os"`
	Arch    string `json:"arch"`
	Command string `json:"command"`
}

// HelmPluginMetadata mirrors the fields of Helm 3's legacy plugin.yaml that
// Helm 3.4 to 3.17 know (helm/helm pkg/plugin/plugin.go Metadata). Decoding
// into it strictly is what those Helm versions do, so a key they do not know
// fails here as it would fail there (https://helm.sh/docs/topics/plugins/).
type HelmPluginMetadata struct {
	Name            string                `json:"name"`
	Version         string                `json:"version"`
	Usage           string                `json:"usage"`
	Description     string                `json:"description"`
	PlatformCommand []HelmPlatformCommand `json:"platformCommand"`
	Command         string                `json:"command"`
	IgnoreFlags     bool                  `json:"ignoreFlags"`
	Hooks           map[string]string     `json:"hooks"`
	Downloaders     []any                 `json:"downloaders"`
}

var helmPluginName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ReadHelmPlugin reads a plugin.yaml and checks that both Helm 3 (strict
// decoding since 3.4, no 3.18-only keys) and Helm 4 (legacy schema: no
// apiVersion, not both platformCommand and command, version strict SemVer
// without "v" since 4.1.4) load it (https://helm.sh/docs/topics/plugins/; helm/helm v4 pkg/plugin).
func ReadHelmPlugin(path string) (HelmPluginMetadata, error) {
	var m HelmPluginMetadata
	data, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		return m, fmt.Errorf("Helm 3 (strict decoding) cannot load %s: %w", path, err)
	}
	var errs []error
	if !helmPluginName.MatchString(m.Name) {
		errs = append(errs, fmt.Errorf("invalid plugin name %q: must match %s", m.Name, helmPluginName))
	}
	if _, err := semver.StrictNewVersion(m.Version); err != nil {
		errs = append(errs, fmt.Errorf("version %q is not strict SemVer without a leading v (Helm >= 4.1.4 refuses it): %w", m.Version, err))
	}
	if len(m.PlatformCommand) > 0 && m.Command != "" {
		errs = append(errs, errors.New("both platformCommand and command are set (an error in Helm 4)"))
	}
	if len(m.PlatformCommand) == 0 && m.Command == "" {
		errs = append(errs, errors.New("no platformCommand: `helm <name>` would have nothing to run"))
	}
	if m.IgnoreFlags {
		errs = append(errs, errors.New("ignoreFlags: true drops every argument given to the plugin"))
	}
	return m, errors.Join(errs...)
}
