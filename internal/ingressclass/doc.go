// Package ingressclass finds the ingress controller behind an
// IngressClass, as the ingress checks need it: the class, the Deployments
// and DaemonSets that run its controller (ServesClass: the container's
// image or entrypoint and its class flags, per supported controller of
// https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/,
// "Ingress controller configuration"), and the Service in front of them
// (the one the controller's args publish, else one selecting its pods).
// It reads the cluster only through the small Cluster interface.
package ingressclass
