// Package chart loads the gitops-runtime chart the way `helm install` takes
// it and renders it the way `helm install` would, with Helm's own SDK
// (helm.sh/helm/v3/pkg/action): ChartPathOptions.LocateChart with Helm's
// registry client, getters and HELM_* settings (cache, repositories,
// registry credentials) to find or pull the chart, pkg/chart/loader to load
// it, and action.Install in client-only dry-run mode, given the cluster's
// Kubernetes version and API versions, to render it.
package chart

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/action"
	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/release"
	"sigs.k8s.io/yaml"
)

// Source says where the chart comes from.
type Source struct {
	// Ref is the chart as `helm install` takes it: a directory, a .tgz, an
	// oci:// reference, or repo/name from the Helm repositories file.
	Ref string
	// Version is a version or constraint (helm --version); "" = latest.
	Version string
	// Timeout bounds locating and pulling the chart (--request-timeout);
	// 0 means 30 seconds.
	Timeout time.Duration
	// DialContext dials registry connections (the plugin's --connect-to
	// rules); nil = net.Dialer.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Settings are Helm's environment (HELM_CACHE_HOME, HELM_CONFIG_HOME,
	// HELM_REGISTRY_CONFIG, HELM_REPOSITORY_CONFIG, ...); nil = cli.New().
	Settings *cli.EnvSettings
	// Archive, when set, is the packaged chart itself (`helm package`'s
	// .tgz: the chart a bundle kept); Ref then only names it, and nothing
	// is located or pulled.
	Archive []byte
}

// DefaultTimeout bounds a chart pull when Source.Timeout is 0.
const DefaultTimeout = 30 * time.Second

// Load locates the chart (pulling it into Helm's repository cache when it
// is remote, as `helm install` does) and loads it with its dependencies.
// The error says what could not be loaded and why, in one line.
func Load(ctx context.Context, src Source) (*helmchart.Chart, error) {
	if src.Archive != nil {
		c, err := loader.LoadArchive(bytes.NewReader(src.Archive))
		if err != nil {
			return nil, fmt.Errorf("chart %s: %s", src.Ref, oneLine(err.Error()))
		}
		return c, nil
	}
	settings := src.Settings
	if settings == nil {
		settings = cli.New()
	}
	timeout := src.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	dial := src.DialContext
	if dial == nil {
		d := &net.Dialer{Timeout: timeout}
		dial = d.DialContext
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DialContext = dial
	hc := &http.Client{Transport: transport, Timeout: timeout}
	rc, err := registry.NewClient(
		registry.ClientOptCredentialsFile(settings.RegistryConfig),
		registry.ClientOptHTTPClient(hc),
		registry.ClientOptWriter(io.Discard),
		registry.ClientOptEnableCache(true),
	)
	if err != nil {
		return nil, fmt.Errorf("chart %s: registry client: %w", src.Ref, err)
	}
	inst := action.NewInstall(&action.Configuration{})
	inst.SetRegistryClient(rc)
	inst.ChartPathOptions.Version = src.Version

	type located struct {
		path string
		err  error
	}
	ch := make(chan located, 1)
	go func() {
		p, err := inst.ChartPathOptions.LocateChart(src.Ref, settings)
		ch <- located{p, err}
	}()
	var loc located
	select {
	case loc = <-ch:
	case <-ctx.Done():
		return nil, fmt.Errorf("chart %s: not pulled within %s", src.Ref, timeout)
	}
	if loc.err != nil {
		return nil, fmt.Errorf("chart %s: %s", src.Ref, oneLine(loc.err.Error()))
	}
	c, err := loader.Load(loc.path)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %s", src.Ref, oneLine(err.Error()))
	}
	return c, nil
}

// Capabilities are what the cluster tells a real install: its version
// ("v1.30.2") and API versions ("apps/v1", "apps/v1/Deployment", ...; as
// Helm's action.GetVersionSet builds them).
type Capabilities struct {
	KubeVersion string
	APIVersions []string
}

