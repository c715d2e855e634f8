//go:build tools

// Package tools pins the control-plane binaries the end-to-end tests build.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
