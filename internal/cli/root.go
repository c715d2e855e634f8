package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

const example = `  # Before helm install: check the current context for the default runtime
  kubectl gitops-preflight

  # A runtime named "prod" in namespace gitops, as JSON for CI
  kubectl gitops-preflight --runtime-name prod -n gitops -o json

  # Two cluster checks only, warnings counted as failures
  kubectl gitops-preflight --only node-resources,cluster-admin --fail-on warn

  # List every check: ID, mode, category and its docs page
  kubectl gitops-preflight --list-checks

  # After helm install: diagnose the runtime, waiting up to 5 minutes for it
  kubectl gitops-preflight --post -n codefresh --wait 5m

  # Before upgrading a fleet: every kubeconfig context, 4 at a time
  kubectl gitops-preflight --upgrade --all-contexts --chart-version 0.30.0`

// requestTimeoutUsage is --request-timeout's help: what the code does
// (cluster.NewClients, Options.requestTimeout).
var requestTimeoutUsage = fmt.Sprintf("bound on each API request and each network probe, e.g. 20s (unset or 0: %s per API request, %s per probe)",
	cluster.DefaultRequestTimeout, probe.DefaultTimeout)

// NewCommand returns the root command. Execute it with the process's
// context; map the returned error with ExitCode.
func NewCommand(streams genericiooptions.IOStreams, host Host) *cobra.Command {
	cmd, _ := newCommand(streams, host)
	return cmd
}

