package dryrun

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The identity that installs, when it is not the one running the checks
// (--installer): its user name and groups as the API server's
// authenticators give them, and the impersonation the runner needs to
// send the dry runs as it
// (https://kubernetes.io/docs/reference/access-authn-authz/authentication/#user-impersonation).

// serviceAccountPrefix starts a ServiceAccount's user name
// (https://kubernetes.io/docs/reference/access-authn-authz/authentication/#service-account-tokens).
const serviceAccountPrefix = "system:serviceaccount:"

// authenticated is the group the API server gives every authenticated
// identity (and every impersonated user).
const authenticated = "system:authenticated"

// InstallerGroups checks an installer's user name (--installer) and
// returns its groups: groups (--installer-group) with those the API server
// gives it, for a ServiceAccount system:serviceaccounts and
// system:serviceaccounts:NAMESPACE, and system:authenticated for every
// identity; sorted, each once. The error is one line naming --installer.
func InstallerGroups(user string, groups []string) ([]string, error) {
	if user == "" {
		return nil, errors.New("--installer: empty user name")
	}
	out := slices.Clone(groups)
	if rest, ok := strings.CutPrefix(user, serviceAccountPrefix); ok {
		ns, name, found := strings.Cut(rest, ":")
		if !found || strings.Contains(name, ":") {
			return nil, fmt.Errorf("--installer %q: a ServiceAccount is system:serviceaccount:NAMESPACE:NAME", user)
		}
		for what, v := range map[string]string{"namespace": ns, "name": name} {
			if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
				return nil, fmt.Errorf("--installer %q: ServiceAccount %s %q: %s", user, what, v, errs[0])
			}
		}
		out = append(out, "system:serviceaccounts", "system:serviceaccounts:"+ns)
	}
	out = append(out, authenticated)
	slices.Sort(out)
	return slices.Compact(out), nil
}

// ServiceAccount returns the namespace and name of a ServiceAccount's user
// name (system:serviceaccount:NAMESPACE:NAME); ok is false for a user.
func ServiceAccount(user string) (ns, name string, ok bool) {
	rest, ok := strings.CutPrefix(user, serviceAccountPrefix)
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, ":")
}

// Impersonations are the access reviews the runner must pass to send as
// user with groups: verb impersonate on the user (on serviceaccounts in its
// namespace, for a ServiceAccount) and on each group but
// system:authenticated, which every impersonated user gets.
func Impersonations(user string, groups []string) []authorizationv1.ResourceAttributes {
	out := []authorizationv1.ResourceAttributes{{Verb: "impersonate", Resource: "users", Name: user}}
	if ns, name, ok := ServiceAccount(user); ok {
		out[0] = authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "serviceaccounts", Namespace: ns, Name: name}
	}
	for _, g := range groups {
		if g == authenticated {
			continue
		}
		out = append(out, authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "groups", Name: g})
	}
	return out
}
