package checks

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// ClusterDNS checks the name internal-router's nginx resolves with: the
// rendered internal-router-config's resolver line, by default
// <dnsService>.<dnsNamespace>.svc.<clusterDomain>, kube-dns.kube-system.svc.cluster.local
// (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_components/internal-router/_configmap.yaml).
// nginx refuses to start when that name does not resolve (RKE2's
// rke2-coredns-rke2-coredns, CoreDNS without a kube-dns Service, another
// cluster domain). Passes when the Service exists and the cluster domain
// of the CoreDNS Corefile (when readable) is the one the name uses; fails
// naming the DNS Service found by k8s-app=kube-dns and the values to set.
// Warns on an IPv6 single-stack cluster when internal-router.ipv6.enabled
// is off (nginx then listens on IPv4 only).
func ClusterDNS() Check {
	return Check{
		Meta: Meta{
			ID:         "cluster-dns",
			Impact:     ImpactRuntimeBreaks,
			Category:   CategoryCluster,
			Modes:      ModePre | ModeUpgrade,
			Title:      "internal-router's resolver Service exists in the cluster's DNS",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
			ReadsChart: true,
		},
		Run: runClusterDNS,
	}
}

var (
	resolverLine = regexp.MustCompile(`(?m)^\s*resolver\s+(\S+)`)
	listenIPv6   = regexp.MustCompile(`(?m)^\s*listen\s+\[::\]`)
	corefileZone = regexp.MustCompile(`(?m)^\s*kubernetes\s+(\S+)`)
)

// routerConfigMap is the ConfigMap internal-router's nginx reads.
const routerConfigMap = plan.InternalRouterName + "-config"

func runClusterDNS(ctx context.Context, env *Env) (Result, error) {
	ri, skip, err := imagesOfRun(ctx, env)
	if skip != nil || err != nil {
		return deref(skip), err
	}
	var conf string
	for _, v := range ri.Rendering.ConfigMapData(routerConfigMap) {
		conf += v + "\n"
	}
	m := resolverLine.FindStringSubmatch(conf)
	if m == nil {
		return Pass("the release renders no internal-router resolver (ConfigMap %s)", routerConfigMap), nil
	}
	resolver := m[1]
	ipv6 := listenIPv6.MatchString(conf)
	labels := strings.Split(resolver, ".")
	if len(labels) < 4 || labels[2] != "svc" {
		return Pass("internal-router resolves with %s (internal-router.resolver), not a cluster Service name", resolver), nil
	}
	svcName, ns, domain := labels[0], labels[1], strings.Join(labels[3:], ".")
	svc, found, err := env.Cluster.Service(ns, svcName)
	if err != nil {
		return Result{}, err
	}
	dns, err := env.Cluster.ServicesByLabel("", "k8s-app=kube-dns")
	if err != nil {
		return Result{}, err
	}
	clusterDomain := corefileDomain(env, dns)
	var problems, sets []string
	var objs []ObjectRef
	if !found {
		problems = append(problems, fmt.Sprintf("Service %s/%s does not exist", ns, svcName))
		if len(dns) > 0 {
			d := dns[0]
			objs = append(objs, ObjectRef{Kind: "Service", Namespace: d.Namespace, Name: d.Name})
			problems[0] += fmt.Sprintf("; the cluster's DNS Service (k8s-app=kube-dns) is %s/%s", d.Namespace, d.Name)
			sets = append(sets, "--set internal-router.dnsService="+d.Name, "--set internal-router.dnsNamespace="+d.Namespace)
		} else {
			problems[0] += "; no Service is labelled k8s-app=kube-dns: set internal-router.dnsService and dnsNamespace to the cluster's DNS Service"
		}
	} else {
		objs = append(objs, ObjectRef{Kind: "Service", Namespace: ns, Name: svcName})
	}
	if clusterDomain != "" && clusterDomain != domain {
		problems = append(problems, fmt.Sprintf("the cluster domain is %s (CoreDNS Corefile), not %s", clusterDomain, domain))
		sets = append(sets, "--set internal-router.clusterDomain="+clusterDomain)
	}
	if len(problems) > 0 {
		r := Fail("internal-router's nginx resolves with %s, which will not resolve: %s; nginx refuses to start", resolver, strings.Join(problems, "; ")).WithObjects(objs...)
		if len(sets) > 0 {
			r.Hint = "install with " + strings.Join(sets, " ")
		}
		return r, nil
	}
	if found && !ipv6 && len(svc.IPFamilies) == 1 && svc.IPFamilies[0] == "IPv6" {
		return Warn("the DNS Service %s/%s is IPv6 single-stack and internal-router listens on IPv4 only", ns, svcName).
			WithHint("install with --set internal-router.ipv6.enabled=true").WithObjects(objs...).WithEffect(ImpactAdvisory), nil
	}
	return Pass("internal-router resolves with %s: Service %s/%s exists%s", resolver, ns, svcName,
		map[bool]string{true: ", cluster domain " + clusterDomain + " (CoreDNS Corefile)", false: ""}[clusterDomain != ""]).WithObjects(objs...), nil
}

// corefileDomain is the cluster domain of the CoreDNS Corefile (the zone of
// its kubernetes plugin, https://coredns.io/plugins/kubernetes/), read from
// the ConfigMap named as each DNS Service, else coredns, in its namespace;
// "" when none is readable.
func corefileDomain(env *Env, dns []cluster.Service) string {
	clusterDomain := ""
	for _, d := range dns {
		for _, cm := range []string{d.Name, "coredns"} {
			c, err := env.Cluster.ConfigMap(d.Namespace, cm)
			if err != nil || !c.Exists {
				continue
			}
			if z := corefileZone.FindStringSubmatch(c.Data["Corefile"]); z != nil {
				clusterDomain = strings.TrimSuffix(z[1], ".")
			}
		}
		if clusterDomain != "" {
			break
		}
	}
	return clusterDomain
}
