package checks

// Helpers of the checks that ask the helm client: where it is, and its
// major version.

import (
	"context"
	"fmt"
	"time"

	"github.com/Masterminds/semver/v3"
)

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
	m := helmVersionPattern.FindSubmatch(out)
	if m == nil {
		return h, nil, fmt.Errorf("cannot find a version in the output of %s version --short: %q", bin, firstLine(string(out)))
	}
	v, err := semver.NewVersion(string(m[1]))
	if err != nil {
		return h, nil, fmt.Errorf("parsing helm version %q: %w", m[1], err)
	}
	return helmClient{Bin: bin, Source: source, Raw: string(m[1]), Version: v}, nil, nil
}

// helmMajor is the major version of the Helm that will run (--helm-major,
// else the client helm-version finds: $HELM_BIN, else PATH; Helm 3 when
// none is found) and where that came from, for messages.
func helmMajor(ctx context.Context, env *Env) (int, string) {
	if env.HelmMajor != 0 {
		return env.HelmMajor, "--helm-major"
	}
	if h, r, err := findHelm(ctx, env); err == nil && r == nil {
		return int(h.Version.Major()), fmt.Sprintf("helm v%s, %s", h.Raw, h.Source)
	}
	return 3, "no helm client found: Helm 3 assumed"
}
