package cli

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// fleetMode reports whether the run is over many clusters (--contexts or
// --all-contexts).
func (o *Options) fleetMode() bool {
	return len(o.Contexts) > 0 || o.AllContexts
}

// completeFleet validates the fleet flags (exit 2, before anything is read
// from a cluster): --contexts and --all-contexts exclude each other,
// --context and --fix (fixing many clusters at once is not offered);
// --parallel is at least 1. --bundle writes a fleet archive (runFleet).
func (o *Options) completeFleet(contextsGiven bool) error {
	if o.Parallel < 1 {
		return usageError("--parallel must be at least 1, not %d", o.Parallel)
	}
	if contextsGiven && len(o.Contexts) == 0 {
		return usageError("--contexts needs at least one kubeconfig context name")
	}
	if !o.fleetMode() {
		return nil
	}
	flag := "--contexts"
	if o.AllContexts {
		flag = "--all-contexts"
	}
	switch {
	case len(o.Contexts) > 0 && o.AllContexts:
		return usageError("--contexts and --all-contexts both choose the clusters: give one of them")
	case o.ConfigFlags.Context != nil && *o.ConfigFlags.Context != "":
		return usageError("%s and --context both choose the clusters: give one of them", flag)
	case o.Fix:
		return usageError("--fix changes one cluster at a time: run it with --context, not %s; nothing was checked or changed", flag)
	case o.ListChecks:
		return usageError("--list-checks lists the catalogue: it takes no %s", flag)
	}
	seen := map[string]bool{}
	for _, c := range o.Contexts {
		if c == "" {
			return usageError("--contexts: empty context name in %q", strings.Join(o.Contexts, ","))
		}
		if seen[c] {
			return usageError("--contexts: context %q is given twice", c)
		}
		seen[c] = true
	}
	return nil
}

