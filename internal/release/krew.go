package release

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"
)

// krew's constants (sigs.k8s.io/krew pkg/constants).
const (
	KrewAPIVersion = "krew.googlecontainertools.github.com/v1alpha2"
	KrewKind       = "Plugin"
	// MaxShortDescription is this project's limit: `kubectl krew search`
	// cuts the column at 50 characters (krew's plugin list; https://krew.sigs.k8s.io/docs/developer-guide/plugin-manifest/).
	MaxShortDescription = 50
)

// KrewPlugin mirrors sigs.k8s.io/krew/pkg/index.Plugin (json tags verbatim).
// Importing krew would drag its Kubernetes dependencies into this module.
type KrewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec KrewPluginSpec `json:"spec"`
}

// KrewPluginSpec mirrors index.PluginSpec.
type KrewPluginSpec struct {
	Version          string         `json:"version,omitempty"`
	ShortDescription string         `json:"shortDescription,omitempty"`
	Description      string         `json:"description,omitempty"`
	Caveats          string         `json:"caveats,omitempty"`
	Homepage         string         `json:"homepage,omitempty"`
	Platforms        []KrewPlatform `json:"platforms,omitempty"`
}

// KrewPlatform mirrors index.Platform.
type KrewPlatform struct {
	URI      string                `json:"uri,omitempty"`
	Sha256   string                `json:"sha256,omitempty"`
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	Files    []KrewFileOperation   `json:"files"`
	Bin      string                `json:"bin"`
}

