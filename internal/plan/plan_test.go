package plan

import (
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/values"
)

func TestNewDefaultsAndDerivation(t *testing.T) {
	in, err := New(Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if in.RuntimeName != DefaultRuntimeName || in.Namespace != DefaultNamespace || in.ReleaseName != DefaultReleaseName {
		t.Errorf("defaults: %+v", in)
	}
	if in.AccessMode != AccessTunnel || in.Values != nil || in.RenderValues == nil {
		t.Errorf("no values: mode %q values %v render %v", in.AccessMode, in.Values, in.RenderValues)
	}

	in, err = New(Flags{SetValues: []string{"global.runtime.name=rt1", "global.runtime.httpRoute.enabled=true", "global.runtime.httpRoute.hostnames[0]=h.example"}})
	if err != nil {
		t.Fatal(err)
	}
	if in.RuntimeName != "rt1" || in.AccessMode != AccessServiceMesh || !in.HTTPRoute || in.IngressURL != "https://h.example" {
		t.Errorf("derived: %+v", in)
	}

	in, err = New(Flags{RuntimeName: "explicit", SetValues: []string{"global.runtime.name=rt1"}, Shortcuts: values.Shortcuts{IngressHost: "a.example"}})
	if err != nil {
		t.Fatal(err)
	}
	if in.RuntimeName != "explicit" || in.AccessMode != AccessIngress || in.IngressHost != "a.example" {
		t.Errorf("flags win: %+v", in)
	}
	if _, err := New(Flags{Shortcuts: values.Shortcuts{AccessMode: "bogus"}}); err == nil {
		t.Error("unknown access mode accepted")
	}
}
