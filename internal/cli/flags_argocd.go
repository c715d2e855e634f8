package cli

import (
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// argoCDFlags are the flags of a runtime Argo CD manages (docs/argocd.md).
type argoCDFlags struct {
	// app is --argocd-app: the runtime's Application, "namespace/name".
	app string
}

// AddFlags adds the Argo CD flags to fs.
func (f *argoCDFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.app, "argocd-app", "", "the Argo CD Application that syncs the runtime, NAMESPACE/NAME: --upgrade judges the commit Argo CD will sync from what it deployed, --post reads its sync and health (default: detected)")
}

// toConfig validates the flags and fills c.
func (f *argoCDFlags) toConfig(c *run.ArgoCD) error {
	c.App = ""
	if f.app == "" {
		return nil
	}
	ns, name, ok := strings.Cut(f.app, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return usageError("--argocd-app must be NAMESPACE/NAME of an Argo CD Application, not %q", f.app)
	}
	c.App = f.app
	return nil
}