// newCommand returns the root command and its options (for tests).
func newCommand(streams genericiooptions.IOStreams, host Host) (*cobra.Command, *Options) {
	o := NewOptions(streams, host)
	helm := o.applyHelmEnv()
	displayName := "kubectl gitops-preflight"
	if helm.Active {
		displayName = "helm gitops-preflight"
	}
	o.displayName = displayName
	var showVersion bool
	cmd := &cobra.Command{
		Use:   "kubectl-gitops_preflight",
		Short: "Check a cluster before (and after) installing the Codefresh GitOps Runtime",
		Long: displayName + ` checks everything in a cluster that would make
"helm install" of the Codefresh GitOps Runtime fail or leave it unhealthy,
and says how to fix each problem. It only reads the cluster, unless --fix
is given: then it shows its plan and writes it (after a confirmation, or
with --yes; --dry-run sends it as server-side dry runs).

Exit codes: 0 no failures (warnings allowed), 1 a check failed or errored,
2 usage or input error, 3 cluster unreachable or credentials rejected.`,
		Example:       strings.ReplaceAll(example, reporters.DefaultName, displayName),
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: displayName},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				return writeVersion(streams.Out, displayName, "text", CurrentVersion())
			}
			// Under Helm the namespace Helm chose (HELM_NAMESPACE) counts as given.
			// --timeout bounds the whole run from here: reading values
			// (files, stdin) and the kubeconfig included.
			// Over many clusters each has its own --timeout (run.Fleet):
			// the run as a whole is not bounded by one.
			fleetCtx := cmd.Context()
			ctx, cancel := o.deadline(fleetCtx)
			defer cancel()
			o.contextsGiven = cmd.Flags().Changed("contexts")
			nsChanged := cmd.Flags().Changed("namespace") || helm.Namespace != ""
			if err := o.CompleteContext(ctx, nsChanged); err != nil {
				return err
			}
			if o.Bundle != "" {
				o.bundleFlags = recordFlags(cmd.Flags(), nsChanged, o.config.Inputs.Namespace)
			}
			if o.fleetMode() {
				return o.Run(fleetCtx)
			}
			return o.Run(ctx)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError("%v", err) })
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)

	flags := cmd.Flags()
	o.ConfigFlags.AddFlags(flags)
	formats := make([]string, len(reporters.Formats))
	for i, f := range reporters.Formats {
		formats[i] = string(f)
	}
	flags.StringVarP(&o.Output, "output", "o", o.Output, "output format: "+strings.Join(formats, "|"))
	flags.StringSliceVar(&o.Only, "only", nil, "run only these check IDs (comma-separated; cluster-reachable always runs)")
	flags.StringSliceVar(&o.Skip, "skip", nil, "do not run these check IDs (comma-separated)")
	flags.StringVar(&o.FailOn, "fail-on", o.FailOn, "lowest status that makes the exit code 1: fail or warn")
	flags.StringVar(&o.Waivers, "waivers", "", "YAML file of accepted findings (check, reason, expires): the results they cover are reported as waived")
	flags.StringVar(&o.RuntimeName, "runtime-name", o.RuntimeName, "runtime name (global.runtime.name)")
	flags.StringVar(&o.ReleaseName, "release-name", o.ReleaseName, "Helm release name of the runtime")
	flags.BoolVar(&o.Post, "post", false, "run the post-install diagnostics instead of the pre-install checks")
	flags.BoolVar(&o.Upgrade, "upgrade", false, "check a helm upgrade of the deployed release to --chart/--chart-version with -f/--set, instead of an install")
	flags.BoolVar(&o.ReuseValues, "reuse-values", false, "with --upgrade: as helm upgrade --reuse-values")
	flags.BoolVar(&o.ResetValues, "reset-values", false, "with --upgrade: as helm upgrade --reset-values")
	flags.BoolVar(&o.ResetThenReuseValues, "reset-then-reuse-values", false, "with --upgrade: as helm upgrade --reset-then-reuse-values")
	o.argoCD.AddFlags(flags)
	flags.IntVar(&o.HelmMajor, "helm-major", 0, "the Helm major version (3 or 4) that will run helm install or helm upgrade: Helm 4 applies server-side (default: the helm client found)")
	flags.BoolVar(&o.ListChecks, "list-checks", false, "list the checks (ID, mode, category, docs page; -o wide adds the title) and exit")
	flags.BoolVar(&o.NoColor, "no-color", false, "never colour the output (as when NO_COLOR is set or TERM is dumb)")
	flags.DurationVar(&o.Timeout, "timeout", o.Timeout, "bound on the whole run (on each cluster's run, with --contexts or --all-contexts)")
	flags.StringSliceVar(&o.Contexts, "contexts", nil, "run on each of these kubeconfig contexts (comma-separated), concurrently; not with --context or --fix")
	flags.BoolVar(&o.AllContexts, "all-contexts", false, "run on every context of the kubeconfig, concurrently; not with --context or --fix")
	flags.IntVar(&o.Parallel, "parallel", o.Parallel, "with --contexts/--all-contexts: how many clusters are checked at once")

	flags.StringVar(&o.AccessMode, "access-mode", "", "planned access mode: tunnel|ingress|service-mesh (default: from values, else tunnel)")
	flags.StringVar(&o.IngressHost, "ingress-host", "", "planned ingress host (global.runtime.ingress.hosts[0]); implies ingress mode")
	flags.StringVar(&o.IngressClass, "ingress-class", "", "planned IngressClass (global.runtime.ingress.className, chart default nginx)")
	flags.StringVar(&o.IngressURL, "ingress-url", "", "planned runtime URL in service-mesh mode (global.runtime.ingressUrl)")
	flags.BoolVar(&o.ExistingArgoCD, "existing-argocd", false, "Argo CD is already installed in the runtime namespace (argo-cd.enabled=false)")
	flags.BoolVar(&o.SkipIngressValidation, "skip-ingress-validation", false, "skip the ingress host reachability probe (global.runtime.ingress.skipValidation)")

	flags.StringArrayVarP(&o.ValueFiles, "values", "f", nil, "chart values file of the planned install (repeatable; merged as helm does)")
	flags.StringArrayVar(&o.SetValues, "set", nil, "chart value of the planned install, helm --set syntax (repeatable; after -f)")
	flags.StringArrayVar(&o.SetStringValues, "set-string", nil, "chart value taken as a string, helm --set-string syntax (repeatable; after --set)")
	flags.StringVar(&o.Chart, "chart", o.Chart, "the gitops-runtime chart to render, as helm install takes it: directory, .tgz, oci:// reference or repo/name")
	flags.StringVar(&o.ChartVersion, "chart-version", "", "chart version constraint (helm --version; default: the latest)")
	flags.StringArrayVar(&o.ConnectTo, "connect-to", nil, "probe ADDR:PORT when asked for HOST:PORT, keeping SNI and Host (HOST:PORT:ADDR:PORT, repeatable, as curl)")
	flags.StringVar(&o.CAFile, "ca-file", "", "PEM file of extra CA certificates trusted by the TLS probes")
	flags.StringVar(&o.ArgoCDVersionRange, "argocd-version-range", "", "with --existing-argocd: Argo CD versions to accept, in place of the range the chart's validate-values hook enforces (semver constraint; default: the chart's)")

	o.images.AddFlags(flags)
	flags.BoolVar(&o.Fix, "fix", false, "repair fixable failures (shows the plan; applies with --yes or after confirmation)")
	flags.BoolVar(&o.Yes, "yes", false, "with --fix: apply without asking")
	flags.BoolVar(&o.DryRun, "dry-run", false, "with --fix: send the changes as server-side dry runs; nothing is changed")
	flags.StringVar(&o.CRDs, "crds", "", "with --fix: which Argo CRDs to adopt: all or rollouts (default all)")
	flags.StringVar(&o.TLSSecret, "tls-secret", "", "with --fix --post: the kubernetes.io/tls Secret to set in the runtime Ingress spec.tls")
	flags.DurationVar(&o.Wait, "wait", 0, "with --post: re-run failing checks until they pass or this long has passed")
	flags.StringVar(&o.Bundle, "bundle", "", "also write what the run read, redacted, to the gzip'd tar `FILE` (at most 64 MiB uncompressed; with --contexts/--all-contexts, one archive of each cluster's bundle: at most 64 MiB per cluster) for the replay command; not with --fix")
	o.installer.AddFlags(flags)
	o.inCluster.AddFlags(flags)
	flags.BoolVar(&o.DebugRequestCount, "debug-request-count", false, "print the number of API requests to stderr when done")
	_ = flags.MarkHidden("debug-request-count")
	// -n's help comes from cli-runtime; say what it means here, with the one
	// default that applies: the chart's namespace for kubectl; under Helm,
	// Helm's namespace (HELM_NAMESPACE, already the flag's default value,
	// which cobra prints).
	// --request-timeout's help also comes from cli-runtime ("zero means
	// don't timeout"); 0 and unset mean the plugin's own bounds instead.
	if f := flags.Lookup("request-timeout"); f != nil {
		f.DefValue = ""
		f.Usage = requestTimeoutUsage
	}
	if f := flags.Lookup("namespace"); f != nil {
		if helm.Active && f.DefValue != "" {
			f.Usage = "runtime namespace (Helm's: helm -n, else the kubeconfig context's)"
		} else {
			f.DefValue = ""
			f.Usage = "runtime namespace (default \"" + checks.DefaultNamespace + "\", not the kubeconfig's namespace)"
		}
	}
	// --cache-dir's default is cli-runtime's, under the home directory: say
	// it the way the help should read on every machine.
	if f := flags.Lookup("cache-dir"); f != nil {
		if home, err := os.UserHomeDir(); err == nil && home != "" && strings.HasPrefix(f.DefValue, home+string(os.PathSeparator)) {
			f.DefValue = "~" + strings.TrimPrefix(f.DefValue, home)
		}
	}
	flags.BoolVar(&showVersion, "version", false, "print the version and exit (see also the version command)")
	cmd.AddCommand(newVersionCommand())
	cmd.AddCommand(newReplayCommand(streams, host))
	registerCompletions(cmd, o, displayName)
	cmd.SetHelpFunc(helpFunc(cmd, o, cmd.HelpFunc()))
	return cmd, o
}
