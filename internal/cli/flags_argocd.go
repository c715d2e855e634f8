package cli

import (
	"context"
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

// AddFlags declares --argocd-app on fs.
func (f *argoCDFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.app, "argocd-app", "", "the Argo CD Application that syncs the runtime, NAMESPACE/NAME: --upgrade judges the commit Argo CD will sync from what it deployed, --post reads its sync and health (default: detected)")
	describe(fs, "argocd-app", placement{sectionPlan, 18}, recorded)
}

// Validate checks that --argocd-app names an Application: NAMESPACE/NAME.
func (f *argoCDFlags) Validate() error {
	if f.app == "" {
		return nil
	}
	ns, name, ok := strings.Cut(f.app, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return usageError("--argocd-app must be NAMESPACE/NAME of an Argo CD Application, not %q", f.app)
	}
	return nil
}

// ToConfig sets the run's Application (run.Config.ArgoCD).
func (f *argoCDFlags) ToConfig(_ context.Context, c *run.Config) error {
	c.ArgoCD.App = f.app
	return nil
}
