package checks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Identity is who will run helm install or helm upgrade when it is not the
// identity running the checks (--installer): Argo CD's application
// controller, a CI deployer. User is a user name or a ServiceAccount as
// system:serviceaccount:NAMESPACE:NAME; Groups are its groups (a
// ServiceAccount's are added: system:serviceaccounts,
// system:serviceaccounts:NAMESPACE, and system:authenticated for every
// identity, as the API server's authenticators add them).
type Identity struct {
	User   string   `json:"user"`
	Groups []string `json:"groups,omitempty"`
}

// serviceAccountPrefix starts a ServiceAccount's user name
// (https://kubernetes.io/docs/reference/access-authn-authz/authentication/#service-account-tokens).
const serviceAccountPrefix = "system:serviceaccount:"

// NewIdentity checks an --installer user name (and --installer-group
// groups) and returns the identity with the groups the API server would
// give it. The error is one line.
func NewIdentity(user string, groups []string) (Identity, error) {
	if user == "" {
		return Identity{}, errors.New("--installer: empty user name")
	}
	id := Identity{User: user, Groups: slices.Clone(groups)}
	if rest, ok := strings.CutPrefix(user, serviceAccountPrefix); ok {
		ns, name, found := strings.Cut(rest, ":")
		if !found || strings.Contains(name, ":") {
			return Identity{}, fmt.Errorf("--installer %q: a ServiceAccount is system:serviceaccount:NAMESPACE:NAME", user)
		}
		for what, v := range map[string]string{"namespace": ns, "name": name} {
			if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
				return Identity{}, fmt.Errorf("--installer %q: ServiceAccount %s %q: %s", user, what, v, errs[0])
			}
		}
		id.Groups = append(id.Groups, "system:serviceaccounts", "system:serviceaccounts:"+ns)
	}
	id.Groups = append(id.Groups, "system:authenticated")
	slices.Sort(id.Groups)
	id.Groups = slices.Compact(id.Groups)
	return id, nil
}

// ServiceAccount returns the namespace and name of a ServiceAccount
// identity (ok false for a user).
func (id Identity) ServiceAccount() (ns, name string, ok bool) {
	rest, ok := strings.CutPrefix(id.User, serviceAccountPrefix)
	if !ok {
		return "", "", false
	}
	ns, name, ok = strings.Cut(rest, ":")
	return ns, name, ok
}

// String names the identity as messages do: "user alice", "ServiceAccount
// argocd/argocd-application-controller".
func (id Identity) String() string {
	if ns, name, ok := id.ServiceAccount(); ok {
		return "ServiceAccount " + ns + "/" + name
	}
	return "user " + id.User
}

// reviewAccess asks the API server whether the run's subject may do attrs:
// the installer's identity through a SubjectAccessReview when --installer
// names one (the runner needs create subjectaccessreviews), else the
// runner's own through a SelfSubjectAccessReview. A refusal is a
// *cluster.ListError naming the review's resource, so the runner reports a
// skip naming the permission.
func reviewAccess(ctx context.Context, env *Env, attrs authorizationv1.ResourceAttributes) (authorizationv1.SubjectAccessReviewStatus, error) {
	if id := env.Installer; id != nil {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: &attrs, User: id.User, Groups: id.Groups,
		}}
		res, err := env.Cluster.Clients().Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return authorizationv1.SubjectAccessReviewStatus{}, &cluster.ListError{Verb: "create", Resource: "subjectaccessreviews", Err: fmt.Errorf("%s: %w", attrs.Resource, err)}
		}
		return res.Status, nil
	}
	return review(ctx, env, attrs)
}

// InstallerConfig is the seam the dry-run checks send their requests
// through: the REST config of the identity that will install. Without
// --installer it is the run's own (the kubeconfig's user, or --as). With
// --installer it is the run's config impersonating the installer (user and
// groups), when the runner may impersonate that user and each of its
// groups (SelfSubjectAccessReview of verb impersonate on users, groups, or
// serviceaccounts in the ServiceAccount's namespace); otherwise the error
// is a *cluster.ListError naming the missing permission, which the runner
// reports as a skip ("no permission to impersonate users ..."), never as a
// dry run sent as the wrong identity.
func (e *Env) InstallerConfig(ctx context.Context) (*rest.Config, error) {
	c := e.Cluster.Clients()
	if c == nil || c.Config == nil {
		return nil, errors.New("no REST config: the clients are fakes")
	}
	id := e.Installer
	if id == nil {
		return c.Config, nil
	}
	checks := []authorizationv1.ResourceAttributes{{Verb: "impersonate", Resource: "users", Name: id.User}}
	if ns, name, ok := id.ServiceAccount(); ok {
		checks[0] = authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "serviceaccounts", Namespace: ns, Name: name}
	}
	for _, g := range id.Groups {
		if g == "system:authenticated" {
			continue // every impersonated user gets it
		}
		checks = append(checks, authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "groups", Name: g})
	}
	for _, attrs := range checks {
		st, err := review(ctx, e, attrs)
		if err != nil {
			return nil, err
		}
		if !st.Allowed {
			why := fmt.Errorf("to send the dry runs as the installer (%s) the runner needs impersonate on %s %s", id, attrs.Resource, attrs.Name)
			return nil, &cluster.ListError{Verb: "impersonate", Resource: attrs.Resource + " " + attrs.Name, Namespace: attrs.Namespace,
				Err: apierrors.NewForbidden(schema.GroupResource{Resource: attrs.Resource}, attrs.Name, why)}
		}
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: id.User, Groups: id.Groups}
	return cfg, nil
}
