package checks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/installed"
)

// NginxTLSSecret passes, for an Ingress of an NGINX by F5 IngressClass
// (controller nginx.org/ingress-controller, "NGINX Enterprise"), when the
// runtime Ingress spec.tls lists the runtime host with a Secret in the
// runtime namespace of type kubernetes.io/tls whose certificate covers the
// host (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Patch certificate secret": "Patch the
// certificate secret in spec.tls of the ingress-master resource. The secret
// must be in the same namespace as the Hybrid GitOps Runtime"). Fixable:
// `--fix --tls-secret NAME` (PlanNginxTLSSecret).
func NginxTLSSecret() Check {
	return Check{
		Meta: Meta{
			ID:         "nginx-tls-secret",
			Impact:     ImpactRuntimeBreaks,
			FixOptions: []string{"tls-secret"},
			Category:   CategoryIngress,
			Modes:      ModePost,
			Title:      "The runtime Ingress spec.tls names the host and a kubernetes.io/tls Secret that covers it (NGINX by F5)",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
			Fixable:    true,
		},
		Run:  runNginxTLSSecret,
		Plan: PlanNginxTLSSecret,
	}
}

// nginxApplies returns the runtime facts and, when the check does not apply,
// the reason to skip.
func nginxApplies(env *Env) (installed.Facts, string, error) {
	f, err := runtimeFacts(env)
	if err != nil {
		return f, "", err
	}
	switch {
	case !f.IngressFound:
		return f, fmt.Sprintf("no runtime Ingress in namespace %s (access mode %s)", env.Inputs.Namespace, f.Mode), nil
	case !f.ClassFound:
		return f, fmt.Sprintf("IngressClass %q of Ingress %s not found: cannot tell whether it is NGINX by F5", f.Class, f.Ingress.Name), nil
	case f.Controller != ControllerNginxF5:
		return f, fmt.Sprintf("IngressClass %s is served by %s, not NGINX by F5 (%s)", f.Class, f.Controller, ControllerNginxF5), nil
	}
	return f, "", nil
}

func runNginxTLSSecret(_ context.Context, env *Env) (Result, error) {
	f, skip, err := nginxApplies(env)
	if err != nil {
		return Result{}, err
	}
	if skip != "" {
		return Skip("%s", skip), nil
	}
	ns, ing := env.Inputs.Namespace, f.Ingress.Name
	fixHint := fmt.Sprintf("create a kubernetes.io/tls Secret for the host in namespace %s (kubectl create secret tls NAME --cert=tls.crt --key=tls.key -n %s), then: kubectl gitops-preflight --post -n %s --fix --tls-secret NAME", ns, ns, ns)
	if f.Host == "" {
		return Fail("Ingress %s/%s has no host in its rules", ns, ing).
			WithHint("set global.runtime.ingress.hosts[0] and upgrade the release, or pass --ingress-host").WithObjects(runtimeIngressRef(f)), nil
	}
	entry, ok := tlsEntryFor(f.Ingress.TLS, f.Host)
	if !ok || entry.SecretName == "" {
		return Fail("spec.tls of Ingress %s/%s names no Secret for host %s", ns, ing, f.Host).
			WithHint(fixHint).WithObjects(runtimeIngressRef(f)), nil
	}
	sec, err := env.Cluster.Secret(ns, entry.SecretName)
	if err != nil {
		return Result{}, err
	}
	secRef := ObjectRef{Kind: "Secret", Namespace: ns, Name: entry.SecretName}
	if problem := tlsSecretProblem(sec, ns, entry.SecretName, f.Host); problem != nil {
		return Fail("spec.tls of Ingress %s/%s names Secret %s for host %s, but %v", ns, ing, entry.SecretName, f.Host, problem).
			WithHint(fixHint).WithObjects(runtimeIngressRef(f), secRef), nil
	}
	return Pass("Ingress %s/%s serves host %s with Secret %s (certificate valid for the host until %s)",
		ns, ing, f.Host, entry.SecretName, sec.Certs[0].NotAfter.UTC().Format("2006-01-02")).WithObjects(runtimeIngressRef(f), secRef), nil
}

// tlsEntryFor returns the spec.tls entry whose hosts list host.
func tlsEntryFor(tls []cluster.IngressTLS, host string) (cluster.IngressTLS, bool) {
	for _, t := range tls {
		if slices.Contains(t.Hosts, host) {
			return t, true
		}
	}
	return cluster.IngressTLS{}, false
}

