package checks

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// TLSExpiryWarn is how close to notAfter a certificate makes ingress-tls warn
// (docs/checks/ingress-tls.md: warn when it expires within 14 days).
const TLSExpiryWarn = 14 * 24 * time.Hour

// IngressTLSCheck passes when the certificate served for the ingress host
// (TLS handshake with SNI = host) chains to a trusted root (system roots plus
// --ca-file), covers the host and is not expired; it warns within 14 days of
// notAfter. Every global.runtime.ingress.tls[].secretName must be a Secret in
// the runtime namespace holding a certificate for its hosts (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/ingress.yaml: "The TLS secret must exist in the release namespace"; https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Valid TLS certificate" of every controller).
// Skipped when the protocol is http.
func IngressTLSCheck() Check {
	return Check{
		Meta: Meta{
			ID:       "ingress-tls",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryIngress,
			Modes:    ModePre,
			Title:    "Ingress host serves a valid TLS certificate",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
			Applies:  Applies{Access: []AccessMode{AccessIngress}, Needs: []Input{InputIngressHost}},
		},
		Run: runIngressTLS,
	}
}

// dialPlan says where to connect for host:port: directly (via "") when the
// host resolves or a --connect-to rule covers it, else the ingress
// controller's external address, with a note saying so.
func dialPlan(ctx context.Context, env *Env, host, port string) (via, note string, err error) {
	if env.Probe.Resolves(ctx, host, port) {
		return "", "", nil
	}
	ic, err := lookupIngress(env)
	if err != nil {
		return "", "", err
	}
	if ic.Service != nil && len(ic.Service.LoadBalancer) > 0 {
		addr := ic.Service.LoadBalancer[0]
		target, _ := env.Probe.Target(addr, port)
		return target, fmt.Sprintf(" (%s does not resolve yet: probed the controller's external address %s with SNI %s)", host, net.JoinHostPort(addr, port), host), nil
	}
	return "", "", fmt.Errorf("%s does not resolve and the ingress controller has no external address to probe instead", host)
}

func runIngressTLS(ctx context.Context, env *Env) (Result, error) {
	if p := ingressProtocol(env); p != "https" {
		return Skip("global.runtime.ingress.protocol is %s: no TLS", p), nil
	}
	host, port := plan.HostPort(env.Inputs.IngressHost, "443")

	// Secrets named in global.runtime.ingress.tls.
	var problems []string
	var objs []ObjectRef
	for _, e := range env.Inputs.IngressTLS {
		name, hosts := e.SecretName, e.Hosts
		if hosts == nil {
			hosts = []string{host}
		}
		ns := env.Inputs.Namespace
		sec, err := env.Cluster.Secret(ns, name)
		if err != nil {
			return Result{}, err
		}
		objs = append(objs, ObjectRef{Kind: "Secret", Namespace: ns, Name: name})
		switch {
		case !sec.Exists:
			problems = append(problems, fmt.Sprintf("TLS Secret %s/%s does not exist", ns, name))
		case len(sec.Certs) == 0:
			problems = append(problems, fmt.Sprintf("TLS Secret %s/%s holds no certificate in tls.crt", ns, name))
		default:
			for _, h := range hosts {
				if err := sec.Certs[0].VerifyHostname(h); err != nil {
					problems = append(problems, fmt.Sprintf("TLS Secret %s/%s certificate does not cover %s", ns, name, h))
				}
			}
		}
	}

	via, note, err := dialPlan(ctx, env, host, port)
	if unanswered(err) {
		return Result{}, err
	}
	if err != nil {
		return Fail("cannot probe TLS for %s: %v", host, err).WithHint("create the DNS record for the host, or pass --connect-to " + host + ":443:<address>:443").WithObjects(objs...), nil
	}
	res, err := env.Probe.TLS(ctx, host, port, via)
	if unanswered(err) {
		return Result{}, err
	}
	if err != nil {
		problems = append(problems, fmt.Sprintf("no TLS answer from %s:%s%s: %v", host, port, note, err))
		return Fail("%s", strings.Join(problems, "; ")).WithHint("check the controller's HTTPS listener and the host's DNS record").WithObjects(objs...), nil
	}
	desc := certText(res.Leaf)
	if res.Expired {
		problems = append(problems, "certificate expired "+res.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	if res.HostErr != nil {
		problems = append(problems, fmt.Sprintf("certificate does not cover %s", host))
	}
	if res.ChainErr != nil {
		problems = append(problems, "certificate chain is not trusted: "+res.ChainErr.Error())
	}
	if len(problems) > 0 {
		return Fail("%s; served: %s%s", strings.Join(problems, "; "), desc, note).
			WithHint("serve a certificate for " + host + " from a trusted CA (or pass --ca-file with your private CA); the ingress controller's default certificate is used when no TLS Secret matches").
			WithObjects(objs...), nil
	}
	if left := res.Leaf.NotAfter.Sub(env.Probe.Now()); left < TLSExpiryWarn {
		return Warn("certificate expires in %s: %s%s", left.Round(time.Hour), desc, note).WithHint("renew the certificate before installing").WithObjects(objs...), nil
	}
	return Pass("%s%s", desc, note).WithObjects(objs...), nil
}

func certText(c *probe.Cert) string {
	return fmt.Sprintf("subject %q, issuer %q, SANs [%s], notAfter %s", c.Subject, c.Issuer, strings.Join(c.SANs, ", "), c.NotAfter.UTC().Format(time.RFC3339))
}

// ingressProtocol is global.runtime.ingress.protocol (default https).
func ingressProtocol(env *Env) string { return env.Inputs.IngressProtocol }
