package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

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

// NewCommand returns the root command. Execute it with the process's
// context; map the returned error with ExitCode.
func NewCommand(streams genericiooptions.IOStreams, host Host) *cobra.Command {
	cmd, _ := newCommand(streams, host)
	return cmd
}

// newCommand returns the root command and its flags (for tests).
func newCommand(streams genericiooptions.IOStreams, host Host) (*cobra.Command, *Flags) {
	host = host.withDefaults()
	term := console{streams: streams, host: host}
	f := newFlags(streams, host)
	displayName := reporters.DefaultName
	if f.conn.helm.Active {
		displayName = "helm gitops-preflight"
	}
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
			// --timeout bounds the whole run from here: reading values
			// (files, stdin) and the kubeconfig included. Over many
			// clusters each has its own --timeout (run.Fleet): the run as
			// a whole is not bounded by one.
			ctx, cancel := f.selection.deadline(cmd.Context())
			defer cancel()
			cfg, err := f.ToConfig(ctx)
			if err != nil {
				return err
			}
			o, err := f.ToOptions(cfg, term, displayName)
			if err != nil {
				return err
			}
			if o.fleet != nil {
				return o.Run(cmd.Context())
			}
			return o.Run(ctx)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError("%v", err) })
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)

	fs := cmd.Flags()
	f.AddFlags(fs)
	fs.BoolVar(&showVersion, "version", false, "print the version and exit (see also the version command)")
	describe(fs, "version", placement{sectionOutput, 5}, notRecorded("it prints the version: no run"))
	cmd.InitDefaultHelpFlag()
	describe(fs, "help", placement{sectionOutput, 4}, notRecorded("it prints the help: no run"))
	cmd.AddCommand(newVersionCommand())
	cmd.AddCommand(newReplayCommand(streams, host))
	registerCompletions(cmd, f, displayName)
	cmd.SetHelpFunc(helpFunc(cmd, term, cmd.HelpFunc()))
	return cmd, f
}
