package checks

import (
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/rest"
)

// TestNewIdentity: the identity carries the groups the API server gives it
// (dryrun.InstallerGroups) and is named as messages name it.
func TestNewIdentity(t *testing.T) {
	sa, err := NewIdentity("system:serviceaccount:argocd:argocd-application-controller", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"system:authenticated", "system:serviceaccounts", "system:serviceaccounts:argocd"}; !slices.Equal(sa.Groups, want) {
		t.Errorf("groups %v, want %v", sa.Groups, want)
	}
	if sa.String() != "ServiceAccount argocd/argocd-application-controller" {
		t.Errorf("String %q", sa)
	}
	u, err := NewIdentity("deployer", []string{"ci", "ci"})
	if err != nil || !slices.Equal(u.Groups, []string{"ci", "system:authenticated"}) || u.String() != "user deployer" {
		t.Errorf("user: %+v, %v", u, err)
	}
	if _, err := NewIdentity("system:serviceaccount:ns", nil); err == nil {
		t.Error("a malformed ServiceAccount accepted")
	}
}

// TestInstallerConfig: the seam of the dry-run checks. Without --installer
// it is the run's own config; with it, the config impersonating the
// installer (user and groups) when every impersonation is allowed, else a
// skip naming the impersonate permission that is missing.
func TestInstallerConfig(t *testing.T) {
	base := &rest.Config{Host: "https://127.0.0.1:6443"}
	k := newKit(t).withREST(base)
	env := k.env()
	if cfg, err := env.InstallerConfig(t.Context()); err != nil || cfg != base {
		t.Fatalf("without --installer: %v, %v", cfg, err)
	}
	id, _ := NewIdentity("system:serviceaccount:argocd:argocd-application-controller", nil)
	env.Installer = &id
	var asked []string
	allow(k.Kube, func(a *authorizationv1.ResourceAttributes) bool {
		asked = append(asked, a.Verb+" "+a.Resource+" "+a.Namespace+"/"+a.Name)
		return a.Resource != "groups" || a.Name != "system:serviceaccounts:argocd"
	})
	if _, err := env.InstallerConfig(t.Context()); err == nil {
		t.Fatal("impersonation refused, yet a config")
	} else if r := resolve(Meta{ID: "x"}, Result{}, err); r.Status != StatusSkip || !strings.Contains(r.Message, "no permission to impersonate groups system:serviceaccounts:argocd") {
		t.Errorf("refused impersonation resolves to %s %q", r.Status, r.Message)
	}
	if !slices.Contains(asked, "impersonate serviceaccounts argocd/argocd-application-controller") {
		t.Errorf("reviews sent: %v", asked)
	}
	k = newKit(t).withREST(base)
	env = k.env()
	env.Installer = &id
	allow(k.Kube, func(*authorizationv1.ResourceAttributes) bool { return true })
	cfg, err := env.InstallerConfig(t.Context())
	if err != nil || cfg.Impersonate.UserName != id.User || !slices.Equal(cfg.Impersonate.Groups, id.Groups) || base.Impersonate.UserName != "" {
		t.Fatalf("allowed: %+v, %v", cfg, err)
	}
}
