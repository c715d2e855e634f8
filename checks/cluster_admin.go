package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Permission is one verb on one resource that the install needs.
type Permission struct {
	Group    string // "" for the core group
	Resource string // plural, e.g. "serviceaccounts"
	Verb     string
	// Namespaced permissions are reviewed in the runtime namespace.
	Namespaced bool
}

func (p Permission) String() string {
	r := p.Resource
	if p.Group != "" {
		r += "." + p.Group
	}
	return p.Verb + " " + r
}

// RequiredPermissions are reviewed one by one when the user is not
// cluster-admin. Namespaced ones come from the "Runtime namespace" table of
// https://codefresh.io/csdp-docs/docs/runtime/requirements/ ("Minimum requirements"); the chart also
// creates CRDs, ClusterRoles and ClusterRoleBindings (https://github.com/codefresh-io/gitops-runtime-helm/tree/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates), which
// https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/ ("Minimum system requirements") covers with
// "Cluster admin permissions".
func RequiredPermissions() []Permission {
	var out []Permission
	add := func(group, resource string, namespaced bool, verbs ...string) {
		for _, v := range verbs {
			out = append(out, Permission{Group: group, Resource: resource, Verb: v, Namespaced: namespaced})
		}
	}
	add("", "serviceaccounts", true, "create", "delete")
	add("", "configmaps", true, "create", "update", "delete")
	add("", "services", true, "create", "update", "delete")
	add("rbac.authorization.k8s.io", "roles", true, "create", "update", "delete")
	add("rbac.authorization.k8s.io", "rolebindings", true, "create", "update", "delete")
	add("", "persistentvolumeclaims", true, "create", "update", "delete")
	add("", "pods", true, "create", "update", "delete")
	add("apiextensions.k8s.io", "customresourcedefinitions", false, "create", "update", "delete")
	add("rbac.authorization.k8s.io", "clusterroles", false, "create", "update", "delete")
	add("rbac.authorization.k8s.io", "clusterrolebindings", false, "create", "update", "delete")
	return out
}

// ClusterAdmin passes when a SelfSubjectAccessReview allows every verb on
// every resource ("Cluster admin permissions", https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/,
// "Minimum system requirements"). Otherwise it reviews each of
// RequiredPermissions in parallel and lists those denied.
func ClusterAdmin() Check {
	return Check{
		Meta: Meta{
			ID:       "cluster-admin",
			Impact:   ImpactInstallFails,
			Category: CategoryCluster,
			Modes:    ModePre | ModeUpgrade,
			Title:    "You have cluster-admin permissions",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
		},
		Run: runClusterAdmin,
	}
}

// AnonymousUser is the name the API server gives a request that carries no
// credentials it accepts (https://kubernetes.io/docs/reference/access-authn-authz/authentication/#anonymous-requests).
const AnonymousUser = "system:anonymous"

