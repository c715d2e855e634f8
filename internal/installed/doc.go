// Package installed reads what the gitops-runtime chart actually rendered
// into the cluster, after the install (--post): the runtime's codefresh-cm,
// its Ingress and that Ingress's IngressClass, merged with the run's
// inputs (flags win where the user gave them, otherwise the cluster
// tells): the access mode, the runtime host and the ingress class
// (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl#L336-L369:
// codefresh-cm.ingressHost;
// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/ingress.yaml:
// the runtime Ingress and its class and host). It reads the cluster only
// through the small Cluster interface.
package installed