// fleetContexts reads the merged kubeconfig (bounded by ctx, as
// loadKubeconfig) and returns the contexts to check: --contexts as given,
// each of which must exist (exit 2 otherwise), or every context, sorted,
// for --all-contexts (exit 3 when the kubeconfig has none, as a run with
// no kubeconfig).
func (o *Options) fleetContexts(ctx context.Context) ([]string, error) {
	type loaded struct {
		raw clientcmdapi.Config
		err error
	}
	ch := make(chan loaded, 1)
	go func() {
		raw, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
		ch <- loaded{raw, err}
	}()
	var raw clientcmdapi.Config
	select {
	case l := <-ch:
		if l.err != nil {
			return nil, usageError("kubeconfig: %v", l.err)
		}
		raw = l.raw
	case <-ctx.Done():
		if i := run.Interruption(ctx); i != nil {
			return nil, &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("%w while reading the kubeconfig; nothing checked", i)}
		}
		return nil, &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("reading the kubeconfig did not finish within --timeout %s; nothing checked", o.Timeout)}
	}
	if o.AllContexts {
		if len(raw.Contexts) == 0 {
			return nil, o.noKubeconfig()
		}
		names := make([]string, 0, len(raw.Contexts))
		for n := range raw.Contexts {
			names = append(names, n)
		}
		sort.Strings(names)
		return names, nil
	}
	var unknown []string
	for _, c := range o.Contexts {
		if _, ok := raw.Contexts[c]; !ok {
			unknown = append(unknown, fmt.Sprintf("%q", c))
		}
	}
	if len(unknown) > 0 {
		known := make([]string, 0, len(raw.Contexts))
		for n := range raw.Contexts {
			known = append(known, n)
		}
		sort.Strings(known)
		return nil, usageError("--contexts: no context %s in the kubeconfig (it has: %s); nothing checked", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return slices.Clone(o.Contexts), nil
}

// flagsForContext returns a copy of f (every kubeconfig flag the user gave:
// --kubeconfig, --as, --request-timeout, ...) that selects the context
// name, with its own loader: cli-runtime then reads the kubeconfig and
// applies the flags exactly as for --context name. Every exported field of
// ConfigFlags is copied (a test holds this to the struct's fields).
func flagsForContext(f *genericclioptions.ConfigFlags, name string) *genericclioptions.ConfigFlags {
	return &genericclioptions.ConfigFlags{
		CacheDir:             f.CacheDir,
		KubeConfig:           f.KubeConfig,
		ClusterName:          f.ClusterName,
		AuthInfoName:         f.AuthInfoName,
		Context:              &name,
		Namespace:            f.Namespace,
		APIServer:            f.APIServer,
		TLSServerName:        f.TLSServerName,
		Insecure:             f.Insecure,
		CertFile:             f.CertFile,
		KeyFile:              f.KeyFile,
		CAFile:               f.CAFile,
		BearerToken:          f.BearerToken,
		Impersonate:          f.Impersonate,
		ImpersonateUID:       f.ImpersonateUID,
		ImpersonateGroup:     f.ImpersonateGroup,
		ImpersonateUserExtra: f.ImpersonateUserExtra,
		Username:             f.Username,
		Password:             f.Password,
		Timeout:              f.Timeout,
		DisableCompression:   f.DisableCompression,
		ProxyURL:             f.ProxyURL,
		WrapConfigFn:         f.WrapConfigFn,
	}
}

// fleetMembers builds every context's REST config before any cluster is
// contacted (reading the kubeconfig, bounded by ctx). A context whose
// kubeconfig entry is unusable (its cluster or user missing, a certificate
// file unreadable) gets a member whose Connect fails: exit 2 in its own
// entry, the others are checked. Connect runs the context's exec credential
// plugin (without the terminal: many run at once) and builds its clients;
// wrap, when set, wraps the REST config first (recording it for --bundle).
func (o *Options) fleetMembers(ctx context.Context, names []string, wrap func(name string, cfg *rest.Config) *rest.Config) ([]run.Member, error) {
	members := make([]run.Member, 0, len(names))
	for _, name := range names {
		type loaded struct {
			cfg *rest.Config
			err error
		}
		ch := make(chan loaded, 1)
		go func() {
			cfg, err := flagsForContext(o.ConfigFlags, name).ToRESTConfig()
			ch <- loaded{cfg, err}
		}()
		var l loaded
		select {
		case l = <-ch:
		case <-ctx.Done():
			if i := run.Interruption(ctx); i != nil {
				return nil, &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("%w while reading the kubeconfig; nothing checked", i)}
			}
			return nil, &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("reading the kubeconfig did not finish within --timeout %s; nothing checked", o.Timeout)}
		}
		if l.err != nil {
			err := fmt.Errorf("kubeconfig context %s: %w", name, l.err)
			members = append(members, run.Member{Context: name, Connect: func(context.Context) (*cluster.Clients, checks.ClusterInfo, error) {
				return nil, checks.ClusterInfo{}, err
			}})
			continue
		}
		cfg := l.cfg
		members = append(members, run.Member{Context: name, Connect: func(ctx context.Context) (*cluster.Clients, checks.ClusterInfo, error) {
			restCfg := cfg
			if authed, err := cluster.ResolveExecCredentials(ctx, cfg, false); err != nil {
				restCfg = cluster.FailingConfig(cfg, err)
			} else {
				restCfg = authed
			}
			if wrap != nil {
				restCfg = wrap(name, restCfg)
			}
			clients, err := cluster.NewClients(restCfg)
			if err != nil {
				return nil, checks.ClusterInfo{}, err
			}
			return clients, checks.ClusterInfo{Server: restCfg.Host}, nil
		}})
	}
	return members, nil
}

