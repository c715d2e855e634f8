package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/Masterminds/semver/v3"
	"github.com/spf13/pflag"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// planFlags describe the planned install as helm install takes it: the
// runtime and release names, the values (-f, --set, --set-string), the
// shortcut flags over them and the Argo CD range an existing Argo CD must
// meet. The namespace is the connection flags' -n; the chart the chart
// flags'.
type planFlags struct {
	conn                     *connectionFlags
	stdin                    io.Reader
	runtimeName, releaseName string
	valueFiles, set, setStr  []string
	shortcuts                plan.Shortcuts
	argoCDVersionRange       string
}

// AddFlags declares the plan flags on fs.
func (f *planFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.runtimeName, "runtime-name", checks.DefaultRuntimeName, "runtime name (global.runtime.name)")
	describe(fs, "runtime-name", placement{sectionRun, 4}, recorded)
	fs.StringVar(&f.releaseName, "release-name", checks.DefaultReleaseName, "Helm release name of the runtime")
	describe(fs, "release-name", placement{sectionRun, 5}, recorded)

	fs.StringArrayVarP(&f.valueFiles, "values", "f", nil, "chart values file of the planned install (repeatable; merged as helm does)")
	fs.StringArrayVar(&f.set, "set", nil, "chart value of the planned install, helm --set syntax (repeatable; after -f)")
	fs.StringArrayVar(&f.setStr, "set-string", nil, "chart value taken as a string, helm --set-string syntax (repeatable; after --set)")
	for i, n := range []string{"values", "set", "set-string"} {
		describe(fs, n, placement{sectionPlan, 1 + i}, recorded)
	}
	s := &f.shortcuts
	fs.StringVar(&s.AccessMode, "access-mode", "", "planned access mode: tunnel|ingress|service-mesh (default: from values, else tunnel)")
	fs.StringVar(&s.IngressHost, "ingress-host", "", "planned ingress host (global.runtime.ingress.hosts[0]); implies ingress mode")
	fs.StringVar(&s.IngressClass, "ingress-class", "", "planned IngressClass (global.runtime.ingress.className, chart default nginx)")
	fs.StringVar(&s.IngressURL, "ingress-url", "", "planned runtime URL in service-mesh mode (global.runtime.ingressUrl)")
	fs.BoolVar(&s.ExistingArgoCD, "existing-argocd", false, "Argo CD is already installed in the runtime namespace (argo-cd.enabled=false)")
	fs.BoolVar(&s.SkipIngressValidation, "skip-ingress-validation", false, "skip the ingress host reachability probe (global.runtime.ingress.skipValidation)")
	fs.StringVar(&f.argoCDVersionRange, "argocd-version-range", "", "with --existing-argocd: Argo CD versions to accept, in place of the range the chart's validate-values hook enforces (semver constraint; default: the chart's)")
	for i, n := range []string{"access-mode", "ingress-host", "ingress-class", "ingress-url", "existing-argocd", "skip-ingress-validation", "argocd-version-range"} {
		describe(fs, n, placement{sectionPlan, 6 + i}, recorded)
	}
}

// Validate checks nothing before the values are read: the values and the
// shortcuts are judged together, by plan.New.
func (f *planFlags) Validate() error { return nil }

// ToConfig derives the planned install (internal/plan: Helm's merge of -f
// and --set, the shortcuts over it, what the chart derives from them),
// reading the values files and stdin under ctx.
func (f *planFlags) ToConfig(ctx context.Context, c *run.Config) error {
	ns, explicit := f.conn.namespace()
	in, err := plan.New(plan.Flags{
		RuntimeName:       f.runtimeName,
		Namespace:         ns,
		NamespaceExplicit: explicit,
		ReleaseName:       f.releaseName,
		ValueFiles:        f.valueFiles,
		SetValues:         f.set,
		SetStringValues:   f.setStr,
		Ctx:               ctx,
		Stdin:             f.stdin,
		Shortcuts:         f.shortcuts,
	})
	if err != nil {
		if i := run.Interruption(ctx); i != nil {
			return &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("%w while reading values; nothing checked", i)}
		}
		return usageError("%v", err)
	}
	if _, err := semver.NewConstraint(f.argoCDVersionRange); f.argoCDVersionRange != "" && err != nil {
		return usageError("--argocd-version-range %q: %v", f.argoCDVersionRange, err)
	}
	in.ArgoCDVersionRange = f.argoCDVersionRange
	c.Inputs = in
	return nil
}