// KrewFileOperation mirrors index.FileOperation.
type KrewFileOperation struct {
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

var (
	sha256Pattern = regexp.MustCompile(`^[a-f0-9]{64}$`)
	safeName      = regexp.MustCompile(`^[\w-]+$`)
	// windowsForbidden are device names krew refuses as plugin names.
	windowsForbidden = []string{"CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6",
		"COM7", "COM8", "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9"}
	// KrewSupportedPlatforms is validate-krew-manifest's hard-coded os/arch list.
	KrewSupportedPlatforms = []struct{ OS, Arch string }{
		{"windows", "386"}, {"windows", "amd64"}, {"windows", "arm64"},
		{"linux", "386"}, {"linux", "amd64"}, {"linux", "arm"}, {"linux", "arm64"}, {"linux", "ppc64le"},
		{"darwin", "386"}, {"darwin", "amd64"}, {"darwin", "arm64"},
	}
)

// ReadKrewManifest decodes a manifest the way krew does (sigs.k8s.io/yaml,
// not strict) and validates it with the plugin name taken from the file name,
// as validate-krew-manifest does: the file must be <name>.yaml.
func ReadKrewManifest(path string) (KrewPlugin, error) {
	var p KrewPlugin
	if filepath.Ext(path) != ".yaml" {
		return p, fmt.Errorf("expected manifest extension .yaml, got %q", filepath.Ext(path))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return p, err
	}
	if err := yaml.Unmarshal(data, &p); err != nil {
		return p, fmt.Errorf("decoding %s: %w", path, err)
	}
	name := strings.TrimSuffix(filepath.Base(path), ".yaml")
	return p, ValidateKrewPlugin(name, p)
}

// ValidateKrewPlugin applies krew's ValidatePlugin rules, the platform checks
// of validate-krew-manifest (supported os/arch, no overlapping selectors) and
// this project's shortDescription limit. It returns every problem found.
func ValidateKrewPlugin(name string, p KrewPlugin) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if p.APIVersion != KrewAPIVersion {
		add("plugin manifest has apiVersion=%q, not supported in this version of krew (try updating plugin index or install a newer version of krew)", p.APIVersion)
	}
	if p.Kind != KrewKind {
		add("plugin manifest has kind=%q, but only %q is supported", p.Kind, KrewKind)
	}
	if !isSafePluginName(name) {
		add("the plugin name %q is not allowed, must match %q", name, safeName.String())
	}
	if p.Metadata.Name != name {
		add("plugin should be named %q, not %q", name, p.Metadata.Name)
	}
	switch sd := p.Spec.ShortDescription; {
	case sd == "":
		add("should have a short description")
	case strings.ContainsAny(sd, "\r\n"):
		add("should not have line breaks in short description")
	case len([]rune(sd)) > MaxShortDescription:
		add("short description is %d characters; keep it at most %d (kubectl krew search cuts it)", len([]rune(sd)), MaxShortDescription)
	}
	if len(p.Spec.Platforms) == 0 {
		add("should have a platform specified")
	}
	if p.Spec.Version == "" {
		add("should have a version specified")
	} else if err := validateKrewVersion(p.Spec.Version); err != nil {
		add("failed to parse plugin version: %v", err)
	}
	for i, pl := range p.Spec.Platforms {
		if err := validateKrewPlatform(pl); err != nil {
			add("platform[%d] is badly constructed: %v", i, err)
		}
	}
	if err := validatePlatformCoverage(p.Spec.Platforms); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validateKrewVersion is krew's semver.Parse: a leading "v", then strict
// semantic version (k8s.io/apimachinery ParseSemantic).
func validateKrewVersion(s string) error {
	if !strings.HasPrefix(s, "v") {
		return fmt.Errorf("version string %q not starting with 'v'", s)
	}
	_, err := version.ParseSemantic(s)
	return err
}

func isSafePluginName(name string) bool {
	if !safeName.MatchString(name) {
		return false
	}
	for _, w := range windowsForbidden {
		if strings.EqualFold(name, w) {
			return false
		}
	}
	return true
}

func validateKrewPlatform(p KrewPlatform) error {
	switch {
	case p.URI == "":
		return errors.New("`uri` has to be set")
	case p.Sha256 == "":
		return errors.New("`sha256` sum has to be set")
	case !sha256Pattern.MatchString(p.Sha256):
		return fmt.Errorf("`sha256` value %s is not valid, must match pattern %s", p.Sha256, sha256Pattern)
	case p.Bin == "":
		return errors.New("`bin` has to be set")
	}
	if p.Files != nil {
		if len(p.Files) == 0 {
			return errors.New("`files` has to be unspecified or non-empty")
		}
		for _, f := range p.Files {
			if f.From == "" {
				return errors.New("`from` field has to be set")
			}
			if f.To == "" {
				return errors.New("`to` field has to be set")
			}
		}
	}
	sel := p.Selector
	switch {
	case sel == nil:
		return errors.New("nil selector is not supported")
	case sel.MatchLabels == nil && len(sel.MatchExpressions) == 0:
		return errors.New("empty selector is not supported")
	case sel.MatchLabels != nil && len(sel.MatchLabels) == 0:
		return errors.New("`matchLabels` specified but empty")
	case sel.MatchExpressions != nil && len(sel.MatchExpressions) == 0:
		return errors.New("`matchExpressions` specified but empty")
	}
	for k := range sel.MatchLabels {
		if k != "os" && k != "arch" {
			return fmt.Errorf("key %q not supported", k)
		}
	}
	for _, e := range sel.MatchExpressions {
		if e.Key != "os" && e.Key != "arch" {
			return fmt.Errorf("key %q not supported", e.Key)
		}
	}
	return nil
}

// validatePlatformCoverage: every selector matches a supported os/arch pair
// and no pair is matched by two platforms (validate-krew-manifest).
func validatePlatformCoverage(platforms []KrewPlatform) error {
	matchedBy := map[string][]int{}
	for i, p := range platforms {
		if p.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(p.Selector)
		if err != nil {
			return fmt.Errorf("spec.platform[%d]'s selector: %w", i, err)
		}
		found := false
		for _, sp := range KrewSupportedPlatforms {
			if sel.Matches(labels.Set{"os": sp.OS, "arch": sp.Arch}) {
				found = true
				key := sp.OS + "/" + sp.Arch
				matchedBy[key] = append(matchedBy[key], i)
			}
		}
		if !found {
			return fmt.Errorf("spec.platform[%d]'s selector (%v) doesn't match any supported platforms", i, p.Selector)
		}
	}
	for _, sp := range KrewSupportedPlatforms {
		key := sp.OS + "/" + sp.Arch
		if len(matchedBy[key]) > 1 {
			return fmt.Errorf("multiple spec.platforms (at indexes %v) have overlapping selectors that select %s", matchedBy[key], key)
		}
	}
	return nil
}

// RenderKrewTemplate renders a krew-release-bot template (.krew.yaml) the way
// the bot does: text/template with .TagName, where
// {{ addURIAndSha "<url with {{ .TagName }}>" .TagName }} renders the URL and
// emits "uri: <url>\n    sha256: <sum>" (the bot downloads the asset; here
// sha256Of computes it, e.g. from the local archive) and {{ indent N }}
// re-indents such a block.
func RenderKrewTemplate(tmpl []byte, tag string, sha256Of func(uri string) (string, error)) ([]byte, error) {
	data := struct{ TagName string }{tag}
	funcs := template.FuncMap{
		"addURIAndSha": func(uriTmpl, tag string) (string, error) {
			t, err := template.New("uri").Parse(uriTmpl)
			if err != nil {
				return "", err
			}
			var uri bytes.Buffer
			if err := t.Execute(&uri, struct{ TagName string }{tag}); err != nil {
				return "", err
			}
			sum, err := sha256Of(uri.String())
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("uri: %s\n    sha256: %s", uri.String(), sum), nil
		},
		"indent": func(n int, s string) string {
			pad := strings.Repeat(" ", n)
			lines := strings.Split(s, "\n")
			for i := range lines {
				lines[i] = strings.TrimLeft(lines[i], " ")
				if i > 0 {
					lines[i] = pad + lines[i]
				}
			}
			return strings.Join(lines, "\n")
		},
	}
	t, err := template.New(".krew.yaml").Funcs(funcs).Option("missingkey=error").Parse(string(tmpl))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, data); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
