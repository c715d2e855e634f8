package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// printHooks is `replay FILE --hooks`: the validation hook Jobs the
// recorded --post run saw, each with its conditions, its pods' containers
// (state and the kept log) and the events of them all; JSON with -o json.
func printHooks(streams genericiooptions.IOStreams, b *bundle.Bundle, file, output string) error {
	hooks, err := b.Hooks()
	if err != nil {
		return usageError("%v", err)
	}
	switch output {
	case "", "table":
	case "json":
		if hooks == nil {
			hooks = []bundle.HookJob{}
		}
		out, err := json.MarshalIndent(hooks, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(streams.Out, "%s\n", out)
		return err
	default:
		return usageError("--hooks prints table or json, not %q", output)
	}
	w := streams.Out
	if len(hooks) == 0 {
		_, err := fmt.Fprintf(w, "bundle %s holds no hook Job: only a --post run records the %s Jobs, when they exist\n", file, strings.Join(plan.ValidationJobs(), " and "))
		return err
	}
	for _, h := range hooks {
		writeHookJob(w, h)
	}
	return nil
}

// writeHookJob prints one hook Job for people: its conditions, its pods'
// containers (state and the kept log) and the events.
func writeHookJob(w io.Writer, h bundle.HookJob) {
	state := "no condition yet (running)"
	var conds []string
	for _, c := range h.Conditions {
		t := c.Type
		if c.Reason != "" {
			t += " (" + c.Reason
			if c.Message != "" {
				t += ": " + c.Message
			}
			t += ")"
		}
		conds = append(conds, t)
	}
	if len(conds) > 0 {
		state = strings.Join(conds, ", ")
	}
	fmt.Fprintf(w, "Job %s/%s: %s; last seen %s\n", h.Namespace, h.Name, state, h.Seen.Format(time.RFC3339))
	for _, p := range h.Pods {
		node := p.Node
		if node == "" {
			node = "no node"
		}
		fmt.Fprintf(w, "  Pod %s: %s on %s\n", p.Name, p.Phase, node)
		for _, c := range p.Containers {
			fmt.Fprintf(w, "    container %s: %s\n", c.Name, c.State)
			switch {
			case c.Log != "":
				cut := ""
				if c.LogCut {
					cut = fmt.Sprintf(", its last %d KiB", bundle.HookLogBytes>>10)
				}
				fmt.Fprintf(w, "    log%s:\n", cut)
				for _, l := range strings.Split(strings.TrimRight(c.Log, "\n"), "\n") {
					fmt.Fprintf(w, "      %s\n", l)
				}
			case c.LogError != "":
				fmt.Fprintf(w, "    log not read: %s\n", c.LogError)
			default:
				fmt.Fprintf(w, "    log: empty\n")
			}
		}
	}
	if len(h.Events) == 0 {
		fmt.Fprintf(w, "  no events\n")
	}
	for _, e := range h.Events {
		count := ""
		if e.Count > 1 {
			count = fmt.Sprintf(" (x%d)", e.Count)
		}
		fmt.Fprintf(w, "  event %s %s %s: %s%s\n", e.Object, e.Type, e.Reason, e.Message, count)
	}
}
