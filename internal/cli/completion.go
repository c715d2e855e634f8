package cli

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// completionTimeout bounds the API request of a namespace completion: a
// <TAB> must never hang on an unreachable cluster.
const completionTimeout = 5 * time.Second

// CompletionHelper is the executable kubectl (1.26 or newer) runs to complete
// `kubectl gitops-preflight <TAB>`: kubectl_complete-<plugin name with
// dashes as underscores> on PATH (https://kubernetes.io/docs/tasks/extend-kubectl/kubectl-plugins/, "Shell completion"). The script of
// that name at the repository root forwards to the hidden `__complete`
// command cobra adds.
const CompletionHelper = "kubectl_complete-gitops_preflight"

const completionNote = `
As a kubectl plugin (kubectl 1.26 or newer), "kubectl gitops-preflight <TAB>"
completes through the ` + CompletionHelper + ` helper at the
root of every release archive (` + CompletionHelper + `.cmd on
Windows): copy it to a directory on your PATH. With krew:
  cp "${KREW_ROOT:-$HOME/.krew}/store/gitops-preflight/<version>/\
` + CompletionHelper + `" ~/.local/bin/
(a copy, not a link: it runs the plugin on PATH, and survives upgrades).
The scripts printed here complete the binary when run as kubectl-gitops_preflight.`

// registerCompletions adds completion of flag values to the root command:
// check IDs for --only/--skip (comma-separated), formats for -o, the fixed
// choices of --fail-on/--access-mode/--crds, contexts from the kubeconfig
// for --context and --contexts (comma-separated), and the cluster's namespaces for -n. It also creates cobra's
// `completion bash|zsh|fish|powershell` command and explains the kubectl
// helper in its help.
func registerCompletions(cmd *cobra.Command, f *Flags, displayName string) {
	fixed := func(flag string, values ...string) {
		_ = cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
	fixed("output", formatNames()...)
	fixed("fail-on", "fail", "warn")
	fixed("access-mode", string(checks.AccessTunnel), string(checks.AccessIngress), string(checks.AccessServiceMesh))
	fixed("crds", "all", "rollouts")
	ids := func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeCheckIDs(f.Mode(), toComplete)
	}
	_ = cmd.RegisterFlagCompletionFunc("only", ids)
	_ = cmd.RegisterFlagCompletionFunc("skip", ids)
	_ = cmd.RegisterFlagCompletionFunc("context", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeContexts(f.conn.kube), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("contexts", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeList(completeContexts(f.conn.kube), toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
	_ = cmd.RegisterFlagCompletionFunc("namespace", func(c *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeNamespaces(c.Context(), f.conn.kube), cobra.ShellCompDirectiveNoFileComp
	})

	cmd.InitDefaultCompletionCmd()
	for _, sub := range cmd.Commands() {
		if sub.Name() == "completion" && displayName == reporters.DefaultName {
			sub.Long += completionNote
		}
	}
}

// completeCheckIDs completes the last element of a comma-separated list of
// the IDs of mode's checks (--only/--skip accept no other: the run rejects
// them with exit 2), describing each by its title and leaving out those
// already given.
func completeCheckIDs(mode checks.Mode, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	prefix, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix, last = toComplete[:i+1], toComplete[i+1:]
	}
	given := map[string]bool{}
	for _, id := range strings.Split(prefix, ",") {
		given[id] = true
	}
	var out []cobra.Completion
	for _, c := range checks.All() {
		if given[c.ID] || !strings.HasPrefix(c.ID, last) || !c.Modes.Has(mode) {
			continue
		}
		out = append(out, cobra.CompletionWithDesc(prefix+c.ID, c.Title))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeList completes the last element of the comma-separated list
// toComplete from names, leaving out those already given.
func completeList(names []cobra.Completion, toComplete string) []cobra.Completion {
	prefix, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix, last = toComplete[:i+1], toComplete[i+1:]
	}
	given := map[string]bool{}
	for _, n := range strings.Split(prefix, ",") {
		given[n] = true
	}
	var out []cobra.Completion
	for _, n := range names {
		if !given[n] && strings.HasPrefix(n, last) {
			out = append(out, prefix+n)
		}
	}
	return out
}

// completeContexts lists the kubeconfig's context names, sorted.
func completeContexts(kube *genericclioptions.ConfigFlags) []cobra.Completion {
	raw, err := kube.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil
	}
	out := make([]cobra.Completion, 0, len(raw.Contexts))
	for name := range raw.Contexts {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// completeNamespaces lists the cluster's namespaces (one bounded request);
// nothing when the cluster cannot be asked.
func completeNamespaces(ctx context.Context, kube *genericclioptions.ConfigFlags) []cobra.Completion {
	cfg, err := kube.ToRESTConfig()
	if err != nil {
		return nil
	}
	cfg.Timeout = completionTimeout
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	list, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	out := make([]cobra.Completion, 0, len(list.Items))
	for _, ns := range list.Items {
		out = append(out, ns.Name)
	}
	return out
}
