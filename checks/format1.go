package checks

// Format1Catalogue are the IDs of the checks of mode m when the plugin
// wrote bundles of format 1 (their manifests recorded the command line): a
// replay of such a bundle runs those the recorded run selected, never a
// check added since, which would judge answers the bundle does not hold.
// Frozen: format 1 is no longer written.
func Format1Catalogue(m Mode) []string {
	return format1Catalogue[m.Phase()]
}

var format1Catalogue = map[string][]string{
	ModePre.Phase(): {"cluster-reachable", "kubernetes-version", "cluster-admin", "node-resources", "runtime-schedulable", "helm-version",
		"argo-components", "sealed-secrets", "argo-crds-ownership", "helm-ownership", "existing-runtime", "leftover-runtime-token", "runtime-name",
		"runtime-namespace", "values", "chart-renders", "validation-hooks", "user-token-secret", "platform-user-token", "ingress-class",
		"ingress-controller", "ingress-external-address", "ingress-tls", "ingress-tcp", "ingress-report-status", "alb-ingress-class",
		"ingress-host-reachable", "ingress-url", "osm-ingress", "platform-reachable", "argocd-server", "argocd-version", "argocd-admin-apikey"},
	ModePost.Phase(): {"cluster-reachable", "osm-ingress", "release-deployed", "validate-values-job", "runtime-workloads",
		"runtime-ingress-status", "nginx-tls-secret", "istio-virtualservice", "alb-dns-alias", "rollouts-controllers"},
	ModeUpgrade.Phase(): {"cluster-reachable", "kubernetes-version", "cluster-admin", "node-resources", "runtime-schedulable", "helm-version",
		"argo-components", "sealed-secrets", "argo-crds-ownership", "helm-ownership", "existing-runtime", "chart-renders", "release-upgradable",
		"release-apis", "upgrade-path", "upgrade-values", "upgrade-deletes", "upgrade-apply"},
}
