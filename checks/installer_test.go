package checks

import (
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
)

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
	for _, bad := range []string{"", "system:serviceaccount:ns", "system:serviceaccount:Bad_NS:x", "system:serviceaccount:a:b:c"} {
		if _, err := NewIdentity(bad, nil); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestClusterAdminJudgesTheInstaller: with --installer, cluster-admin asks
// SubjectAccessReviews about the installer (user and groups), never a
// SelfSubjectAccessReview about the runner; without the right to create
// them it is a skip naming the permission.
func TestClusterAdminJudgesTheInstaller(t *testing.T) {
	id, _ := NewIdentity("system:serviceaccount:argocd:argocd-application-controller", nil)
	env, kube := fakeEnv(t, "v1.30.0")
	env.Installer = &id
	kube.PrependReactor("create", "selfsubjectaccessreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		t.Error("a SelfSubjectAccessReview was sent: the runner was judged")
		return true, nil, forbiddenErr("selfsubjectaccessreviews")
	})
	kube.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		if sar.Spec.User != id.User || !slices.Equal(sar.Spec.Groups, id.Groups) {
			t.Errorf("review of %q %v", sar.Spec.User, sar.Spec.Groups)
		}
		ra := sar.Spec.ResourceAttributes
		sar.Status.Allowed = ra.Resource != "*" && ra.Resource != "clusterroles"
		return true, sar, nil
	})
	got, err := runClusterAdmin(t.Context(), env)
	if err != nil || got.Status != StatusFail || !strings.Contains(got.Message, "the installer (ServiceAccount argocd/argocd-application-controller) is not cluster-admin; missing 3 of 29") ||
		!strings.Contains(got.Hint, "--serviceaccount=argocd:argocd-application-controller") {
		t.Fatalf("= %s %q (hint %q), %v", got.Status, got.Message, got.Hint, err)
	}

	env, kube = fakeEnv(t, "v1.30.0")
	env.Installer = &id
	kube.PrependReactor("create", "subjectaccessreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, forbiddenErr("subjectaccessreviews")
	})
	out := Run(t.Context(), env, []Check{ClusterAdmin()}, RunOptions{})
	if out[0].Status != StatusSkip || !strings.Contains(out[0].Message, "no permission to create subjectaccessreviews") {
		t.Fatalf("without create subjectaccessreviews: %s %q", out[0].Status, out[0].Message)
	}
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