// runFleet runs the checks on every context of the fleet, --parallel at a
// time, each under its own --timeout, and writes one report of them all.
// The exit code is the highest of the clusters' (reporters.FleetExit). ctx
// bounds reading the kubeconfig by --timeout; the sessions have their own.
func (o *Options) runFleet(ctx context.Context) error {
	readCtx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	names, err := o.fleetContexts(readCtx)
	if err != nil {
		return err
	}
	var rec *fleetRecording
	var wrap func(string, *rest.Config) *rest.Config
	if o.Bundle != "" {
		if rec, err = o.newFleetRecording(len(names)); err != nil {
			return &ExitError{Code: ExitFailed, Err: err}
		}
		defer rec.close()
		wrap = rec.wrap
	}
	members, err := o.fleetMembers(readCtx, names, wrap)
	if err != nil {
		return err
	}
	cfg := o.config // no per-check progress or --fix hooks: many sessions run at once
	fl := &reporters.Fleet{Mode: cfg.Mode, Entries: make([]reporters.FleetEntry, len(members))}
	// On a terminal, one progress line for the fleet: "[2/5] checking
	// kind-dev, prod-us" (the clusters whose sessions are under way).
	started, finished, erase := func(string) {}, func(string) {}, func() {}
	if pw := o.progressWidth(); pw > 0 {
		p := newProgress(o.Streams.ErrOut, len(members), pw)
		erase = p.Done
		started = func(name string) { p.start(checks.Meta{ID: name}) }
		finished = func(name string) { p.finish(checks.Outcome{Meta: checks.Meta{ID: name}}) }
	}
	// --debug-request-count: each member's clients until its line is
	// printed, when its session ends.
	var countsMu sync.Mutex
	counted := map[string]*cluster.Clients{}
	for i := range members {
		connect, name := members[i].Connect, members[i].Context
		members[i].Connect = func(ctx context.Context) (*cluster.Clients, checks.ClusterInfo, error) {
			started(name)
			c, info, err := connect(ctx)
			if o.DebugRequestCount && c != nil {
				countsMu.Lock()
				counted[name] = c
				countsMu.Unlock()
			}
			return c, info, err
		}
	}
	var interrupted *run.Interrupt
	f := &run.Fleet{Config: &cfg, Members: members, Parallel: o.Parallel, Timeout: o.Timeout,
		Done: func(e run.Entry) {
			if rec != nil {
				rec.done(ctx, e)
			}
			// Only the report stays: the session's clients and snapshot
			// are gone once it ends.
			finished(e.Context)
			countsMu.Lock()
			if c := counted[e.Context]; c != nil {
				delete(counted, e.Context)
				fmt.Fprintf(o.Streams.ErrOut, "api-requests: context=%s total=%d pages=%d\n", e.Context, c.Requests.Load(), c.Pages.Load())
			}
			countsMu.Unlock()
			var signal *run.Interrupt
			fl.Entries[e.Index], signal = o.fleetEntry(e)
			if signal != nil {
				interrupted = signal
			}
		}}
	if rec != nil {
		f.Recorder = rec.recorder
	}
	f.Run(ctx)
	erase() // before the report
	var bundleErr error
	if rec != nil {
		bundleErr = rec.finish(names)
	}
	return o.writeFleet(fl, interrupted, bundleErr)
}

// fleetEntry is the report's entry of a member's session (live or
// replayed), and the signal that interrupted it (nil when none).
func (o *Options) fleetEntry(e run.Entry) (reporters.FleetEntry, *run.Interrupt) {
	fe := reporters.FleetEntry{Context: e.Context, Report: e.Report}
	if e.Report == nil {
		fe.Exit = ExitUsage
		if e.Err != nil {
			fe.Err = e.Err.Error()
		}
		return fe, nil
	}
	o.renameInHints(e.Report.Outcomes)
	fe.Exit = ExitCode(exitFor(e.Verdict))
	return fe, e.Verdict.Signal // interrupted, before or after contact
}

// writeFleet writes the fleet's report and returns its exit: the highest
// of the clusters' (reporters.FleetExit), at least 1 when the fleet's
// bundle could not be written whole (bundleErr, the error line then).
func (o *Options) writeFleet(fl *reporters.Fleet, interrupted *run.Interrupt, bundleErr error) error {
	opts, closeSummary, err := o.withStepSummary(reporters.Options{Color: o.colorEnabled(), Width: o.fleetWidth(), Name: o.displayName})
	if err == nil {
		err = reporters.WriteFleet(o.Streams.Out, o.format, opts, fl)
		if cerr := closeSummary(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("writing report: %w", err)}
	}
	codes := make([]int, len(fl.Entries))
	for i, e := range fl.Entries {
		codes[i] = e.Exit
	}
	code := reporters.FleetExit(codes)
	switch {
	case interrupted != nil:
		return &ExitError{Code: code, Err: fmt.Errorf("%w: the report is partial", interrupted)}
	case bundleErr != nil:
		// The report is whole; the recording of it is not.
		return &ExitError{Code: max(code, ExitFailed), Err: bundleErr}
	case code == ExitOK:
		return nil
	}
	return &ExitError{Code: code}
}

// fleetWidth is the width the fleet table fits: the terminal's, else 80
// columns (the matrix folds to stay readable in a log too).
func (o *Options) fleetWidth() int {
	if w := o.outputWidth(); w > 0 {
		return w
	}
	return defaultTerminalWidth
}
