// Command argocd is Argo CD's own application controller and repo-server,
// the two components that decide a sync, in one binary that runs as the
// component its name says (os.Args[0]'s base name, or $ARGOCD_BINARY_NAME),
// as Argo CD's own cmd/main.go does:
// https://github.com/argoproj/argo-cd/blob/v3.6.1/cmd/main.go. The
// end-to-end tests build it once per machine (internal/testcluster). Argo
// CD's other components (API server, CLI, Dex, notifications, the
// ApplicationSet, commit and CMP servers) are left out: no test runs them,
// and they are most of Argo CD's build. Argo CD's go.mod pins the
// Kubernetes modules with replace directives, which `go install
// module@version` refuses: this module requires Argo CD at a version and
// copies them.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	appcontroller "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	gitaskpass "github.com/argoproj/argo-cd/v3/cmd/argocd-git-ask-pass/commands"
	reposerver "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/util/log"
)

func init() {
	// As Argo CD's main: klog at the configured level and format.
	klog.SetLogger(log.NewLogrusLogger(log.NewWithCurrentConfig()))
}

func main() {
	// Argo CD's main calls grpc.DisableSRVLookups here, which undoes what
	// the grpclb balancer's init does (DNS SRV lookups on): this build
	// links no grpclb, so they are off already (and the call panics).
	name := filepath.Base(os.Args[0])
	if v := os.Getenv("ARGOCD_BINARY_NAME"); v != "" {
		name = v
	}
	var command *cobra.Command
	switch name {
	case common.CommandApplicationController:
		command = appcontroller.NewCommand()
	case common.CommandRepoServer:
		command = reposerver.NewCommand()
	case common.CommandGitAskPass:
		command = gitaskpass.NewCommand()
	default:
		fmt.Fprintf(os.Stderr, "argocd: %q is not a component of this build (%s, %s or %s)\n", name,
			common.CommandApplicationController, common.CommandRepoServer, common.CommandGitAskPass)
		os.Exit(2)
	}
	if err := command.Execute(); err != nil {
		os.Exit(1)
	}
}
