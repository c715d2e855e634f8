package checks

import (
	"errors"
	"strings"
	"testing"
)

func TestCatalogueIsValid(t *testing.T) {
	r, err := NewRegistry(All())
	if err != nil {
		t.Fatalf("NewRegistry(All()) = %v", err)
	}
	for _, c := range r.Checks() {
		if !strings.HasSuffix(c.Docs(), "#"+c.ID) {
			t.Errorf("%s: docs URL %s does not point at its anchor", c.ID, c.Docs())
		}
		if c.Fixable && c.Plan == nil {
			t.Errorf("%s: fixable without a Plan", c.ID)
		}
	}
	if r.Checks()[0].ID != "cluster-reachable" || !r.Checks()[0].Fatal {
		t.Fatal("cluster-reachable must come first and be fatal")
	}
}

func TestNewRegistryRejects(t *testing.T) {
	ok := stub("a", returning(Pass(""), nil))
	tests := map[string][]Check{
		"duplicate ID":           {ok, ok},
		"camelCase ID":           {stub("badId", returning(Pass(""), nil))},
		"unknown prerequisite":   {stub("b", returning(Pass(""), nil), "nope")},
		"prerequisite after use": {stub("b", returning(Pass(""), nil), "a"), ok},
		"no title": {func() Check {
			c := ok
			c.Title = ""
			return c
		}()},
	}
	for name, list := range tests {
		if _, err := NewRegistry(list); err == nil {
			t.Errorf("NewRegistry(%s) = nil error", name)
		}
	}
}

func TestSelect(t *testing.T) {
	r, err := NewRegistry(All())
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Select(ModePre, []string{"node-resources"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "cluster-reachable" || got[1].ID != "node-resources" {
		t.Fatalf("Select(--only node-resources) = %v, want cluster-reachable, node-resources", ids(got))
	}
	got, err = r.Select(ModePre, nil, []string{"helm-version"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got {
		if c.ID == "helm-version" {
			t.Fatal("--skip helm-version still selected it")
		}
	}
	_, err = r.Select(ModePre, []string{"node-resource"}, nil)
	var unknown *UnknownIDError
	if !errors.As(err, &unknown) || !strings.Contains(err.Error(), `did you mean "node-resources"`) {
		t.Fatalf("Select(unknown) = %v, want UnknownIDError with a suggestion", err)
	}
	if _, err := r.Select(ModePre, nil, []string{"cluster-reachable"}); err == nil {
		t.Fatal("--skip cluster-reachable accepted")
	}
}

func ids(cs []Check) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// TestInClusterChecks: the gate leaves out the checks that judge the
// workstation (helm-version; cluster-admin unless the installer is named)
// and makes platform-reachable a fail that makes the install fail.
func TestInClusterChecks(t *testing.T) {
	all := All()
	kept, left := InClusterChecks(all, false)
	if len(kept) != len(all)-2 || left["helm-version"] == "" || left["cluster-admin"] == "" {
		t.Fatalf("kept %d of %d, left %v", len(kept), len(all), left)
	}
	kept, left = InClusterChecks(all, true)
	if len(kept) != len(all)-1 || left["cluster-admin"] != "" {
		t.Fatalf("with the installer: kept %d of %d, left %v", len(kept), len(all), left)
	}
	for _, c := range kept {
		if c.ID == "platform-reachable" && (c.Severity != SeverityFail || c.Impact != ImpactInstallFails) {
			t.Errorf("platform-reachable in the cluster: %s, %s", c.Severity, c.Impact)
		}
	}
	for _, c := range All() {
		if c.ID == "platform-reachable" && c.Severity != SeverityWarn {
			t.Error("InClusterChecks changed the registry's check")
		}
	}
}
