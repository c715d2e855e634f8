package cli

import (
	"context"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// fleetFlags run the checks on many clusters: --contexts or --all-contexts,
// --parallel at a time (run.Fleet).
type fleetFlags struct {
	contexts    []string
	allContexts bool
	parallel    int
	fs          *pflag.FlagSet
}

// AddFlags declares the fleet flags on fs.
func (f *fleetFlags) AddFlags(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringSliceVar(&f.contexts, "contexts", nil, "run on each of these kubeconfig contexts (comma-separated), concurrently; not with --context or --fix")
	fs.BoolVar(&f.allContexts, "all-contexts", false, "run on every context of the kubeconfig, concurrently; not with --context or --fix")
	fs.IntVar(&f.parallel, "parallel", f.parallel, "with --contexts/--all-contexts: how many clusters are checked at once")
	for i, n := range []string{"contexts", "all-contexts", "parallel"} {
		describe(fs, n, placement{sectionFleet, 1 + i}, notRecorded("a fleet archive holds each context's bundle; its replay replays them all"))
	}
}

// active reports whether the run is over many clusters.
func (f *fleetFlags) active() bool {
	return len(f.contexts) > 0 || f.allContexts
}

// Validate checks --parallel and the --contexts list: given, without an
// empty or repeated name.
func (f *fleetFlags) Validate() error {
	if f.parallel < 1 {
		return usageError("--parallel must be at least 1, not %d", f.parallel)
	}
	if f.fs != nil && f.fs.Changed("contexts") && len(f.contexts) == 0 {
		return usageError("--contexts needs at least one kubeconfig context name")
	}
	seen := map[string]bool{}
	for _, c := range f.contexts {
		if c == "" {
			return usageError("--contexts: empty context name in %q", strings.Join(f.contexts, ","))
		}
		if seen[c] {
			return usageError("--contexts: context %q is given twice", c)
		}
		seen[c] = true
	}
	return nil
}

// conflicts refuses the flags a fleet run cannot take (exit 2, before
// anything is read from a cluster): --contexts with --all-contexts, either
// with --context, --fix (fixing many clusters at once is not offered) or
// --list-checks.
func (f *fleetFlags) conflicts(conn *connectionFlags, fix, listChecks bool) error {
	if !f.active() {
		return nil
	}
	flag := "--contexts"
	if f.allContexts {
		flag = "--all-contexts"
	}
	switch {
	case len(f.contexts) > 0 && f.allContexts:
		return usageError("--contexts and --all-contexts both choose the clusters: give one of them")
	case conn.kube.Context != nil && *conn.kube.Context != "":
		return usageError("%s and --context both choose the clusters: give one of them", flag)
	case fix:
		return usageError("--fix changes one cluster at a time: run it with --context, not %s; nothing was checked or changed", flag)
	case listChecks:
		return usageError("--list-checks lists the catalogue: it takes no %s", flag)
	}
	return nil
}

// ToConfig compiles nothing into the run: the fleet's clusters are the
// command's (Options.fleet), each run with the same config.
func (f *fleetFlags) ToConfig(context.Context, *run.Config) error { return nil }

// target is the fleet the run is over, nil for one cluster.
func (f *fleetFlags) target() *fleetTarget {
	if !f.active() {
		return nil
	}
	return &fleetTarget{contexts: f.contexts, all: f.allContexts, parallel: f.parallel}
}

// fleetTarget is the clusters of a fleet run: the contexts given, or every
// context of the kubeconfig (all), parallel at a time.
type fleetTarget struct {
	contexts []string
	all      bool
	parallel int
}
