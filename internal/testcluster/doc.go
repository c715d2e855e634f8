// Package testcluster runs the end-to-end tests' real control plane: etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler built from source
// by hack/tools (make test-binaries) and started through envtest with RBAC
// on, and kwok, which keeps simulated nodes Ready and moves the pods the
// scheduler binds through their phases, and serves the containers' logs a
// test gives them (ServeLogs) as a kubelet would (Start). StartBare is the quiet
// cluster of etcd and kube-apiserver alone, where a test writes the statuses
// no controller would (nodes through CreateNode, make bench's through
// RegisterNode). Tests run the built plugin binary against a kubeconfig and
// read its JSON.
//
// The binaries are looked up in $KUBEBUILDER_ASSETS, else <repo>/bin/k8s. When
// they are missing the test fails (never skips) and says how to build them.
package testcluster
