package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// requestTimeoutUsage is --request-timeout's help: what the code does
// (cluster.NewClients, connectionFlags.requestTimeout).
var requestTimeoutUsage = fmt.Sprintf("bound on each API request and each network probe, e.g. 20s (unset or 0: %s per API request, %s per probe)",
	cluster.DefaultRequestTimeout, probe.DefaultTimeout)

// connectionFlags reach the cluster and the network: kubectl's connection
// flags (cli-runtime's ConfigFlags, with Helm's choices as their defaults
// under Helm) and the network probes' --connect-to and --ca-file.
type connectionFlags struct {
	kube   *genericclioptions.ConfigFlags
	getenv func(string) string
	// helm is the environment Helm gives its plugins (applyHelmEnv).
	helm      helmEnv
	connectTo []string
	caFile    string
	fs        *pflag.FlagSet
}

func newConnectionFlags(getenv func(string) string) *connectionFlags {
	c := &connectionFlags{kube: genericclioptions.NewConfigFlags(true), getenv: getenv}
	c.helm = applyHelmEnv(c.kube, getenv)
	return c
}

// AddFlags declares kubectl's connection flags and the probes' on fs.
func (f *connectionFlags) AddFlags(fs *pflag.FlagSet) {
	f.fs = fs
	kube := pflag.NewFlagSet("kubectl", pflag.ContinueOnError)
	f.kube.AddFlags(kube)
	kube.VisitAll(func(fl *pflag.Flag) {
		fs.AddFlag(fl)
		switch fl.Name {
		case "namespace":
			describe(fs, fl.Name, placement{sectionRun, 3}, recorded)
		case "request-timeout":
			describe(fs, fl.Name, placement{sectionConnection, 0}, recorded)
		default:
			describe(fs, fl.Name, placement{sectionConnection, 0}, notRecorded("a replay reads no kubeconfig: it answers from the bundle"))
		}
	})
	fs.StringArrayVar(&f.connectTo, "connect-to", nil, "probe ADDR:PORT when asked for HOST:PORT, keeping SNI and Host (HOST:PORT:ADDR:PORT, repeatable, as curl)")
	describe(fs, "connect-to", placement{sectionConnection, 0}, recorded)
	fs.StringVar(&f.caFile, "ca-file", "", "PEM file of extra CA certificates trusted by the TLS probes")
	describe(fs, "ca-file", placement{sectionConnection, 0}, notRecorded("a replay dials nothing: it answers the probes from the bundle"))

	// --request-timeout's help comes from cli-runtime ("zero means don't
	// timeout"); 0 and unset mean the plugin's own bounds instead.
	if fl := fs.Lookup("request-timeout"); fl != nil {
		fl.DefValue = ""
		fl.Usage = requestTimeoutUsage
	}
	// -n's help comes from cli-runtime; say what it means here, with the
	// one default that applies: the chart's namespace for kubectl; under
	// Helm, Helm's namespace (HELM_NAMESPACE, already the flag's default
	// value, which cobra prints).
	if fl := fs.Lookup("namespace"); fl != nil {
		if f.helm.Active && fl.DefValue != "" {
			fl.Usage = "runtime namespace (Helm's: helm -n, else the kubeconfig context's)"
		} else {
			fl.DefValue = ""
			fl.Usage = "runtime namespace (default \"" + checks.DefaultNamespace + "\", not the kubeconfig's namespace)"
		}
	}
	// --cache-dir's default is cli-runtime's, under the home directory: say
	// it the way the help should read on every machine.
	if fl := fs.Lookup("cache-dir"); fl != nil {
		if home, err := os.UserHomeDir(); err == nil && home != "" && strings.HasPrefix(fl.DefValue, home+string(os.PathSeparator)) {
			fl.DefValue = "~" + strings.TrimPrefix(fl.DefValue, home)
		}
	}
}

// namespace is the runtime namespace and whether the user chose it: -n, or
// under Helm the namespace Helm chose (HELM_NAMESPACE); else the chart's
// default.
func (f *connectionFlags) namespace() (string, bool) {
	explicit := f.helm.Namespace != "" || (f.fs != nil && f.fs.Changed("namespace"))
	if explicit && f.kube.Namespace != nil && *f.kube.Namespace != "" {
		return *f.kube.Namespace, true
	}
	return checks.DefaultNamespace, explicit
}

// requestTimeout reads kubectl's --request-timeout: the probes' bound, and
// whether it was given ("0" is not: the probes then use
// probe.DefaultTimeout; a bare number is seconds, as in kubectl).
func (f *connectionFlags) requestTimeout() (time.Duration, bool, error) {
	if f.kube.Timeout == nil || *f.kube.Timeout == "" || *f.kube.Timeout == "0" {
		return probe.DefaultTimeout, false, nil
	}
	s := *f.kube.Timeout
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second, true, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false, usageError("--request-timeout %q: want a duration such as 10s", s)
	}
	return d, true, nil
}

// Validate checks nothing before the values are read (the probe flags are
// compiled after them, as they always were).
func (f *connectionFlags) Validate() error { return nil }

// ToConfig compiles the probes' settings (run.Config.Probes: the
// --connect-to rules, --request-timeout when given) and the network prober
// of them, trusting the --ca-file roots too.
func (f *connectionFlags) ToConfig(_ context.Context, c *run.Config) error {
	for _, s := range f.connectTo {
		r, err := probe.ParseConnectTo(s)
		if err != nil {
			return usageError("%v", err)
		}
		c.Probes.ConnectTo = append(c.Probes.ConnectTo, r)
	}
	timeout, given, err := f.requestTimeout()
	if err != nil {
		return err
	}
	if given {
		c.Probes.RequestTimeout = run.Duration(timeout)
	}
	if c.Probe, err = c.Probes.Prober(f.caFile); err != nil {
		return usageError("%v", err)
	}
	return nil
}