func runClusterAdmin(ctx context.Context, env *Env) (Result, error) {
	if env.Installer != nil {
		return installerAdmin(ctx, env, *env.Installer)
	}
	// Who does the server see? A SelfSubjectReview answers (GA in 1.28); an
	// anonymous caller is usually refused it, and the refusal names them.
	user, whoErr := whoAmI(ctx, env)
	all, err := review(ctx, env, authorizationv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"})
	if user == "" && err != nil && strings.Contains(err.Error(), `User "`+AnonymousUser+`"`) {
		user = AnonymousUser
	}
	if user == AnonymousUser {
		return Fail("the API server sees this caller as %s: the kubeconfig's credentials are missing or were not accepted (a client certificate from a CA the server does not trust, an empty token), so nothing can be checked with them", AnonymousUser).
			WithHint("check the kubeconfig's user (kubectl config view --minify) and ask the server who you are: kubectl auth whoami; then fetch fresh credentials (your cloud's get-credentials command)"), nil
	}
	_ = whoErr // any other answer (an old server, no permission) leaves the question to the reviews
	if err != nil {
		return Result{}, err
	}
	if all.Allowed {
		return Pass("SelfSubjectAccessReview allows * on *"), nil
	}
	missing, n, err := missingPermissions(ctx, env)
	if err != nil {
		return Result{}, err
	}
	hint := "install with a cluster-admin identity, or ask an administrator to bind one: kubectl create clusterrolebinding gitops-installer --clusterrole=cluster-admin --user=<you>"
	if len(missing) == 0 {
		return Fail("not cluster-admin, though each listed install permission is allowed; the chart's ClusterRoles may still need more").WithHint(hint), nil
	}
	return Fail("not cluster-admin; missing %d of %d install permissions: %s", len(missing), n, summarisePermissions(missing)).
		WithHint(hint), nil
}

// installerAdmin is cluster-admin for --installer: the installer's access,
// reviewed by SubjectAccessReviews (the runner needs create
// subjectaccessreviews, else the check is skipped naming it).
func installerAdmin(ctx context.Context, env *Env, id Identity) (Result, error) {
	all, err := reviewAccess(ctx, env, authorizationv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"})
	if err != nil {
		return Result{}, err
	}
	if all.Allowed {
		return Pass("the installer (%s) is cluster-admin: SubjectAccessReview allows * on *", id), nil
	}
	missing, n, err := missingPermissions(ctx, env)
	if err != nil {
		return Result{}, err
	}
	bind := "--user=" + id.User
	if ns, name, ok := id.ServiceAccount(); ok {
		bind = "--serviceaccount=" + ns + ":" + name
	}
	hint := "bind the installer to cluster-admin: kubectl create clusterrolebinding gitops-installer --clusterrole=cluster-admin " + bind
	if len(missing) == 0 {
		return Fail("the installer (%s) is not cluster-admin, though each listed install permission is allowed; the chart's ClusterRoles may still need more", id).WithHint(hint), nil
	}
	return Fail("the installer (%s) is not cluster-admin; missing %d of %d install permissions: %s", id, len(missing), n, summarisePermissions(missing)).
		WithHint(hint), nil
}

// missingPermissions reviews each of RequiredPermissions (as the installer
// with --installer, else as the runner) and returns those denied, and how
// many were reviewed.
func missingPermissions(ctx context.Context, env *Env) ([]string, int, error) {
	perms := RequiredPermissions()
	allowed := make([]bool, len(perms))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(10)
	for i, p := range perms {
		g.Go(func() error {
			attrs := authorizationv1.ResourceAttributes{Verb: p.Verb, Group: p.Group, Resource: p.Resource}
			if p.Namespaced {
				attrs.Namespace = env.Inputs.Namespace
			}
			st, err := reviewAccess(gctx, env, attrs)
			if err != nil {
				return err
			}
			allowed[i] = st.Allowed
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	var missing []string
	for i, p := range perms {
		if !allowed[i] {
			s := p.String()
			if p.Namespaced {
				s += " in " + env.Inputs.Namespace
			}
			missing = append(missing, s)
		}
	}
	return missing, len(perms), nil
}

// summarisePermissions folds "create pods in ns", "delete pods in ns" into
// "create,delete pods in ns", keeping the resources in catalogue order.
func summarisePermissions(missing []string) string {
	type entry struct {
		verbs []string
		order int
	}
	byRes := map[string]*entry{}
	for i, m := range missing {
		verb, res, _ := strings.Cut(m, " ")
		e, ok := byRes[res]
		if !ok {
			e = &entry{order: i}
			byRes[res] = e
		}
		e.verbs = append(e.verbs, verb)
	}
	keys := make([]string, 0, len(byRes))
	for k := range byRes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return byRes[keys[a]].order < byRes[keys[b]].order })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = strings.Join(byRes[k].verbs, ",") + " " + k
	}
	return strings.Join(parts, "; ")
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

func review(ctx context.Context, env *Env, attrs authorizationv1.ResourceAttributes) (authorizationv1.SubjectAccessReviewStatus, error) {
	ssar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attrs}}
	res, err := env.Cluster.Clients().Kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, ssar, metav1.CreateOptions{})
	if err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, &cluster.ListError{Verb: "create", Resource: "selfsubjectaccessreviews", Err: fmt.Errorf("%s: %w", attrs.Resource, err)}
	}
	return res.Status, nil
}

// whoAmI returns the user name the API server sees for these credentials
// (SelfSubjectReview, authentication.k8s.io/v1). When the review is refused
// it returns "" with the error, except that a refusal naming
// system:anonymous answers the question.
func whoAmI(ctx context.Context, env *Env) (string, error) {
	res, err := env.Cluster.Clients().Kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		if strings.Contains(err.Error(), `User "`+AnonymousUser+`"`) {
			return AnonymousUser, nil
		}
		return "", err
	}
	return res.Status.UserInfo.Username, nil
}
