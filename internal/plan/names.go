package plan

// Names the gitops-runtime chart renders or reserves, one declaration each
// (chart 0.30.0, https://github.com/codefresh-io/gitops-runtime-helm/tree/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime).
const (
	// ConfigMapName is the ConfigMap every runtime renders: ingressHost (the
	// runtime URL), ingressClassName and version (the runtime's appVersion)
	// (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/codefresh-cm.yaml).
	ConfigMapName = "codefresh-cm"
	// TokenSecretName is the Secret holding a runtime's own platform token
	// (key "token"), created by cap-app-proxy when the runtime registers; it
	// is a reserved name a userToken secretKeyRef may not use
	// (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl#L2-L7).
	TokenSecretName = "codefresh-token"
	// AppProxyName is the app-proxy workload and Service (port 3017)
	// (https://github.com/codefresh-io/gitops-runtime-helm/tree/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_components/app-proxy).
	AppProxyName = "cap-app-proxy"
	// InternalRouterName is the internal-router workload, Service (port 80)
	// and ServiceAccount
	// (https://github.com/codefresh-io/gitops-runtime-helm/tree/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_components/internal-router).
	InternalRouterName = "internal-router"
	// ArgoCDConfigMapName is Argo CD's own settings ConfigMap, where the
	// chart's Argo CD integration account is declared
	// (https://argo-cd.readthedocs.io/en/stable/operator-manual/argocd-cm-yaml/).
	ArgoCDConfigMapName = "argocd-cm"
	// PlatformCASecretName is the Secret the chart creates for the platform
	// CA bundle with global.codefresh.tls.caCerts.secret.create
	// (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/tls-custom-ca/codefresh-tls-certs.yaml).
	PlatformCASecretName = "codefresh-tls-certs"
	// RepoServerComponent is the app.kubernetes.io/component label of the
	// Argo CD repo-server the argo-cd subchart renders, the component that
	// clones Git
	// (https://github.com/argoproj/argo-helm/blob/argo-cd-10.1.1/charts/argo-cd/templates/argocd-repo-server/deployment.yaml#L48).
	RepoServerComponent = "repo-server"
	// RepoSecretTypeLabel marks the Secrets Argo CD reads repositories
	// (value "repository") and credential templates ("repo-creds") from:
	// their url, and the proxy and noProxy a repository is fetched through
	// (https://argo-cd.readthedocs.io/en/stable/operator-manual/declarative-setup/#repositories);
	// the argo-cd subchart renders one per argo-cd.configs.repositories and
	// credentialTemplates entry.
	RepoSecretTypeLabel = "argocd.argoproj.io/secret-type"
)

// RuntimeComponents are the workload names the gitops-runtime chart renders
// (https://github.com/codefresh-io/gitops-runtime-helm/tree/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_components);
// names starting with "argo-cd-" are the Argo CD subchart's.
func RuntimeComponents() []string {
	return []string{
		AppProxyName, InternalRouterName, "gitops-operator", "argo-gateway",
		"runtime-event-reporter", "cluster-event-reporter", "sealed-secrets-controller",
		"runtime-redis", "argo-server", "argo-workflow-controller",
	}
}

// Names of the chart's pre-install hook objects
// (https://github.com/codefresh-io/gitops-runtime-helm/tree/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/hooks/pre-install):
// the validate-values Job (`cf helm validate`, and the Argo CD version check
// with an existing Argo CD), the validate-usage Job (`cf account
// validate-usage`) and the helm-values-config ConfigMap both mount, which
// holds the release's values.
const (
	ValidateValuesJob   = "validate-values"
	ValidateUsageJob    = "validate-usage"
	HelmValuesConfigMap = "helm-values-config"
)

// ValidationJobs are the chart's hook Jobs that validate an install:
// ValidateValuesJob and ValidateUsageJob.
func ValidationJobs() []string {
	return []string{ValidateValuesJob, ValidateUsageJob}
}