// Object is one object of the rendered release.
type Object struct {
	APIVersion string
	Kind       string
	// Namespace is the one in the manifest; "" means the release namespace
	// for namespaced kinds (Helm's kube client fills it in).
	Namespace string
	Name      string
	// Template is the chart template that rendered it.
	Template string
	// Hook is true for hook objects (helm.sh/hook); DeletePolicies are
	// their helm.sh/hook-delete-policy values, Events their helm.sh/hook
	// events and Weight their helm.sh/hook-weight, as Helm parsed them
	// into the release's hooks (release.Hook; pkg/releaseutil
	// manifest_sorter.go, https://helm.sh/docs/topics/charts_hooks/).
	Hook           bool
	DeletePolicies []string
	Events         []release.HookEvent
	Weight         int
	// Doc is the object's rendered YAML document; JSON is the same
	// document converted once, for decoding without parsing YAML again.
	Doc  string
	JSON []byte
}

// Rendering is the rendered release.
type Rendering struct {
	ChartName, ChartVersion string
	// Objects are the release's objects (templates, CRDs rendered as
	// templates included; the chart's crds/ directory excluded, as Helm
	// skips existing ones), in install order.
	Objects []Object
	// Hooks are the hook objects.
	Hooks []Object
	// Manifest is the release's rendered YAML, its hooks' documents
	// appended, as `helm template` prints it (documents separated by "---").
	Manifest string
	// ValidationHooks is what the chart's pre-install validation hooks will
	// do, read from the rendered hook objects.
	ValidationHooks Hooks
	// KubeVersions are the kubeVersion constraints of the rendered chart
	// and of each subchart it deploys (disabled ones dropped, as Helm drops
	// them), parent first.
	KubeVersions []KubeVersionRule
	// ChartImages are the images the Chart.yaml annotations of the chart
	// and of the subcharts it deploys list (artifacthub.io/images).
	ChartImages []ChartImage
	// releaseManifest is the release's manifest without its hooks, as
	// Helm stores it (what IgnoredValues compares).
	releaseManifest string
}

// Render renders c with vals as `helm install RELEASE -n NAMESPACE` would
// (action.Install, client-only dry run, with the cluster's capabilities).
// On a template failure the error is *RenderError carrying the chart's own
// message.
func Render(ctx context.Context, c *helmchart.Chart, releaseName, namespace string, vals map[string]any, caps Capabilities) (*Rendering, error) {
	return renderWith(ctx, withoutUnreadFiles(c, vals, false), releaseName, namespace, vals, caps)
}

func renderWith(ctx context.Context, c *helmchart.Chart, releaseName, namespace string, vals map[string]any, caps Capabilities) (*Rendering, error) {
	rel, err := installRelease(ctx, c, releaseName, namespace, vals, caps)
	if err != nil {
		return nil, err
	}
	return rendering(c.Metadata, rel)
}

// installRelease is the release Helm's install action renders (client
// only, a dry run): its manifest and hooks as text, not yet parsed into
// objects (rendering does that), for the callers that compare manifests
// or parse them under another chart's metadata.
func installRelease(ctx context.Context, c *helmchart.Chart, releaseName, namespace string, vals map[string]any, caps Capabilities) (*release.Release, error) {
	inst := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	inst.ClientOnly = true
	inst.DryRun = true
	inst.DryRunOption = "client"
	inst.ReleaseName = releaseName
	inst.Namespace = namespace
	inst.Replace = true
	if caps.KubeVersion != "" {
		kv, err := chartutil.ParseKubeVersion(caps.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("kubernetes version %q: %w", caps.KubeVersion, err)
		}
		inst.KubeVersion = kv
	}
	inst.APIVersions = caps.APIVersions
	if vals == nil {
		vals = map[string]any{}
	}
	rel, err := inst.RunWithContext(ctx, c, copyValues(vals))
	if err != nil {
		return nil, &RenderError{Raw: err.Error()}
	}
	return rel, nil
}

