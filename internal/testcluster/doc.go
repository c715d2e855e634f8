// Package testcluster runs the end-to-end tests' real control plane: etcd and
// kube-apiserver built from source by hack/tools (make test-binaries) and
// started through envtest, with RBAC on and no kubelet or controllers. Tests
// create Nodes and set status subresources themselves, then run the built
// plugin binary against a kubeconfig and read its JSON.
//
// The binaries are looked up in $KUBEBUILDER_ASSETS, else <repo>/bin/k8s. When
// they are missing the test fails (never skips) and says how to build them.
package testcluster
