// Package versionof reads the versions that programs and API servers
// report: the output of `helm version --short` (Helm 2, 3 and 4 alike) and
// an API server's /version. Its input is whatever a program on the user's
// PATH prints or a cluster answers; it never panics on any of it (its fuzz
// targets hold that).
package versionof

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/version"
)

// ErrNoVersion is HelmOutput's error for output that holds no version.
var ErrNoVersion = errors.New("no version in the output")

// helmPattern finds the first vMAJOR.MINOR[.PATCH][-PRE][+BUILD] in the
// output (Helm 2's "Client: v2.16.1+g…" and "version.BuildInfo{Version:"v3…"
// included).
var helmPattern = regexp.MustCompile(`(?:^|[^0-9A-Za-z.])v(\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)`)

// HelmOutput returns the version in the output of `helm version --short`:
// raw as printed, without its leading v ("3.22.0+gabc1234"), and parsed by
// Masterminds semver. It reads every form Helm prints: releases
// "v3.22.0+gabc1234" and "v4.3.1+g…", a Helm built from source without
// version ldflags "v4.3" or "v3.22" (a missing patch is 0), pre-releases
// "v4.0.0-rc.1", Helm 2's "Client: v2.16.1+g…", and
// "version.BuildInfo{Version:"v3.7.2"…}". Output with no version returns
// ErrNoVersion; a version semver refuses returns its error with raw set.
func HelmOutput(out []byte) (raw string, v *semver.Version, err error) {
	m := helmPattern.FindSubmatch(out)
	if m == nil {
		return "", nil, ErrNoVersion
	}
	raw = string(m[1])
	v, err = semver.NewVersion(raw)
	if err != nil {
		return raw, nil, err
	}
	return raw, v, nil
}

// Server returns the release (major.minor.patch) of an API server's
// /version. Vendor suffixes parse but are dropped: "v1.29.3-eks-4f4795d",
// "v1.28.5-gke.1217000" and "v1.30.2+k3s1" are 1.29.3, 1.28.5 and 1.30.2 (a
// vendor suffix is not a pre-release, so comparing it as one would put EKS
// 1.29.3 below 1.29.3). When gitVersion does not parse, the major and minor
// fields are used ("1", "28+"); when neither does, the error names all three.
func Server(info *version.Info) (*semver.Version, error) {
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
