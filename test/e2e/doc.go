// Package e2e runs the built plugin binary against a real kube-apiserver and
// etcd (internal/testcluster) and asserts its JSON statuses and exit codes.
package e2e
