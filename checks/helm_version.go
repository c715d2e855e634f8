package checks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/versionof"
)

// MinHelmVersion is the oldest Helm client the chart supports: "Helm
// 3.11.0+" (the chart's README, "Prerequisites", charts 0.26 to 0.30:
// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/README.md#prerequisites),
// above the docs' "Helm 3.8.0 or higher"
// (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Minimum system requirements").
const MinHelmVersion = plan.MinHelmVersion

// helmFloorSource names where MinHelmVersion comes from, for messages.
var helmFloorSource = "the gitops-runtime chart's README, \"Prerequisites\": Helm " + MinHelmVersion + "+ (chart " + plan.DefaultsChartVersion + ")"

// HelmVersion passes when the Helm client ($HELM_BIN, which Helm sets for its
// plugins, else helm on PATH) is 3.11.0 or newer, the chart's documented
// minimum; warns when there is none; fails when it is older. It reads every form `helm version --short` prints
// (versionof.HelmOutput); the comparison is Masterminds semver's (a
// pre-release sorts before its release).
func HelmVersion() Check {
	return Check{
		Meta: Meta{
			ID:       "helm-version",
			Impact:   ImpactInstallFails,
			Category: CategoryTools,
			Modes:    ModePre | ModeUpgrade,
			Title:    "Helm client is " + MinHelmVersion + " or newer",
			Severity: SeverityFail,
			Offline:  true,
		},
		Run: runHelmVersion,
	}
}

func runHelmVersion(ctx context.Context, env *Env) (Result, error) {
	h, r, err := findHelm(ctx, env)
	if err != nil {
		return Result{}, err
	}
	if r != nil {
		return *r, nil
	}
	if h.Version.LessThan(semver.MustParse(MinHelmVersion)) {
		return Fail("helm v%s (%s) is older than %s (%s)", h.Raw, h.Bin, MinHelmVersion, helmFloorSource).
			WithHint("upgrade Helm: https://helm.sh/docs/intro/install/"), nil
	}
	return Pass("helm v%s (%s); at least %s, the chart's minimum", h.Raw, h.Bin, MinHelmVersion), nil
}

// helmClient is the Helm client the user will run: its path, where it was
// found ($HELM_BIN or PATH) and its version.
type helmClient struct {
	Bin, Source, Raw string
	Version          *semver.Version
}

// findHelm finds the Helm client ($HELM_BIN, which Helm sets for its
// plugins, else helm on PATH) and runs `helm version --short`. When it
// cannot, the result says why (r is then non-nil, with err nil), or err is
// set when the output holds no version.
func findHelm(ctx context.Context, env *Env) (h helmClient, r *Result, err error) {
	bin := env.Getenv("HELM_BIN")
	source := "$HELM_BIN"
	if bin == "" {
		p, err := env.LookPath("helm")
		if err != nil {
			w := Warn("no helm client found (HELM_BIN unset, helm not on PATH)").
				WithHint("install Helm " + MinHelmVersion + " or newer: https://helm.sh/docs/intro/install/")
			return h, &w, nil
		}
		bin, source = p, "PATH"
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := env.Command(cctx, bin, "version", "--short")
	if err != nil {
		f := Fail("%s (from %s) did not report its version: %v", bin, source, err).
			WithHint(fmt.Sprintf("run `%s version` and install Helm %s or newer if it fails", bin, MinHelmVersion))
		return h, &f, nil
	}
	raw, v, err := versionof.HelmOutput(out)
	if errors.Is(err, versionof.ErrNoVersion) {
		return h, nil, fmt.Errorf("cannot find a version in the output of %s version --short: %q", bin, firstLine(string(out)))
	}
	if err != nil {
		return h, nil, fmt.Errorf("parsing helm version %q: %w", raw, err)
	}
	return helmClient{Bin: bin, Source: source, Raw: raw, Version: v}, nil, nil
}