// copyValues deep-copies vals: Helm's dependency processing writes into
// the map it is given, and the plan's values are shared.
func copyValues(vals map[string]any) map[string]any {
	out := make(map[string]any, len(vals))
	for k, v := range vals {
		switch t := v.(type) {
		case map[string]any:
			out[k] = copyValues(t)
		case []any:
			l := make([]any, len(t))
			for i, x := range t {
				if m, ok := x.(map[string]any); ok {
					l[i] = copyValues(m)
				} else {
					l[i] = x
				}
			}
			out[k] = l
		default:
			out[k] = v
		}
	}
	return out
}

func parse(doc string) (Object, bool, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if strings.TrimSpace(doc) == "" {
		return Object{}, false, nil
	}
	// One YAML parse per document: every later reading decodes the JSON.
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		return Object{}, false, fmt.Errorf("rendered manifest: %w", err)
	}
	if err := json.Unmarshal(j, &head); err != nil {
		if string(j) == "null" {
			return Object{}, false, nil
		}
		return Object{}, false, fmt.Errorf("rendered manifest: %w", err)
	}
	if head.Kind == "" {
		return Object{}, false, nil
	}
	o := Object{APIVersion: head.APIVersion, Kind: head.Kind, Name: head.Metadata.Name, Namespace: head.Metadata.Namespace, Doc: doc, JSON: j}
	if i := strings.Index(doc, "# Source: "); i >= 0 {
		line := doc[i+len("# Source: "):]
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		o.Template = strings.TrimSpace(line)
	}
	return o, true, nil
}

// HasHookPolicy reports whether policies include p.
func HasHookPolicy(policies []string, p release.HookDeletePolicy) bool {
	for _, x := range policies {
		if x == string(p) {
			return true
		}
	}
	return false
}

// RenderError is a chart that does not render: Raw is Helm's error, Message
// the chart's own words without template paths.
type RenderError struct{ Raw string }

func (e *RenderError) Error() string { return e.Message() }

// templatePath matches the locations Helm's engine prefixes to a template
// error: `template: gitops-runtime/templates/x.yaml:3:4: executing
// "gitops-runtime/templates/x.yaml" at <fail "...">: error calling fail: `.
var (
	execPrefix = regexp.MustCompile(`(?s)^.*(error calling (fail|required): |execution error at \([^)]*\): )`)
	tplPrefix  = regexp.MustCompile(`template: [^\s:]+(:\d+)*(:\d+)?: (executing "[^"]*" at <[^>]*>: )?`)
)

// Message returns the chart's own message: for `fail`/`required`, the text
// the chart gave; otherwise the innermost error of Helm's engine, without
// template locations, followed by the value expression it failed on when
// that names one ("(in .Values.global.runtime.ingress.hosts)").
func (e *RenderError) Message() string {
	s := oneLine(e.Raw)
	if m := execPrefix.FindStringIndex(s); m != nil {
		return strings.TrimSpace(s[m[1]:])
	}
	if all := atExpr.FindAllStringSubmatchIndex(s, -1); len(all) > 0 {
		last := all[len(all)-1]
		expr, rest := s[last[2]:last[3]], strings.TrimSpace(s[last[1]:])
		if v := valuesRef.FindString(expr); v != "" {
			return rest + " (in " + v + ")"
		}
		return rest
	}
	s = tplPrefix.ReplaceAllString(s, "")
	return strings.TrimSpace(s)
}

var (
	atExpr    = regexp.MustCompile(`executing "[^"]*" at <([^>]*)>: `)
	valuesRef = regexp.MustCompile(`\.Values(\.[\w-]+)+`)
)

// IsRenderError reports whether err is a chart that does not render.
func IsRenderError(err error) (*RenderError, bool) {
	var re *RenderError
	ok := errors.As(err, &re)
	return re, ok
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
