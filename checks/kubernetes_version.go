package checks

import (
	"context"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/versionof"
)

// MinKubernetesVersion is the oldest supported API server: "Server version
// 1.23 or higher" (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Minimum system requirements").
const MinKubernetesVersion = "1.23.0"

// KubernetesVersion passes when the API server is 1.23.0 or newer (the
// docs' minimum) and meets the kubeVersion (Chart.yaml) of the chart being
// installed and of every subchart it deploys, each judged as Helm judges the
// root chart's (chartutil.IsCompatibleRange over the server's gitVersion).
// Below the docs' minimum: fail. The chart's own kubeVersion not met: fail,
// impact install-fails (Helm refuses the install: "chart requires
// kubeVersion"). A subchart's not met: warn naming it, impact runtime-breaks:
// Helm does not check a subchart's kubeVersion, so the install goes
// through and, e.g., Argo CD 3.x (argo-cd subchart, ">=1.25.0-0" in charts
// 0.26 and later) runs on a cluster it does not support. Without a rendered
// chart the rule of chart 0.30.0's Argo CD subchart applies, and the message
// says why.
func KubernetesVersion() Check {
	return Check{
		Meta: Meta{
			ID:         "kubernetes-version",
			Impact:     ImpactRuntimeBreaks,
			Category:   CategoryCluster,
			Modes:      ModePre | ModeUpgrade,
			Title:      "Kubernetes version is 1.23 or newer and meets the chart's and its subcharts' kubeVersion",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
			ReadsChart: true,
		},
		Run: runKubernetesVersion,
	}
}

func runKubernetesVersion(ctx context.Context, env *Env) (Result, error) {
	info, err := env.Cluster.ServerVersion()
	if err != nil {
		return Result{}, err
	}
	v, err := versionof.Server(info)
	if err != nil {
		return Result{}, err
	}
	minimum := semver.MustParse(MinKubernetesVersion)
	if v.LessThan(minimum) {
		return Fail("server version %s is older than %s", info.GitVersion, MinKubernetesVersion).
			WithHint("upgrade the cluster to Kubernetes 1.23 or newer before installing the GitOps Runtime"), nil
	}
	rules, from, err := kubeVersionRules(ctx, env)
	if err != nil {
		return Result{}, err
	}
	var met, subUnmet []string
	for _, r := range rules {
		desc := fmt.Sprintf("%s %s (kubeVersion %q)", r.Chart, r.Version, r.Constraint)
		if r.Version == "" {
			desc = fmt.Sprintf("%s (kubeVersion %q)", r.Chart, r.Constraint)
		}
		switch {
		case r.Allows(info.GitVersion):
			met = append(met, desc)
		case r.Root:
			return Fail("server version %s does not meet the kubeVersion of %s: Helm refuses the install (\"chart requires kubeVersion\")", info.GitVersion, desc).
				WithHint("upgrade the cluster, or install a chart version whose kubeVersion your cluster meets").
				WithEffect(ImpactInstallFails), nil
		default:
			subUnmet = append(subUnmet, desc)
		}
	}
	if len(subUnmet) > 0 {
		return Warn("server version %s does not meet the kubeVersion of subchart %s (%s): Helm does not check a subchart's kubeVersion, so the install goes through and the subchart runs on a Kubernetes it does not support",
			info.GitVersion, strings.Join(subUnmet, ", subchart "), from).
			WithHint("upgrade the cluster to a version every subchart supports before installing"), nil
	}
	msg := fmt.Sprintf("server version %s (at least %s", info.GitVersion, MinKubernetesVersion)
	if len(met) > 0 {
		msg += "; meets " + strings.Join(met, ", ")
	}
	return Pass("%s; %s)", msg, from), nil
}

// kubeVersionRules returns the kubeVersion rules of the install and where
// they come from: the rendered chart's (subcharts Helm deploys with these
// values); when it did not render, the loaded chart's and every
// dependency's; without a chart, chart 0.30.0's Argo CD subchart unless Argo
// CD is already installed (--existing-argocd).
func kubeVersionRules(ctx context.Context, env *Env) ([]chart.KubeVersionRule, string, error) {
	c, err := readChartRules(ctx, env)
	if err != nil {
		return nil, "", err
	}
	if c.R != nil {
		return c.R.KubeVersions, "rules of " + c.chartName() + " and the subcharts it deploys with these values", nil
	}
	if env.Chart != nil {
		if declared, err := env.Chart.DeclaredKubeVersions(ctx); err == nil {
			if md, err := env.Chart.Metadata(ctx); err == nil {
				return declared, fmt.Sprintf("%s: rules of chart %s %s and every dependency, enabled or not", c.Missing, md.Name, md.Version), nil
			}
		}
	}
	note := c.defaultsNote()
	if env.Inputs.ExistingArgoCD {
		return nil, note + " (its Argo CD subchart is not deployed with --existing-argocd)", nil
	}
	return []chart.KubeVersionRule{{Chart: plan.DefaultArgoCDSubchart, Constraint: plan.DefaultArgoCDKubeVersion}}, note, nil
}
