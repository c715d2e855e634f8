//go:build tools

// Package tools pins the control-plane binaries the end-to-end tests build:
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler. kwok lives
// in its own module (./kwok) so its dependencies never change what these build with.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
