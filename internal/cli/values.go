package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// completeValues merges -f/--set with Helm's semantics, applies the
// shortcut flags over them, derives the planned access mode as the chart
// does (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl#L336-L369) and builds the network prober. Every error is a
// one-line usage error (exit 2), before anything touches the cluster.
func (o *Options) completeValues(ctx context.Context, ns string, namespaceChanged bool, crds string) error {
	in, err := plan.New(plan.Flags{
		RuntimeName:       o.RuntimeName,
		Namespace:         ns,
		NamespaceExplicit: namespaceChanged,
		ReleaseName:       o.ReleaseName,
		Chart:             o.Chart,
		ChartVersion:      o.ChartVersion,
		ValueFiles:        o.ValueFiles,
		SetValues:         o.SetValues,
		SetStringValues:   o.SetStringValues,
		Ctx:               ctx,
		Stdin:             o.Streams.In,
		Shortcuts: plan.Shortcuts{
			AccessMode:            o.AccessMode,
			IngressHost:           o.IngressHost,
			IngressClass:          o.IngressClass,
			IngressURL:            o.IngressURL,
			ExistingArgoCD:        o.ExistingArgoCD,
			SkipIngressValidation: o.SkipIngressValidation,
		},
	})
	if err != nil {
		if i := run.Interruption(ctx); i != nil {
			return &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("%w while reading values; nothing checked", i)}
		}
		return usageError("%v", err)
	}
	in.ArgoCDVersionRange = o.ArgoCDVersionRange
	o.config.HelmMajor = o.HelmMajor
	o.config.Fix.Options = checks.FixOptions{CRDs: crds, TLSSecret: o.TLSSecret}
	o.config.Inputs = in
	if _, err := semver.NewConstraint(o.ArgoCDVersionRange); o.ArgoCDVersionRange != "" && err != nil {
		return usageError("--argocd-version-range %q: %v", o.ArgoCDVersionRange, err)
	}

	var rules []probe.ConnectTo
	for _, s := range o.ConnectTo {
		r, err := probe.ParseConnectTo(s)
		if err != nil {
			return usageError("%v", err)
		}
		rules = append(rules, r)
	}
	timeout, err := o.requestTimeout()
	if err != nil {
		return err
	}
	o.config.Prober, err = probe.New(timeout, rules, o.CAFile)
	if err != nil {
		return usageError("%v", err)
	}
	o.completeChart(timeout)
	return nil
}

// requestTimeout reads kubectl's --request-timeout ("0" = none: the probes
// then use probe.DefaultTimeout; a bare number is seconds, as in kubectl).
func (o *Options) requestTimeout() (time.Duration, error) {
	if o.ConfigFlags.Timeout == nil || *o.ConfigFlags.Timeout == "" || *o.ConfigFlags.Timeout == "0" {
		return probe.DefaultTimeout, nil
	}
	s := *o.ConfigFlags.Timeout
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, usageError("--request-timeout %q: want a duration such as 10s", s)
	}
	return d, nil
}
