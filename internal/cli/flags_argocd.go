package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// argoCDFlags are the flags of a runtime Argo CD manages (docs/argocd.md).
type argoCDFlags struct {
	// app is --argocd-app: the runtime's Application, "namespace/name".
	app string
	// sources are --argocd-source: REF=DIR, a checkout of the
	// Application's source with that ref.
	sources []string
}

// AddFlags declares --argocd-app on fs.
func (f *argoCDFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.app, "argocd-app", "", "the Argo CD Application that syncs the runtime, NAMESPACE/NAME: --upgrade judges the commit Argo CD will sync from what it deployed, --post reads its sync and health (default: detected)")
	describe(fs, "argocd-app", placement{sectionPlan, 18}, recorded)
	fs.StringArrayVar(&f.sources, "argocd-source", nil, "with --upgrade of a multi-source Application: a checkout of its source whose ref is REF, to read the value files \"$REF/PATH\" (REF=DIR, repeatable; default: the chart's own checkout for a source of the same repository, else those files are not read)")
	describe(fs, "argocd-source", placement{sectionPlan, 19}, recorded)
}

// Validate checks that --argocd-app names an Application, NAMESPACE/NAME,
// and that each --argocd-source is REF=DIR of a directory.
func (f *argoCDFlags) Validate() error {
	for _, s := range f.sources {
		ref, dir, ok := strings.Cut(s, "=")
		if !ok || ref == "" || dir == "" || strings.ContainsAny(ref, "/$") {
			return usageError("--argocd-source must be REF=DIR (the ref of an Application source, a checkout of it), not %q", s)
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usageError("--argocd-source %s: %s is not a directory", ref, dir)
		}
	}
	if f.app == "" {
		return nil
	}
	ns, name, ok := strings.Cut(f.app, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return usageError("--argocd-app must be NAMESPACE/NAME of an Argo CD Application, not %q", f.app)
	}
	return nil
}

// ToConfig sets the run's Application and the checkouts of its sources
// (run.Config.ArgoCD).
func (f *argoCDFlags) ToConfig(_ context.Context, c *run.Config) error {
	c.ArgoCD.App = f.app
	for _, s := range f.sources {
		ref, dir, _ := strings.Cut(s, "=")
		abs, err := filepath.Abs(dir)
		if err != nil {
			return usageError("--argocd-source %s: %v", ref, err)
		}
		if c.ArgoCD.Sources == nil {
			c.ArgoCD.Sources = map[string]string{}
		}
		c.ArgoCD.Sources[ref] = abs
	}
	return nil
}
