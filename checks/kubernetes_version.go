package checks

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/version"
)

// MinKubernetesVersion is the oldest supported API server: "Server version
// 1.23 or higher" (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Minimum system requirements").
const MinKubernetesVersion = "1.23.0"

// KubernetesVersion passes when the API server is 1.23.0 or newer.
func KubernetesVersion() Check {
	return Check{
		Meta: Meta{
			ID:       "kubernetes-version",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryCluster,
			Modes:    ModePre | ModeUpgrade,
			Title:    "Kubernetes version is 1.23 or newer",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
		},
		Run: runKubernetesVersion,
	}
}

func runKubernetesVersion(_ context.Context, env *Env) (Result, error) {
	info, err := env.Cluster.ServerVersion()
	if err != nil {
		return Result{}, err
	}
	v, err := ServerSemver(info)
	if err != nil {
		return Result{}, err
	}
	minimum := semver.MustParse(MinKubernetesVersion)
	if v.LessThan(minimum) {
		return Fail("server version %s is older than %s", info.GitVersion, MinKubernetesVersion).
			WithHint("upgrade the cluster to Kubernetes 1.23 or newer before installing the GitOps Runtime"), nil
	}
	return Pass("server version %s", info.GitVersion), nil
}

// ServerSemver returns the release (major.minor.patch) of an API server's
// /version. Vendor suffixes parse but are dropped: "v1.29.3-eks-4f4795d",
// "v1.28.5-gke.1217000" and "v1.30.2+k3s1" are 1.29.3, 1.28.5 and 1.30.2 (a
// vendor suffix is not a pre-release, so comparing it as one would put EKS
// 1.29.3 below 1.29.3). When gitVersion does not parse, the major and minor
// fields are used ("1", "28+").
func ServerSemver(info *version.Info) (*semver.Version, error) {
	if v, err := semver.NewVersion(info.GitVersion); err == nil {
		return semver.New(v.Major(), v.Minor(), v.Patch(), "", ""), nil
	}
	major, errMajor := strconv.ParseUint(strings.TrimRight(info.Major, "+"), 10, 64)
	minor, errMinor := strconv.ParseUint(strings.TrimRight(info.Minor, "+"), 10, 64)
	if errMajor != nil || errMinor != nil {
		return nil, fmt.Errorf("cannot parse server version %q (major %q, minor %q)", info.GitVersion, info.Major, info.Minor)
	}
	return semver.New(major, minor, 0, "", ""), nil
}