// tlsSecretProblem says why Secret ns/name cannot serve host: missing, not
// of type kubernetes.io/tls, or a leaf certificate (the first of tls.crt)
// that does not cover host. nil means fine.
func tlsSecretProblem(sec cluster.Secret, ns, name, host string) error {
	switch {
	case !sec.Exists:
		return fmt.Errorf("Secret %s does not exist in namespace %s", name, ns)
	case sec.Type != string(corev1.SecretTypeTLS):
		return fmt.Errorf("Secret %s is of type %s, not %s", name, sec.Type, corev1.SecretTypeTLS)
	case len(sec.Certs) == 0:
		return fmt.Errorf("Secret %s holds no PEM certificate in %s", name, corev1.TLSCertKey)
	}
	if err := sec.Certs[0].VerifyHostname(host); err != nil {
		return fmt.Errorf("the certificate of Secret %s does not cover %s: %w", name, host, err)
	}
	return nil
}

// PlanNginxTLSSecret plans `--fix --tls-secret NAME` for nginx-tls-secret: a
// JSON patch of the runtime Ingress setting spec.tls so that host is served
// by Secret NAME (other hosts' entries are kept; the host is moved out of any
// entry naming another Secret), guarded by a test of the Ingress's
// resourceVersion. It returns no changes when spec.tls already does this
// (idempotent), and refuses (an error) when --tls-secret is missing, the
// check does not apply, or the Secret is missing, not kubernetes.io/tls, or
// its certificate does not cover the host. It never reads out or shows
// tls.key.
func PlanNginxTLSSecret(_ context.Context, env *Env) ([]Change, error) {
	name := env.Fix.TLSSecret
	if name == "" {
		return nil, errors.New("nginx-tls-secret: pass the kubernetes.io/tls Secret to use with --tls-secret NAME")
	}
	f, skip, err := nginxApplies(env)
	if err != nil {
		return nil, err
	}
	if skip != "" {
		return nil, fmt.Errorf("nginx-tls-secret does not apply: %s", skip)
	}
	if f.Host == "" {
		return nil, fmt.Errorf("Ingress %s/%s has no host to serve with TLS", f.Ingress.Namespace, f.Ingress.Name)
	}
	sec, err := env.Cluster.Secret(env.Inputs.Namespace, name)
	if err != nil {
		return nil, err
	}
	if problem := tlsSecretProblem(sec, env.Inputs.Namespace, name, f.Host); problem != nil {
		return nil, fmt.Errorf("refusing to set --tls-secret %s: %w", name, problem)
	}
	if cur, ok := tlsEntryFor(f.Ingress.TLS, f.Host); ok && cur.SecretName == name {
		return nil, nil
	}
	newTLS := withTLSHost(f.Ingress.TLS, f.Host, name)
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": f.Ingress.ResourceVersion},
		{"op": "add", "path": "/spec/tls", "value": newTLS},
	})
	if err != nil {
		return nil, err
	}
	return []Change{{
		Object:    runtimeIngressRef(f),
		Resource:  cluster.IngressResource,
		Fields:    []FieldChange{{Field: "spec.tls", Old: renderTLS(f.Ingress.TLS), New: renderTLS(newTLS)}},
		PatchType: types.JSONPatchType,
		Patch:     patch,
	}}, nil
}

// withTLSHost returns tls with host served by secret: host is removed from
// entries naming another Secret (entries left with no host are dropped) and
// added to the entry of secret, or a new entry is appended.
func withTLSHost(tls []cluster.IngressTLS, host, secret string) []cluster.IngressTLS {
	out := make([]cluster.IngressTLS, 0, len(tls)+1)
	added := false
	for _, t := range tls {
		t.Hosts = slices.Clone(t.Hosts)
		if t.SecretName == secret {
			if !slices.Contains(t.Hosts, host) {
				t.Hosts = append(t.Hosts, host)
			}
			added = true
			out = append(out, t)
			continue
		}
		if i := slices.Index(t.Hosts, host); i >= 0 {
			t.Hosts = slices.Delete(t.Hosts, i, i+1)
			if len(t.Hosts) == 0 {
				continue
			}
		}
		out = append(out, t)
	}
	if !added {
		out = append(out, cluster.IngressTLS{Hosts: []string{host}, SecretName: secret})
	}
	return out
}

// renderTLS shows spec.tls in one line for a fix plan ("" when empty).
func renderTLS(tls []cluster.IngressTLS) string {
	if len(tls) == 0 {
		return ""
	}
	parts := make([]string, len(tls))
	for i, t := range tls {
		parts[i] = fmt.Sprintf("{hosts: [%s], secretName: %s}", strings.Join(t.Hosts, ", "), t.SecretName)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
