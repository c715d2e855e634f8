package checks

import (
	"errors"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

func TestClusterAdmin(t *testing.T) {
	t.Run("cluster-admin", func(t *testing.T) {
		env, kube := fakeEnv(t, "v1.30.0")
		allow(kube, func(a *authorizationv1.ResourceAttributes) bool { return true })
		got, err := runClusterAdmin(t.Context(), env)
		if err != nil || got.Status != StatusPass {
			t.Fatalf("cluster-admin = %s %q, %v; want pass", got.Status, got.Message, err)
		}
	})
	t.Run("namespace admin only", func(t *testing.T) {
		env, kube := fakeEnv(t, "v1.30.0")
		var reviews []authorizationv1.ResourceAttributes
		allow(kube, func(a *authorizationv1.ResourceAttributes) bool {
			reviews = append(reviews, *a)
			return a.Namespace == DefaultNamespace && a.Resource != "*"
		})
		got, err := runClusterAdmin(t.Context(), env)
		if err != nil || got.Status != StatusFail {
			t.Fatalf("cluster-admin = %s %q, %v; want fail", got.Status, got.Message, err)
		}
		for _, w := range []string{"missing 9 of 29", "create,update,delete customresourcedefinitions.apiextensions.k8s.io", "clusterroles.rbac.authorization.k8s.io", "clusterrolebindings"} {
			if !strings.Contains(got.Message, w) {
				t.Errorf("message %q does not contain %q", got.Message, w)
			}
		}
		if strings.Contains(got.Message, "pods") {
			t.Errorf("message %q lists an allowed permission", got.Message)
		}
		if len(reviews) != 1+len(RequiredPermissions()) {
			t.Errorf("sent %d reviews, want %d", len(reviews), 1+len(RequiredPermissions()))
		}
	})
	t.Run("reviews forbidden", func(t *testing.T) {
		env, kube := fakeEnv(t, "v1.30.0")
		kube.PrependReactor("create", "selfsubjectaccessreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, forbiddenErr("selfsubjectaccessreviews")
		})
		got := Run(t.Context(), env, []Check{ClusterAdmin()}, RunOptions{})
		if got[0].Status != StatusSkip || !strings.Contains(got[0].Message, "no permission to create selfsubjectaccessreviews") {
			t.Fatalf("cluster-admin without SSAR rights = %s %q, want skip", got[0].Status, got[0].Message)
		}
	})
}

// An anonymous caller fails cluster-admin, whether the SelfSubjectReview
// answers with system:anonymous or is refused naming it.
func TestClusterAdminAnonymous(t *testing.T) {
	for name, react := range map[string]k8stesting.ReactionFunc{
		"review answers": func(a k8stesting.Action) (bool, runtime.Object, error) {
			out := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.SelfSubjectReview).DeepCopy()
			out.Status.UserInfo.Username = AnonymousUser
			return true, out, nil
		},
		"review refused": func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}, "", errors.New(`User "system:anonymous" cannot create resource "selfsubjectreviews"`))
		},
	} {
		t.Run(name, func(t *testing.T) {
			env, kube := fakeEnv(t, "v1.30.0")
			kube.PrependReactor("create", "selfsubjectreviews", react)
			allow(kube, func(*authorizationv1.ResourceAttributes) bool { return false })
			got := Run(t.Context(), env, []Check{ClusterAdmin()}, RunOptions{})
			if got[0].Status != StatusFail || !strings.Contains(got[0].Message, "system:anonymous") || !strings.Contains(got[0].Hint, "kubectl auth whoami") {
				t.Fatalf("cluster-admin = %s %q (hint %q), want fail naming system:anonymous", got[0].Status, got[0].Message, got[0].Hint)
			}
		})
	}
}

func allow(kube interface {
	PrependReactor(verb, resource string, f k8stesting.ReactionFunc)
}, decide func(*authorizationv1.ResourceAttributes) bool) {
	kube.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ssar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		out := ssar.DeepCopy()
		out.Status.Allowed = decide(ssar.Spec.ResourceAttributes)
		return true, out, nil
	})
}

func forbiddenErr(resource string) error {
	return &cluster.ListError{Verb: "create", Resource: resource, Err: errorsForbidden(resource)}
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
