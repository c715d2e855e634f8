//go:build tools

// Package kwok pins kwok ("Kubernetes WithOut Kubelet", sigs.k8s.io/kwok), which
// keeps the end-to-end tests' simulated nodes Ready and moves scheduled pods
// through their phases. It is its own module so kwok's dependencies never change
// what kube-apiserver, kube-controller-manager and kube-scheduler build with.
package kwok

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
