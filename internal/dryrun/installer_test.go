package dryrun

import (
	"slices"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
)

// TestInstallerGroups: a ServiceAccount gets the groups the API server
// gives it, every identity system:authenticated, each group once and
// sorted; a malformed name is refused.
func TestInstallerGroups(t *testing.T) {
	sa, err := InstallerGroups("system:serviceaccount:argocd:argocd-application-controller", nil)
	if want := []string{"system:authenticated", "system:serviceaccounts", "system:serviceaccounts:argocd"}; err != nil || !slices.Equal(sa, want) {
		t.Errorf("ServiceAccount: %v, %v, want %v", sa, err, want)
	}
	u, err := InstallerGroups("deployer", []string{"ci", "ci"})
	if err != nil || !slices.Equal(u, []string{"ci", "system:authenticated"}) {
		t.Errorf("user: %v, %v", u, err)
	}
	for bad, want := range map[string]string{
		"":                                  "--installer: empty user name",
		"system:serviceaccount:ns":          `--installer "system:serviceaccount:ns": a ServiceAccount is system:serviceaccount:NAMESPACE:NAME`,
		"system:serviceaccount:a:b:c":       `--installer "system:serviceaccount:a:b:c": a ServiceAccount is system:serviceaccount:NAMESPACE:NAME`,
		"system:serviceaccount:Bad_NS:x":    `--installer "system:serviceaccount:Bad_NS:x": ServiceAccount namespace "Bad_NS": `,
		"system:serviceaccount:ns:Bad_Name": `--installer "system:serviceaccount:ns:Bad_Name": ServiceAccount name "Bad_Name": `,
	} {
		if _, err := InstallerGroups(bad, nil); err == nil || len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
			t.Errorf("%q: %v, want %q...", bad, err, want)
		}
	}
}

func TestServiceAccount(t *testing.T) {
	if ns, name, ok := ServiceAccount("system:serviceaccount:argocd:controller"); !ok || ns != "argocd" || name != "controller" {
		t.Errorf("ServiceAccount = %q %q %v", ns, name, ok)
	}
	if _, _, ok := ServiceAccount("alice"); ok {
		t.Error("a user read as a ServiceAccount")
	}
}

// TestImpersonations: a ServiceAccount is impersonated through
// serviceaccounts in its namespace, a user through users; every group but
// system:authenticated needs its own review.
func TestImpersonations(t *testing.T) {
	got := Impersonations("system:serviceaccount:argocd:controller", []string{"system:authenticated", "system:serviceaccounts"})
	want := []authorizationv1.ResourceAttributes{
		{Verb: "impersonate", Resource: "serviceaccounts", Namespace: "argocd", Name: "controller"},
		{Verb: "impersonate", Resource: "groups", Name: "system:serviceaccounts"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("ServiceAccount: %+v, want %+v", got, want)
	}
	got = Impersonations("alice", nil)
	if want := []authorizationv1.ResourceAttributes{{Verb: "impersonate", Resource: "users", Name: "alice"}}; !slices.Equal(got, want) {
		t.Errorf("user: %+v, want %+v", got, want)
	}
}
