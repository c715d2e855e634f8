package plan

import (
	"reflect"
	"testing"
)

// TestGivenDerivesTheSamePlan: the plan derived again from what it was
// given (values from a --set, a shortcut over them, names, chart, Argo CD
// range) is the plan, source by source; a shortcut recorded beside values
// read without it applies over them.
func TestGivenDerivesTheSamePlan(t *testing.T) {
	in, err := New(Flags{RuntimeName: "rt-1", Namespace: "team-a", NamespaceExplicit: true, ReleaseName: "rel", Chart: "./chart", ChartVersion: "0.30.0",
		SetValues: []string{"global.codefresh.accountId=acc"}, Shortcuts: Shortcuts{IngressHost: "rt.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	in.ArgoCDVersionRange = ">=2.12"
	g := in.Given()
	if !g.ValuesGiven || g.Shortcuts != (Shortcuts{}) || g.Sources.RuntimeName.Flag != "--runtime-name rt-1" {
		t.Errorf("given %+v", g)
	}
	again, err := g.Install()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, in) {
		t.Errorf("derived again:\n%+v\nwant\n%+v", again, in)
	}

	noValues, err := New(Flags{Shortcuts: Shortcuts{ExistingArgoCD: true}})
	if err != nil {
		t.Fatal(err)
	}
	if g := noValues.Given(); g.ValuesGiven || g.Values == nil {
		t.Errorf("shortcuts alone: %+v", g)
	} else if again, err := g.Install(); err != nil || again.HasValues() || !again.ExistingArgoCD {
		t.Errorf("shortcuts alone, derived again: %+v %v", again, err)
	}

	recorded := Given{RuntimeName: DefaultRuntimeName, Namespace: DefaultNamespace, ReleaseName: DefaultReleaseName,
		Values: map[string]any{}, Shortcuts: Shortcuts{AccessMode: "ingress", IngressHost: "h.example"}}
	if got, err := recorded.Install(); err != nil || got.AccessMode != AccessIngress || got.IngressHost != "h.example" {
		t.Errorf("a shortcut over values read without it: %+v %v", got, err)
	}
	if _, err := (Given{Shortcuts: Shortcuts{AccessMode: "bogus"}}).Install(); err == nil {
		t.Error("an unknown access mode derives a plan")
	}
}
