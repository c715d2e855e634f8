//go:build tools

// Package argocd pins Argo CD (github.com/argoproj/argo-cd/v3), whose one
// binary (cmd) runs as the application controller or the repo-server after
// its name. The end-to-end tests build it from here once per machine
// (internal/testcluster/argocd_real.go). Argo CD's go.mod pins the Kubernetes
// modules with replace directives, which `go install module@version` refuses:
// this module requires Argo CD at a version and copies them.
package argocd

import (
	_ "github.com/argoproj/argo-cd/v3/cmd"
)
