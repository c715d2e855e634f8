package plan

// Given is a planned install as it was given, once read: its names, its
// chart, Helm's merge of its values (-f, --set and --set-string, the
// shortcut flags over them), the Argo CD range and where each value came
// from. Everything else of Install is derived from it (Given.Install), so
// that a bundle records it as it is (the "plan" of the bundle's spec, its
// values and flags redacted) and a replay derives the same plan again
// without reading a file.
type Given struct {
	RuntimeName       string `json:"runtimeName"`
	Namespace         string `json:"namespace"`
	NamespaceExplicit bool   `json:"namespaceExplicit,omitempty"`
	ReleaseName       string `json:"releaseName"`
	Chart             string `json:"chart,omitempty"`
	ChartVersion      string `json:"chartVersion,omitempty"`
	// Values are the merged values the chart renders with
	// (Install.RenderValues); ValuesGiven is whether values were given
	// (-f, --set, --set-string): without, Values hold what the shortcut
	// flags set, and Install.Values is nil.
	Values      map[string]any `json:"values,omitempty"`
	ValuesGiven bool           `json:"valuesGiven,omitempty"`
	// ArgoCDVersionRange is Install.ArgoCDVersionRange.
	ArgoCDVersionRange string `json:"argoCDVersionRange,omitempty"`
	// Sources say where each value came from (Install.SourceIndex).
	Sources SourceIndex `json:"sources,omitzero"`
	// Shortcuts apply over Values as New applies them; zero when Values
	// already hold them (Install.Given). Only values read without them
	// have any: those of a bundle of the first format, which recorded its
	// shortcut flags beside values merged without them.
	Shortcuts Shortcuts `json:"-"`
}

// Given returns what in is derived from: Given.Install derives in again.
func (in Install) Given() Given {
	return Given{
		RuntimeName: in.RuntimeName, Namespace: in.Namespace, NamespaceExplicit: in.NamespaceExplicit, ReleaseName: in.ReleaseName,
		Chart: in.Chart, ChartVersion: in.ChartVersion, Values: in.RenderValues, ValuesGiven: in.HasValues(),
		ArgoCDVersionRange: in.ArgoCDVersionRange, Sources: in.SourceIndex(),
	}
}

// Install derives the planned install of g as New derives it from the
// flags (Replayed: g.Shortcuts over g.Values), with the sources g says.
// The error is New's (an unknown access mode).
func (g Given) Install() (Install, error) {
	in, err := Replayed(Flags{RuntimeName: g.RuntimeName, Namespace: g.Namespace, NamespaceExplicit: g.NamespaceExplicit,
		ReleaseName: g.ReleaseName, Chart: g.Chart, ChartVersion: g.ChartVersion, Shortcuts: g.Shortcuts}, g.Values, g.ValuesGiven)
	if err != nil {
		return Install{}, err
	}
	in.ArgoCDVersionRange = g.ArgoCDVersionRange
	return in.WithSourceIndex(g.Sources), nil
}
