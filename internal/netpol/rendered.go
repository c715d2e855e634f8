package netpol

import (
	"cmp"
	"net"
	"net/url"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// gitRepository is a repository or credential template of the release's
// Argo CD Secrets.
type gitRepository struct {
	url   *url.URL
	proxy string
}

// renderedObjects is what Egress reads of a rendering besides its pods.
type renderedObjects struct {
	// text is each ConfigMap's and Secret's data ("Kind/name"), joined.
	text     map[string]string
	services map[string]RenderedService
	repos    []gitRepository
	// bound are the ServiceAccounts ("namespace/name") a RoleBinding or
	// ClusterRoleBinding of the release names; automount their
	// automountServiceAccountToken, when set.
	bound     map[string]bool
	automount map[string]bool
}

// readRendered reads the ConfigMaps, Secrets, Services, ServiceAccounts and
// role bindings of a rendering (hooks included) whose namespace, when the
// manifest leaves it out, is ns.
func readRendered(r *chart.Rendering, ns string) renderedObjects {
	ro := renderedObjects{text: map[string]string{}, services: RenderedServices(r), bound: map[string]bool{}, automount: map[string]bool{}}
	for _, objs := range [][]chart.Object{r.Objects, r.Hooks} {
		for _, o := range objs {
			ro.read(o, cmp.Or(o.Namespace, ns))
		}
	}
	sort.Slice(ro.repos, func(i, j int) bool { return ro.repos[i].url.String() < ro.repos[j].url.String() })
	return ro
}

// read reads one object o of namespace ns into ro.
func (ro *renderedObjects) read(o chart.Object, ns string) {
	switch o.Kind {
	case "ConfigMap":
		var cm corev1.ConfigMap
		if yaml.Unmarshal([]byte(o.Doc), &cm) == nil {
			ro.text["ConfigMap/"+o.Name] = joinValues(cm.Data)
		}
	case "Secret":
		s, data, err := chart.DecodeSecret(o.Doc)
		if err != nil {
			return
		}
		ro.text["Secret/"+o.Name] = joinValues(data)
		switch s.Labels[plan.RepoSecretTypeLabel] {
		case "repository", "repo-creds":
			if u := repositoryURL(data["url"]); u != nil {
				ro.repos = append(ro.repos, gitRepository{url: u, proxy: data["proxy"]})
			}
		}
	case "ServiceAccount":
		var sa corev1.ServiceAccount
		if yaml.Unmarshal([]byte(o.Doc), &sa) == nil && sa.AutomountServiceAccountToken != nil {
			ro.automount[ns+"/"+o.Name] = *sa.AutomountServiceAccountToken
		}
	case "RoleBinding", "ClusterRoleBinding":
		var b rbacv1.RoleBinding // the subjects of both kinds
		if yaml.Unmarshal([]byte(o.Doc), &b) != nil {
			return
		}
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind {
				ro.bound[cmp.Or(s.Namespace, ns)+"/"+s.Name] = true
			}
		}
	}
}

// callsAPI reports whether pod p (in namespace ns) calls the API server:
// its ServiceAccount's token is mounted and the release binds a role to
// that ServiceAccount.
func (ro renderedObjects) callsAPI(p chart.Pod, ns string) bool {
	sa := p.ServiceAccount()
	mounted := true
	if m, ok := ro.automount[ns+"/"+sa]; ok {
		mounted = m
	}
	if p.Spec.AutomountServiceAccountToken != nil {
		mounted = *p.Spec.AutomountServiceAccountToken
	}
	return mounted && ro.bound[ns+"/"+sa]
}

// repositoryURL reads a repository URL as the repo-server dials it: an
// https:// or http:// URL (a port added), ssh://, or Git's scp-like
// git@host:path (ssh, port 22); nil when it is none of those.
func repositoryURL(s string) *url.URL {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if !strings.Contains(s, "://") {
		// git@github.com:org/repo.git
		at, rest, _ := strings.Cut(s, "@")
		if rest == "" {
			rest = at
		}
		host, _, ok := strings.Cut(rest, ":")
		if !ok || host == "" {
			return nil
		}
		return &url.URL{Scheme: "ssh", Host: net.JoinHostPort(host, "22")}
	}
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "ssh": "22"}[u.Scheme]
		if port == "" {
			port = "443"
		}
	}
	scheme := u.Scheme
	if scheme != "http" && scheme != "ssh" {
		scheme = "https"
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(u.Hostname(), port)}
}

// joinValues joins a map's values in key order, one a line.
func joinValues(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(m[k] + "\n")
	}
	return b.String()
}

// RenderedService is a Service the release renders: its selector and
// ports (port -> the ServicePort).
type RenderedService struct {
	Selector map[string]string
	Ports    map[int32]corev1.ServicePort
}

// RenderedServices reads the Services of a rendering (hooks left out) by
// name.
func RenderedServices(r *chart.Rendering) map[string]RenderedService {
	out := map[string]RenderedService{}
	for _, o := range r.Objects {
		if o.Kind != "Service" {
			continue
		}
		var s corev1.Service
		if yaml.Unmarshal([]byte(o.Doc), &s) != nil {
			continue
		}
		rs := RenderedService{Selector: s.Spec.Selector, Ports: map[int32]corev1.ServicePort{}}
		for _, p := range s.Spec.Ports {
			rs.Ports[p.Port] = p
		}
		out[o.Name] = rs
	}
	return out
}
