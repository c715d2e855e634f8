package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// kubeconfig is the kubeconfig the run reads through kubectl's flags
// (cli-runtime's ConfigFlags): the REST config of its context, or of many.
// client-go reads without a context, so each read runs aside and the
// caller's ctx bounds the wait: a kubeconfig that never ends reading is a
// timeout (exit 3) or an interruption, not a hang.
type kubeconfig struct {
	flags  *genericclioptions.ConfigFlags
	getenv func(string) string
	// timeout is --timeout, named when a read does not end within it.
	timeout time.Duration
	// inCluster, when enabled (--in-cluster), gives the pod's config in
	// place of the kubeconfig's.
	inCluster *inClusterFlags
}

// aside runs read apart from the caller and waits for it within ctx.
func aside[T any](k kubeconfig, ctx context.Context, read func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := read()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		if i := run.Interruption(ctx); i != nil {
			return zero, &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("%w while reading the kubeconfig; nothing checked", i)}
		}
		return zero, &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("reading the kubeconfig did not finish within --timeout %s; nothing checked", k.timeout)}
	}
}

// restConfig reads the kubeconfig (files, a FIFO, whatever --kubeconfig
// and KUBECONFIG name) and returns the REST config of its context and the
// context's name, with exec credentials resolved under ctx (client-go would
// run the plugin unbounded, inside the first request; interactive: the
// plugin may ask on the terminal). When the plugin gives no credentials,
// every request fails with its reason: cluster-reachable reports it and the
// run exits 3 with a full report.
func (k kubeconfig) restConfig(ctx context.Context, interactive bool) (*rest.Config, string, error) {
	if k.inCluster != nil && k.inCluster.enabled {
		cfg, err := k.inCluster.restConfig(k.getenv)
		return cfg, "in-cluster", err
	}
	type loaded struct {
		cfg  *rest.Config
		name string
	}
	l, err := aside(k, ctx, func() (loaded, error) {
		cfg, err := k.flags.ToRESTConfig()
		return loaded{cfg, k.contextName()}, err
	})
	var exit *ExitError
	switch {
	case errors.As(err, &exit):
		return nil, "", err
	case err != nil && clientcmd.IsEmptyConfig(err):
		return nil, "", k.missing()
	case err != nil:
		return nil, "", usageError("kubeconfig: %v", err)
	case k.empty():
		return nil, "", k.missing()
	}
	cfg := l.cfg
	if authed, err := cluster.ResolveExecCredentials(ctx, cfg, interactive); err != nil {
		cfg = cluster.FailingConfig(cfg, err)
	} else {
		cfg = authed
	}
	return cfg, l.name, nil
}

// empty reports whether no kubeconfig file gave a cluster, no --server was
// given and the process is not in a pod: client-go then falls back to its
// default server, http://localhost:8080, which is never what a user of this
// plugin meant.
func (k kubeconfig) empty() bool {
	if k.flags.APIServer != nil && *k.flags.APIServer != "" {
		return false
	}
	raw, err := k.flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil || len(raw.Clusters) > 0 {
		return false
	}
	_, err = rest.InClusterConfig()
	return errors.Is(err, rest.ErrNotInCluster)
}

// missing is the one-line error (exit 3: no cluster could be reached) for a
// run with no kubeconfig, naming where client-go looked: --kubeconfig, else
// the files of KUBECONFIG, else ~/.kube/config.
func (k kubeconfig) missing() error {
	var where string
	switch {
	case k.flags.KubeConfig != nil && *k.flags.KubeConfig != "":
		where = "--kubeconfig " + *k.flags.KubeConfig
	case k.getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		where = clientcmd.RecommendedConfigPathEnvVar + "=" + k.getenv(clientcmd.RecommendedConfigPathEnvVar)
	default:
		where = "~/" + clientcmd.RecommendedHomeDir + "/" + clientcmd.RecommendedFileName + " (KUBECONFIG is not set)"
	}
	return &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("no kubeconfig with a cluster found: looked in %s; set KUBECONFIG, pass --kubeconfig, or --server with --token; nothing checked", where)}
}

// contextName is the kubeconfig context in use. The loader caches the
// merged kubeconfig, so this reads no file twice.
func (k kubeconfig) contextName() string {
	if k.flags.Context != nil && *k.flags.Context != "" {
		return *k.flags.Context
	}
	raw, err := k.flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return ""
	}
	return raw.CurrentContext
}

// contexts reads the merged kubeconfig and returns the contexts of the
// fleet: t's contexts as given, each of which must exist (exit 2
// otherwise), or every context, sorted, for --all-contexts (exit 3 when the
// kubeconfig has none, as a run with no kubeconfig).
func (k kubeconfig) contexts(ctx context.Context, t *fleetTarget) ([]string, error) {
	raw, err := aside(k, ctx, func() (clientcmdapi.Config, error) {
		return k.flags.ToRawKubeConfigLoader().RawConfig()
	})
	var exit *ExitError
	if errors.As(err, &exit) {
		return nil, err
	} else if err != nil {
		return nil, usageError("kubeconfig: %v", err)
	}
	known := make([]string, 0, len(raw.Contexts))
	for n := range raw.Contexts {
		known = append(known, n)
	}
	sort.Strings(known)
	if t.all {
		if len(known) == 0 {
			return nil, k.missing()
		}
		return known, nil
	}
	var unknown []string
	for _, c := range t.contexts {
		if _, ok := raw.Contexts[c]; !ok {
			unknown = append(unknown, fmt.Sprintf("%q", c))
		}
	}
	if len(unknown) > 0 {
		return nil, usageError("--contexts: no context %s in the kubeconfig (it has: %s); nothing checked", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return slices.Clone(t.contexts), nil
}

// members builds every context's REST config before any cluster is
// contacted (reading the kubeconfig, bounded by ctx). A context whose
// kubeconfig entry is unusable (its cluster or user missing, a certificate
// file unreadable) gets a member whose Connect fails: exit 2 in its own
// entry, the others are checked. Connect runs the context's exec credential
// plugin (without the terminal: many run at once).
func (k kubeconfig) members(ctx context.Context, names []string) ([]run.Member, error) {
	members := make([]run.Member, 0, len(names))
	for _, name := range names {
		cfg, err := aside(k, ctx, func() (*rest.Config, error) { return flagsForContext(k.flags, name).ToRESTConfig() })
		var exit *ExitError
		if errors.As(err, &exit) {
			return nil, err
		}
		m := run.Member{Context: name}
		if err != nil {
			err := fmt.Errorf("kubeconfig context %s: %w", name, err)
			m.Connect = func(context.Context) (*rest.Config, checks.ClusterInfo, error) {
				return nil, checks.ClusterInfo{}, err
			}
		} else {
			m.Connect = func(ctx context.Context) (*rest.Config, checks.ClusterInfo, error) {
				authed, err := cluster.ResolveExecCredentials(ctx, cfg, false)
				if err != nil {
					authed = cluster.FailingConfig(cfg, err)
				}
				return authed, checks.ClusterInfo{Server: authed.Host}, nil
			}
		}
		members = append(members, m)
	}
	return members, nil
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
